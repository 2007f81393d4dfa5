//! Quickstart: simulate the double pendulum with every integrator, differentiate the state at
//! T/3 with respect to the initial velocity on dual numbers (checked against a finite
//! difference), then take the exact transition Jacobians of the ant in contact and a
//! parameter Jacobian (with respect to the floor's friction), checked against finite
//! differences, and write a CSV and a PNG plot.
//!
//! Run with `cargo run --release --example quickstart`; outputs go to `out/`.

use diffmj::derivatives::{ad::AdWorkspace, fd::FdWorkspace, FdOptions, Transition};
use diffmj::model::Integrator;
use diffmj::{mjcf, Data};
use num_dual::Dual64;
use plotters::prelude::*;
use std::io::Write;

const SECONDS: f64 = 3.0;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/models/double_pendulum.xml");
    let mut m = mjcf::load_file(path)?;
    std::fs::create_dir_all("out")?;
    let nstep = (SECONDS / m.opt.timestep).round() as usize;
    println!(
        "model '{}': nq={} nv={} nu={}, {} steps of {} s",
        m.name, m.nq, m.nv, m.nu, nstep, m.opt.timestep
    );

    let integrators = [
        Integrator::Euler,
        Integrator::Rk4,
        Integrator::Implicit,
        Integrator::ImplicitFast,
    ];
    let mut traces: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut csv = std::fs::File::create("out/quickstart.csv")?;
    writeln!(csv, "integrator,time,qpos0,qpos1")?;
    for integ in integrators {
        m.opt.integrator = integ;
        let mut d = Data::new(&m);
        d.qpos[0] = 1.2;
        let mut trace = Vec::with_capacity(nstep + 1);
        for k in 0..=nstep {
            trace.push((d.time, d.qpos[0]));
            if k % 10 == 0 {
                writeln!(
                    csv,
                    "{},{},{},{}",
                    integ.name(),
                    d.time,
                    d.qpos[0],
                    d.qpos[1]
                )?;
            }
            if k < nstep {
                diffmj::step(&m, &mut d)?;
            }
        }
        println!(
            "  {:13} q(T) = [{:+.6}, {:+.6}]",
            integ.name(),
            d.qpos[0],
            d.qpos[1]
        );
        traces.push(trace);
    }

    // exact derivative of the final angle w.r.t. the initial velocity of joint 0 (RK4)
    m.opt.integrator = Integrator::Rk4;
    let md = m.cast::<Dual64>();
    let mut dd = Data::new(&md);
    dd.qpos[0] = Dual64::from(1.2);
    dd.qvel[0] = Dual64::new(0.0, 1.0);
    let short = nstep / 3;
    for _ in 0..short {
        diffmj::step(&md, &mut dd)?;
    }
    let fd_pend = {
        let run = |v: f64| -> Result<f64, diffmj::SimError> {
            let mut d = Data::new(&m);
            d.qpos[0] = 1.2;
            d.qvel[0] = v;
            for _ in 0..short {
                diffmj::step(&m, &mut d)?;
            }
            Ok(d.qpos[0])
        };
        (run(1e-6)? - run(-1e-6)?) / 2e-6
    };
    println!(
        "d q0(T/3) / d qvel0(0): dual {:+.9}, finite difference {:+.9}",
        dd.qpos[0].eps, fd_pend
    );

    // exact transition Jacobians through contact, against centered finite differences
    let ant = mjcf::load_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/thirdparty/gymnasium/ant.xml"
    ))?;
    // a state away from contact events: where a contact appears or a row changes state
    // within reach of the perturbation, the step is not differentiable (the exact Jacobian is
    // one-sided there and a finite difference grows like 1/eps); two step sizes that agree say
    // the step is smooth here
    let (mut exact, mut fd) = (Transition::new(&ant), Transition::new(&ant));
    let mut fd_small = Transition::new(&ant);
    let mut fdw = FdWorkspace::new(&ant);
    let centered = |eps| FdOptions {
        eps,
        centered: true,
    };
    let mut ds = Data::new(&ant);
    for _ in 0..300 {
        diffmj::step(&ant, &mut ds)?;
    }
    let mut t_fd = 0.0;
    for _ in 0..50 {
        let t0 = std::time::Instant::now();
        fdw.transition(&ant, &ds, &centered(1e-6), &mut fd)?;
        t_fd = t0.elapsed().as_secs_f64() * 1e3;
        fdw.transition(&ant, &ds, &centered(1e-7), &mut fd_small)?;
        let smooth =
            fd.a.iter()
                .zip(&fd_small.a)
                .all(|(x, y)| (x - y).abs() <= 1e-4 * x.abs().max(1.0));
        if smooth {
            break;
        }
        for _ in 0..10 {
            diffmj::step(&ant, &mut ds)?;
        }
    }
    let mut ad = AdWorkspace::new(&ant);
    let t0 = std::time::Instant::now();
    let report = ad.transition(&ant, &ds, &mut exact)?;
    let t_ad = t0.elapsed().as_secs_f64() * 1e3;
    let scale = fd.a.iter().fold(1.0f64, |s, x| s.max(x.abs()));
    let jac_err = exact
        .a
        .iter()
        .zip(&fd.a)
        .fold(0.0f64, |s, (x, y)| s.max((x - y).abs()))
        / scale;
    println!(
        "ant at t = {:.2} s ({} dofs, {} constraint rows): exact A ({}x{}) in {t_ad:.2} ms, \
         centered FD in {t_fd:.2} ms, max difference {jac_err:.1e} of the largest entry",
        ds.time, ant.nv, report.nefc, exact.ndx, exact.ndx
    );
    // a parameter Jacobian no finite-difference engine gives exactly: d(next state)/d(friction)
    let mu = ant.params("geom 0 friction[0]")?.remove(0);
    let mut dxdp = vec![0.0; exact.ndx];
    ad.transition_params(&ant, &ds, std::slice::from_ref(&mu), &mut dxdp)?;
    let dmax = dxdp.iter().fold(0.0f64, |s, x| s.max(x.abs()));
    println!("  d(next state)/d({}): largest entry {dmax:.3e}", mu.name);

    plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        include_bytes!("../assets/DejaVuSans.ttf"),
    )
    .map_err(|_| "the bundled font could not be loaded")?;
    let root = BitMapBackend::new("out/quickstart.png", (900, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("double pendulum: joint 0 angle", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..SECONDS, -3.5..3.5)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("qpos[0] (rad)")
        .draw()?;
    let colors = [RED, BLUE, GREEN, BLACK];
    for ((trace, integ), color) in traces.iter().zip(integrators).zip(colors) {
        chart
            .draw_series(LineSeries::new(trace.iter().copied(), color))?
            .label(integ.name())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    root.present()?;
    println!("wrote out/quickstart.csv and out/quickstart.png");
    println!(
        "key figures: dual vs FD {:.1e} | ant exact A vs FD {jac_err:.1e}, {t_ad:.2} ms exact, \
         {t_fd:.2} ms centered FD",
        (dd.qpos[0].eps - fd_pend).abs()
    );
    Ok(())
}
