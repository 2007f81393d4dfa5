//! Quickstart: simulate the double pendulum with every integrator, differentiate the state at
//! T/3 with respect to the initial velocity on dual numbers (checked against a finite
//! difference), and write a CSV and a PNG plot.
//!
//! Run with `cargo run --release --example quickstart`; outputs go to `out/`.

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
    let fd = {
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
        dd.qpos[0].eps, fd
    );

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
    Ok(())
}
