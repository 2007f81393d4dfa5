//! The spider of Pan & Manocha, Section 6.2, shared by `examples/pbad_spider.rs` and
//! `tests/suite/pbad.rs`: its periodic trot and the deepest penetration of its contact points.

use diffmj::model::Model;
use diffmj::pbad::chain::{kinematics, Chain, Frames};
use diffmj::pbad::contact::{depth, point_world};

/// Gait frequency (Hz), yaw amplitude (rad) and lift amplitude (rad).
const FREQUENCY: f64 = 1.0;
const SWEEP: f64 = 0.35;
const LIFT: f64 = 0.35;

/// The periodic controller: servo targets of the 12 actuators (yaw, lift, knee per leg, legs
/// at 45°, 135°, 225°, 315°) at time `t`; `amp` scales the gait (0: stand still), ramped up
/// over the first second.
pub fn trot(t: f64, amp: f64) -> [f64; 12] {
    let a = amp * t.min(1.0);
    let mut u = [0.0; 12];
    for l in 0..4 {
        let alpha = (45.0 + 90.0 * l as f64).to_radians();
        // diagonal pairs (0, 2) and (1, 3) half a period apart
        let phi = if l % 2 == 0 {
            0.0
        } else {
            std::f64::consts::PI
        };
        let s = 2.0 * std::f64::consts::PI * FREQUENCY * t + phi;
        let lift = LIFT * (-s.sin()).max(0.0);
        u[3 * l] = -a * SWEEP * s.cos() * alpha.sin().signum();
        u[3 * l + 1] = -a * lift;
        u[3 * l + 2] = a * lift;
    }
    u
}

/// The deepest penetration of a contact point into the floor at configuration `qpos`, with the
/// contact points of `c` and the frames `f` (overwritten).
pub fn deepest(m: &Model<f64>, c: &Chain<f64>, f: &mut Frames<f64>, qpos: &[f64]) -> f64 {
    kinematics(m, c, qpos, f);
    let mut worst: f64 = 0.0;
    for &(p, pl) in &c.contact.pairs {
        let pt = &c.contact.points[p];
        let x = point_world(f, pt.body, &pt.local);
        worst = worst.max(depth(&c.contact.planes[pl], &x, pt.radius));
    }
    worst
}
