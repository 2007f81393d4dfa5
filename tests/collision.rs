//! Narrow-phase collision against MuJoCo 4.0 (the oracle): every `tests/golden/collision/collision_*.json`
//! written by `tests/golden/generate_collision.py` is replayed without Python.
//!
//! For each model and pose: diffmj's MJCF loader and kinematics give `geom_xpos`/`geom_xmat`
//! (checked against MuJoCo's within 1e-12); the collider is then fed MuJoCo's poses bit for bit
//! (serde_json's `float_roundtrip` parses the golden decimals exactly, so that exactly touching and tied degenerate poses take the same branches), and
//! `collide_pair` on the two geoms must return
//! the same contacts as MuJoCo's `mj_collision`, in the same order: same count, same geom
//! order, `dist`, `pos` and all nine `frame` entries within [`TOL_ANALYTIC`] for analytic pairs
//! and [`TOL_CONVEX`] for pairs of the general convex routine.
//!
//! Degenerate poses that the generator flags as ties (MuJoCo's contacts jump under a 1e-9
//! perturbation, so the branch taken is decided by rounding) are compared too, but their
//! mismatches are only counted (`ties` column: mismatching/total); worst errors are over the
//! other poses.
//!
//! Two exceptions to "MuJoCo's contacts, in MuJoCo's order", both counted in their own column:
//! - `swap` (SEGMENT_ORDER): two contacts of the convex routine may come in the other order.
//!   They are the two ends of a segment (a capsule's, a cylinder's side line, a box edge)
//!   clipped against a face; MuJoCo's clipping leaves each end twice, as two near-duplicates,
//!   and picks the farthest-apart pair among distances equal to rounding, so its order is
//!   decided by the last bits (or, for a cylinder's side line, by the order of its EPA
//!   polytope's vertices).
//! - `ref` (REFERENCE): where MuJoCo's convex routine is demonstrably off, the generator recorded
//!   the exact contacts next to MuJoCo's (computed without GJK/EPA, from the minimum of the
//!   support-function gap over directions; see the generator): MuJoCo's normal is off by up to
//!   ~2e-4 at depths of ~1e-7 (EPA stops on the depth, which is exact), and the side line of a
//!   cylinder in its multi-contact goes through an EPA vertex off the exact azimuth, which
//!   moves the contacts' depths by up to ~5e-7. Those poses are compared with the exact contacts.
//!
//! ITERATION_LIMIT: `collision_deep.json` (`tests/golden/generate_collision_deep.py`) holds deep
//! overlaps of the convex pairs at MuJoCo's default `ccd_iterations` (35) and `ccd_tolerance`
//! 1e-12, where MuJoCo's EPA often stops at its iteration limit (the generator flags those poses
//! `ccd_limit`): MuJoCo's answer is then its unconverged iterate (the nearest face of its last
//! polytope), up to ~1e-3 short of the depth with a normal off by up to ~0.2 there. diffmj's EPA
//! answers with its own last face too and takes MuJoCo's steps as long as the two polytopes agree;
//! they are built with different arithmetic (and diffmj's first tetrahedron comes from its own
//! GJK), so a nearly tied choice between two faces late in the run can go the other way, and the
//! two runs then stop on different unconverged iterates. Such poses are compared, and a mismatch
//! within [`TOL_LIMIT`] and [`TOL_LIMIT_DIR`] is only counted (`limit` column:
//! mismatching/total); worst errors are over the other poses.
//!
//! Poses that are known not to match are listed in [`KNOWN_GAPS`] with the reason; they are
//! reported, not hidden: a listed gap that no longer fails fails the test.
//!
//! Debugging aids (environment variables): `COLLISION_VERBOSE=<substring>` prints every failure
//! (and every swapped pair of contacts) of the matching files, `COLLISION_DUMP=<folder>` writes
//! our contacts of every pose there.

use diffmj::collision::{collide_pair, pair_method, Contact, PairMethod, MAX_CONTACT_PAIR};
use diffmj::engine::kinematics::kinematics;
use diffmj::{mjcf, Data};
#[path = "suite/common/mod.rs"]
mod common;

use common::{max_abs_diff, nums, read_json, root};
use std::path::PathBuf;

/// Analytic pairs: same formulas as MuJoCo, only rounding differs.
const TOL_ANALYTIC: f64 = 1e-9;
/// Pairs of the general convex routine, run by MuJoCo at ccd_tolerance 1e-15 (see the
/// generator). MuJoCo's EPA stops when the depth is within the tolerance, so its depth is
/// accurate to ~1e-15 (first-order stationary) but its normal only to ~√1e-15 and its witness
/// points to that times the curvature radius; ours are refined to rounding. Hence: dist within
/// 1e-9, pos and frame within 1e-5 (which also covers the side line of a cylinder in a
/// multi-contact, placed by MuJoCo at an EPA vertex's azimuth).
const TOL_CONVEX: f64 = 1e-9;
const TOL_CONVEX_DIR: f64 = 1e-5;
/// Poses where MuJoCo's EPA stopped at its iteration limit (ITERATION_LIMIT): diffmj's EPA,
/// whose polytope may not be MuJoCo's, then stops on another unconverged iterate: measured on
/// `collision_deep.json`, 126 of 131 such poses agree within [`TOL_CONVEX`] and
/// [`TOL_CONVEX_DIR`], the other five within 3.8e-8 in depth (a cylinder side line clipped on
/// a box face), 2.4e-5 in position (along a capsule's straight side, where the witness is not
/// unique) and 2.8e-4 in the normal. A mismatch within these bounds is only counted.
const TOL_LIMIT: f64 = 1e-7;
const TOL_LIMIT_DIR: f64 = 1e-3;
/// Kinematics inputs (geom poses) must agree to rounding.
const TOL_POSE: f64 = 1e-12;

/// Poses known not to match MuJoCo, with the reason: `(golden file stem, Some((model, pose)))`
/// for one pose, `None` for the whole file. They are reported, not hidden: a listed gap that no
/// longer fails fails the test.
const KNOWN_GAPS: &[KnownGap] = &[
    (
        "collision_deep",
        Some((5, 1)),
        "MuJoCo's EPA converges in 33 steps; diffmj's, whose polytope parts from MuJoCo's at \
         step 26 (ITERATION_LIMIT), needs 36 and stops at the limit (35) on an unconverged \
         iterate: its witness on the capsule's straight side 1.1e-5 off",
    ),
    (
        "collision_deep",
        Some((7, 1)),
        "MuJoCo's EPA converges in 31 steps; diffmj's, whose polytope parts from MuJoCo's at \
         step 22 (ITERATION_LIMIT), needs 36 and stops at the limit (35) on an unconverged \
         iterate: its witness on the capsule's straight side 4e-5 off",
    ),
    (
        "collision_cylinder_cylinder",
        Some((2, 86)),
        "MuJoCo is off: its two coincident contacts lie 2.6e-9 deeper and 1.9e-7 away from \
     its own clipping evaluated at the exact normal (found by fuzzing; ours match that to \
     7e-13); the generator's side-line reference does not cover this clipped case",
    ),
];

/// `(golden file stem, Some((model, pose)) or None, reason)`.
type KnownGap = (&'static str, Option<(usize, usize)>, &'static str);

fn golden_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("tests/golden/collision"))
        .expect("tests/golden exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("collision_"))
        })
        .collect();
    v.sort();
    v
}

/// Worst errors of one golden file.
#[derive(Default, Debug)]
struct Worst {
    poses: usize,
    contacts: usize,
    dist: f64,
    pos: f64,
    frame: f64,
    pose: f64,
    /// `(model, pose, message)`
    failures: Vec<(usize, usize, String)>,
    /// Degenerate poses whose branch MuJoCo decides by rounding (flagged `tie` by the
    /// generator): compared, but a mismatch is only counted.
    ties: usize,
    tie_mismatches: usize,
    /// Two-contact results of the convex routine that match MuJoCo's in the other order.
    swapped: usize,
    /// Poses where MuJoCo's EPA stopped at its iteration limit (ITERATION_LIMIT), and those of
    /// them that differ from MuJoCo's within [`TOL_LIMIT`], [`TOL_LIMIT_DIR`] only.
    limits: usize,
    limit_mismatches: usize,
    /// Poses compared with the exact contacts instead of MuJoCo's (see REFERENCE).
    references: usize,
}

fn check_file(path: &std::path::Path) -> (String, Worst, f64) {
    let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
    let j = read_json(path);
    let mut w = Worst::default();
    // COLLISION_DUMP=<folder> writes our contacts of every pose to <folder>/<stem>.txt
    let mut dump = std::env::var("COLLISION_DUMP")
        .ok()
        .map(|dir| std::fs::File::create(PathBuf::from(dir).join(format!("{stem}.txt"))).unwrap());
    let mut tol = TOL_ANALYTIC;
    let mut tol_dir = TOL_ANALYTIC;
    for (mi, model) in j["models"].as_array().unwrap().iter().enumerate() {
        let xml = model["xml"].as_str().unwrap();
        let m = mjcf::load_str(xml).unwrap_or_else(|e| panic!("{stem} model {mi}: {e}"));
        let method = pair_method(m.geom_type[0], m.geom_type[1]);
        let convex = method == PairMethod::Convex;
        if convex {
            tol = TOL_CONVEX;
            tol_dir = TOL_CONVEX_DIR;
        }
        // MuJoCo 4.0 uses the sum of the two geom margins for a pair
        let margin = m.geom_margin[0] + m.geom_margin[1];
        let mut d = Data::new(&m);
        for (pi, pose) in model["poses"].as_array().unwrap().iter().enumerate() {
            let ctx = format!("{stem} model {mi} pose {pi} ({})", pose["kind"]);
            let mp = nums(&pose["mocap_pos"]);
            let mq = nums(&pose["mocap_quat"]);
            d.mocap_pos[0] = [mp[0], mp[1], mp[2]];
            d.mocap_quat[0] = [mq[0], mq[1], mq[2], mq[3]];
            d.qpos.copy_from_slice(&nums(&pose["qpos"]));
            kinematics(&m, &mut d);
            let gx = nums(&pose["geom_xpos"]);
            let gm = nums(&pose["geom_xmat"]);
            let ours: Vec<f64> = d.geom_xpos.iter().flatten().copied().collect();
            let oursm: Vec<f64> = d.geom_xmat.iter().flatten().copied().collect();
            let e = max_abs_diff(&ours, &gx).max(max_abs_diff(&oursm, &gm));
            w.pose = w.pose.max(e);
            if e > TOL_POSE {
                w.failures
                    .push((mi, pi, format!("{ctx}: geom pose differs by {e:.2e}")));
                continue;
            }
            w.poses += 1;
            let tie = pose["tie"].as_bool().unwrap_or(false);
            w.ties += tie as usize;
            let limit = pose["ccd_limit"].as_bool().unwrap_or(false);
            w.limits += limit as usize;
            let mut fails: Vec<String> = Vec::new();
            // the narrow phase is fed MuJoCo's own geom poses, bit for bit: exactly touching or
            // tied configurations (the degenerate poses) decide branches on the last bit
            for g in 0..2 {
                d.geom_xpos[g].copy_from_slice(&gx[3 * g..3 * g + 3]);
                d.geom_xmat[g].copy_from_slice(&gm[9 * g..9 * g + 9]);
            }
            let mut out = [Contact::<f64>::default(); MAX_CONTACT_PAIR];
            // where MuJoCo's convex routine is demonstrably off, the generator recorded the
            // exact contacts ("reference", see REFERENCE): those are compared
            let reference = pose.get("reference");
            w.references += reference.is_some() as usize;
            let cons = match reference {
                Some(r) => r["contacts"].as_array().unwrap(),
                None => pose["contacts"].as_array().unwrap(),
            };
            let result = collide_pair(&m, &d, 0, 1, margin, &mut out);
            if let (Some(dump), Ok(n)) = (dump.as_mut(), result) {
                use std::io::Write;
                let cs: Vec<String> = out[..n]
                    .iter()
                    .map(|c| format!("[{:e},{:?},{:?}]", c.dist, c.pos, c.frame))
                    .collect();
                writeln!(dump, "{mi} {pi} [{}]", cs.join(",")).unwrap();
            }
            match result {
                Err(e) => fails.push(format!("{ctx}: {e:?}")),
                Ok(n) if n != cons.len() => fails.push(format!(
                    "{ctx}: {n} contacts, MuJoCo {} (dists ours {:?}, MuJoCo {:?})",
                    cons.len(),
                    out[..n].iter().map(|c| c.dist).collect::<Vec<_>>(),
                    cons.iter()
                        .map(|c| c["dist"].as_f64().unwrap())
                        .collect::<Vec<_>>()
                )),
                Ok(n) => {
                    // compare our contact k with MuJoCo's contact order[k]
                    let compare = |order: &[usize]| {
                        let mut errs = [0.0f64; 3];
                        let mut msgs = Vec::new();
                        for (k, c) in out[..n].iter().enumerate() {
                            let r = &cons[order[k]];
                            let g = nums(&r["geom"]);
                            if c.geom != [g[0] as usize, g[1] as usize] {
                                msgs.push(format!(
                                    "{ctx} contact {k}: geom {:?}, MuJoCo {g:?}",
                                    c.geom
                                ));
                            }
                            let ed = (c.dist - r["dist"].as_f64().unwrap()).abs();
                            let ep = max_abs_diff(&c.pos, &nums(&r["pos"]));
                            let ef = max_abs_diff(&c.frame, &nums(&r["frame"]));
                            errs = [errs[0].max(ed), errs[1].max(ep), errs[2].max(ef)];
                            if ed.is_nan() || ed > tol || ep > tol_dir || ef > tol_dir {
                                msgs.push(format!(
                                    "{ctx} contact {k}: dist err {ed:.2e}, pos err {ep:.2e}, frame err {ef:.2e}\n   ours dist {} pos {:?} frame {:?}\n   MuJoCo {}",
                                    c.dist, c.pos, c.frame, r
                                ));
                            }
                        }
                        (errs, msgs)
                    };
                    let (mut errs, mut msgs) = compare(&[0, 1, 2, 3, 4, 5, 6, 7][..n.min(8)]);
                    // the two contacts of a clipped segment come in an order that MuJoCo decides
                    // by rounding (see SEGMENT_ORDER): either order is accepted, and counted
                    if !msgs.is_empty() && convex && n == 2 {
                        let (e2, m2) = compare(&[1, 0]);
                        if m2.is_empty() {
                            (errs, msgs) = (e2, m2);
                            w.swapped += 1;
                            if std::env::var("COLLISION_VERBOSE").is_ok_and(|v| stem.contains(&v)) {
                                println!("  {ctx}: two contacts in the other order");
                            }
                        }
                    }
                    // at MuJoCo's iteration limit, two unconverged iterates (see ITERATION_LIMIT)
                    let off_limit = limit
                        && !msgs.is_empty()
                        && errs[0] <= TOL_LIMIT
                        && errs[1].max(errs[2]) <= TOL_LIMIT_DIR;
                    if off_limit {
                        w.limit_mismatches += 1;
                        if std::env::var("COLLISION_VERBOSE").is_ok_and(|v| stem.contains(&v)) {
                            println!(
                                "  {ctx}: at MuJoCo's iteration limit: dist err {:.2e}, pos err \
                                 {:.2e}, frame err {:.2e}",
                                errs[0], errs[1], errs[2]
                            );
                        }
                        msgs.clear();
                    }
                    w.contacts += n;
                    if !tie && !off_limit {
                        w.dist = w.dist.max(errs[0]);
                        w.pos = w.pos.max(errs[1]);
                        w.frame = w.frame.max(errs[2]);
                    }
                    fails.extend(msgs);
                }
            }
            if tie {
                w.tie_mismatches += !fails.is_empty() as usize;
            } else {
                w.failures.extend(fails.into_iter().map(|f| (mi, pi, f)));
            }
        }
    }
    (stem, w, tol)
}

/// Every pair type against MuJoCo's golden contacts; prints the worst errors per pair.
#[test]
fn contacts_match_mujoco() {
    let files = golden_files();
    assert!(!files.is_empty(), "no collision golden files");
    let mut unexpected = Vec::new();
    let mut seen = vec![false; KNOWN_GAPS.len()];
    println!(
        "{:<32} {:>6} {:>8} {:>10} {:>10} {:>10} {:>7} {:>6} {:>9} {:>5} {:>4} {:>7}",
        "pair",
        "poses",
        "contacts",
        "dist",
        "pos",
        "frame",
        "tol",
        "fails",
        "ties",
        "swap",
        "ref",
        "limit"
    );
    for f in &files {
        let (stem, w, tol) = check_file(f);
        println!(
            "{:<32} {:>6} {:>8} {:>10.2e} {:>10.2e} {:>10.2e} {:>7.0e} {:>6} {:>4}/{:<4} {:>5} {:>4} {:>3}/{:<3}",
            stem,
            w.poses,
            w.contacts,
            w.dist,
            w.pos,
            w.frame,
            tol,
            w.failures.len(),
            w.tie_mismatches,
            w.ties,
            w.swapped,
            w.references,
            w.limit_mismatches,
            w.limits
        );
        // COLLISION_VERBOSE=<substring> prints every failure of the matching files
        let verbose = std::env::var("COLLISION_VERBOSE").is_ok_and(|v| stem.contains(&v));
        for (mi, pi, f) in w.failures {
            let gap = KNOWN_GAPS
                .iter()
                .position(|(s, at, _)| *s == stem && at.is_none_or(|a| a == (mi, pi)));
            match gap {
                Some(i) => {
                    if !seen[i] || verbose {
                        println!("  known gap ({}): {f}", KNOWN_GAPS[i].2);
                    }
                    seen[i] = true;
                }
                None => {
                    if verbose {
                        println!("  {f}");
                    }
                    unexpected.push(f);
                }
            }
        }
    }
    for (i, (s, at, _)) in KNOWN_GAPS.iter().enumerate() {
        if !seen[i] {
            unexpected.push(format!("known gap {s} {at:?} no longer fails: remove it"));
        }
    }
    assert!(
        unexpected.is_empty(),
        "{} mismatches:\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
}

/// Contacts of geoms 0 and 1 of `m` at `qpos` (mocap body at its golden pose).
fn contacts_at<T: diffmj::Scalar>(
    m: &diffmj::Model<T>,
    mocap: &[f64],
    qpos: &[T],
) -> (usize, [Contact<T>; MAX_CONTACT_PAIR]) {
    let mut d = Data::new(m);
    d.mocap_pos[0] = [T::c(mocap[0]), T::c(mocap[1]), T::c(mocap[2])];
    d.mocap_quat[0] = [
        T::c(mocap[3]),
        T::c(mocap[4]),
        T::c(mocap[5]),
        T::c(mocap[6]),
    ];
    d.qpos.copy_from_slice(qpos);
    kinematics(m, &mut d);
    let margin = m.geom_margin[0] + m.geom_margin[1];
    let mut out = [Contact::<T>::default(); MAX_CONTACT_PAIR];
    let n = collide_pair(m, &d, 0, 1, margin, &mut out).expect("supported pair");
    (n, out)
}

/// Derivatives through the whole narrow phase on `Dual64`: d(dist)/dq and d(pos)/dq of every
/// contact, for each of the 7 free-body coordinates, agree with central differences of the
/// `f64` path (step 1e-6, truncation ~1e-12, round-off ~1e-10) within 1e-6 for analytic pairs,
/// and (step 1e-4) within 1e-5 for convex pairs, on penetrating golden poses.
#[test]
fn contact_derivatives_match_finite_differences() {
    use num_dual::Dual64;
    let cases = [
        ("collision_plane_box", 0),
        ("collision_plane_capsule", 0),
        ("collision_sphere_box", 0),
        ("collision_capsule_capsule", 0),
        ("collision_capsule_box", 0),
        ("collision_box_box", 0),
        ("collision_sphere_cylinder", 0),
        ("collision_sphere_ellipsoid", 0),
        ("collision_ellipsoid_ellipsoid", 0),
    ];
    let mut worst = 0.0f64;
    for (stem, mi) in cases {
        // the convex routine is exact only to its Newton residual (~1e-13): a wider step keeps
        // the difference quotient's noise (~1e-13/H) below its truncation error (~H²)
        let convex = stem.contains("ellipsoid");
        let (h, tol) = if convex { (1e-4, 1e-5) } else { (1e-6, 1e-6) };
        let path = root().join(format!("tests/golden/collision/{stem}.json"));
        let j = read_json(&path);
        let model = &j["models"][mi];
        let m = mjcf::load_str(model["xml"].as_str().unwrap()).unwrap();
        let md = m.cast::<Dual64>();
        // the first generic penetrating pose ("scaled 0.6") with contacts
        let pose = model["poses"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["kind"] == "scaled 0.6" && !p["contacts"].as_array().unwrap().is_empty())
            .expect("a penetrating pose");
        let mocap: Vec<f64> = [nums(&pose["mocap_pos"]), nums(&pose["mocap_quat"])].concat();
        let q0 = nums(&pose["qpos"]);
        let (n0, _) = contacts_at(&m, &mocap, &q0);
        assert!(n0 > 0, "{stem}: no contact");
        for k in 0..7 {
            let qd: Vec<Dual64> = q0
                .iter()
                .enumerate()
                .map(|(i, &x)| Dual64::new(x, if i == k { 1.0 } else { 0.0 }))
                .collect();
            let (nd, cd) = contacts_at(&md, &mocap, &qd);
            let mut qp = q0.clone();
            qp[k] += h;
            let mut qm = q0.clone();
            qm[k] -= h;
            let (np, cp) = contacts_at(&m, &mocap, &qp);
            let (nm, cm) = contacts_at(&m, &mocap, &qm);
            assert!(
                nd == n0 && np == n0 && nm == n0,
                "{stem}: contact count changes"
            );
            for c in 0..n0 {
                let fd = |f: &dyn Fn(&Contact<f64>) -> f64| (f(&cp[c]) - f(&cm[c])) / (2.0 * h);
                let mut check = |what: &str, exact: f64, approx: f64| {
                    let e = (exact - approx).abs() / approx.abs().max(1.0);
                    worst = worst.max(e);
                    assert!(
                        e < tol,
                        "{stem} q[{k}] contact {c} {what}: dual {exact}, fd {approx}"
                    );
                };
                check("dist", cd[c].dist.eps, fd(&|x| x.dist));
                for a in 0..3 {
                    check("pos", cd[c].pos[a].eps, fd(&|x| x.pos[a]));
                    check("normal", cd[c].frame[a].eps, fd(&|x| x.frame[a]));
                }
                // the real part on duals is the f64 answer (to rounding: the convex routine's
                // Newton step runs a few operations in a different order on duals)
                let re = contacts_at(&m, &mocap, &q0).1[c].dist;
                assert!(
                    (cd[c].dist.re - re).abs() < 1e-13,
                    "{stem}: real part {} vs {re}",
                    cd[c].dist.re
                );
            }
        }
    }
    println!("worst derivative mismatch {worst:.2e}");
}

/// A global allocator that counts the allocations of the thread that switched it on.
struct Counting;
static ALLOCS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
thread_local! {
    static COUNTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
fn note_alloc() {
    if COUNTING.with(|c| c.get()) {
        ALLOCS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        note_alloc();
        unsafe { std::alloc::System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, n: usize) -> *mut u8 {
        note_alloc();
        unsafe { std::alloc::System.realloc(p, l, n) }
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

/// `collide_pair` on `f64` allocates nothing on the heap, for every pair type and every golden
/// pose (analytic pairs and the convex routine alike).
#[test]
fn collide_pair_does_not_allocate() {
    let mut calls = 0;
    for f in golden_files() {
        let j = read_json(&f);
        let model = &j["models"][0];
        let m = mjcf::load_str(model["xml"].as_str().unwrap()).unwrap();
        let mut d = Data::new(&m);
        let margin = m.geom_margin[0] + m.geom_margin[1];
        for pose in model["poses"].as_array().unwrap() {
            let (gx, gm) = (nums(&pose["geom_xpos"]), nums(&pose["geom_xmat"]));
            for g in 0..2 {
                d.geom_xpos[g].copy_from_slice(&gx[3 * g..3 * g + 3]);
                d.geom_xmat[g].copy_from_slice(&gm[9 * g..9 * g + 9]);
            }
            let mut out = [Contact::<f64>::default(); MAX_CONTACT_PAIR];
            let before = ALLOCS.load(std::sync::atomic::Ordering::SeqCst);
            COUNTING.with(|c| c.set(true));
            let r = collide_pair(&m, &d, 0, 1, margin, &mut out);
            COUNTING.with(|c| c.set(false));
            let after = ALLOCS.load(std::sync::atomic::Ordering::SeqCst);
            assert!(r.is_ok());
            assert_eq!(after, before, "{}: collide_pair allocated", f.display());
            calls += 1;
        }
    }
    assert!(calls > 1000);
}

/// Geom distances as MuJoCo's `mj_geomDistance` gives them (the distance, normal and fromto
/// sensors; `tests/golden/generate_geom_distance.py`): box–box, box–capsule, box–sphere,
/// cylinder–box and ellipsoid–box pairs at random poses, in both orders, apart and overlapping.
/// - Box–box (GJK/EPA witnesses, as MuJoCo's native CCD) and the pairs of collision functions:
///   the distance within 1e-12, the witness segment within 1e-9 where the nearest points are
///   unique (not for face-parallel boxes: any point of the common face region is nearest, and
///   the two GJK runs pick different ones).
/// - Cylinder–box and ellipsoid–box apart (GJK): the distance within 1e-10 and the segment
///   within 1e-7, MuJoCo's own precision at `ccd_tolerance` 1e-12 (diffmj refines the
///   witnesses to the exact ones).
/// - Cylinder–box and ellipsoid–box overlapping (EPA), against MuJoCo and against the exact
///   answer the generator found without GJK/EPA (`true_dist`, and `true_fromto` where a
///   witness is unique). Where MuJoCo's EPA converges, diffmj's answer is the exact one
///   (distance within 1e-12, segment within 1e-9), and MuJoCo's within its tolerance of it
///   (distance 5e-13, segment 1.5e-7 here). Where MuJoCo's EPA stops at its iteration limit
///   (`ccd_limit`: 10 of the 74 cases, up to 6.4e-8 short of the depth), MuJoCo's answer is
///   its unconverged iterate, which diffmj's EPA reproduces. So in every case: the distance
///   within 1e-10 of MuJoCo's, and the segment within 1e-9 of MuJoCo's plus MuJoCo's own
///   distance from the exact segment, where the exact witnesses are unique.
#[test]
fn geom_distance_as_mujoco() {
    use diffmj::model::GeomType;
    let g = read_json(&root().join("tests/golden/collision/geom_distance.json"));
    let m = mjcf::load_str(g["xml"].as_str().unwrap()).unwrap();
    let mut d = Data::new(&m);
    let mut out = vec![Contact::<f64>::default(); MAX_CONTACT_PAIR];
    // worst distance and segment errors: exact routes, convex apart, convex overlapping
    let mut worst = [[0.0f64; 2]; 3];
    let mut count = [0usize; 3];
    // convex overlapping: worst errors against the exact answer where MuJoCo converged, and
    // MuJoCo's own distance from the exact depth [converged, at the iteration limit]
    let mut exact = [0.0f64; 2];
    let mut mujoco = [0.0f64; 2];
    let mut limited = 0;
    let mut probs = Vec::new();
    for (k, c) in g["cases"].as_array().unwrap().iter().enumerate() {
        d.qpos.copy_from_slice(&nums(&c["qpos"]));
        kinematics(&m, &mut d);
        let (g1, g2) = (
            c["g1"].as_u64().unwrap() as usize,
            c["g2"].as_u64().unwrap() as usize,
        );
        let cutoff = c["cutoff"].as_f64().unwrap();
        let (dist, fromto) =
            diffmj::collision::geom_distance(&m, &d, g1, g2, cutoff, None, &mut out);
        let want = c["dist"].as_f64().unwrap();
        let want_ft = nums(&c["fromto"]);
        let convex = [g1, g2]
            .iter()
            .any(|&g| matches!(m.geom_type[g], GeomType::Cylinder | GeomType::Ellipsoid));
        let class = match (convex, want > 0.0) {
            (false, _) => 0,
            (true, true) => 1,
            (true, false) => 2,
        };
        count[class] += 1;
        let ed = (dist - want).abs();
        let mut ef = if c["aligned"].as_bool().unwrap() {
            0.0
        } else {
            max_abs_diff(&fromto, &want_ft)
        };
        let mut tol = [[1e-12, 1e-9], [1e-10, 1e-7], [1e-10, 0.0]][class];
        if class == 2 {
            let at_limit = c["ccd_limit"].as_bool().unwrap();
            limited += at_limit as usize;
            let true_dist = c["true_dist"].as_f64().unwrap();
            let true_ft = c["true_fromto"].as_array().map(|_| nums(&c["true_fromto"]));
            mujoco[at_limit as usize] = mujoco[at_limit as usize].max((want - true_dist).abs());
            match &true_ft {
                // MuJoCo's segment is as far from the exact one as its EPA left it
                Some(t) => tol[1] = 1e-9 + max_abs_diff(&want_ft, t),
                // no unique witnesses: the segment is not compared
                None => ef = 0.0,
            }
            if !at_limit {
                let e = [
                    (dist - true_dist).abs(),
                    true_ft.map_or(0.0, |t| max_abs_diff(&fromto, &t)),
                ];
                exact = [exact[0].max(e[0]), exact[1].max(e[1])];
                if e[0] > 1e-12 || e[1] > 1e-9 {
                    probs.push(format!(
                        "case {k} ({g1}, {g2}): {:.2e} from the exact distance, {:.2e} from \
                         the exact segment",
                        e[0], e[1]
                    ));
                }
            }
        }
        worst[class][0] = worst[class][0].max(ed);
        worst[class][1] = worst[class][1].max(ef);
        if ed > tol[0] || ef > tol[1] {
            probs.push(format!(
                "case {k} ({g1}, {g2}): distance error {ed:.2e}, fromto error {ef:.2e}"
            ));
        }
    }
    for (k, what) in ["exact routes", "convex apart", "convex overlapping"]
        .iter()
        .enumerate()
    {
        println!(
            "{what}: {} cases, distance error {:.2e}, fromto error {:.2e}",
            count[k], worst[k][0], worst[k][1]
        );
    }
    println!(
        "  convex overlapping, MuJoCo converged: {} cases, {:.2e} from the exact distance, \
         {:.2e} from the exact segment (MuJoCo {:.2e} from the exact distance); at MuJoCo's \
         iteration limit: {limited} cases (MuJoCo {:.2e} from the exact distance)",
        count[2] - limited,
        exact[0],
        exact[1],
        mujoco[0],
        mujoco[1]
    );
    assert!(probs.is_empty(), "{}", probs.join("\n"));
}
