//! Shared by the PBAD examples (`pbad_chain`, `pbad_swimmer`, `pbad_spider`): the bundled
//! output directory and font setup, the bundled models, a line plot of named series (plotters)
//! written as PNG, and a timed run under a controller.

use plotters::prelude::*;

/// The examples' result type.
pub type R<T> = Result<T, Box<dyn std::error::Error>>;

/// What a run of [`run_for`] cost: steps, seconds spent stepping, and PBAD's iterations and
/// unconverged steps.
#[allow(dead_code)] // not every example that includes this module runs under a controller
pub struct RunStats {
    pub steps: usize,
    pub secs: f64,
    pub iterations: usize,
    pub unconverged: usize,
}

/// Step `d` for `t_end` seconds: before each step `ctrl(time)` gives the controls, after it
/// `record(d)` sees the new state. Only the steps are timed.
#[allow(dead_code)]
pub fn run_for<const N: usize>(
    m: &diffmj::Model<f64>,
    d: &mut diffmj::Data<f64>,
    t_end: f64,
    ctrl: impl Fn(f64) -> [f64; N],
    mut record: impl FnMut(&mut diffmj::Data<f64>),
) -> R<RunStats> {
    let mut s = RunStats {
        steps: 0,
        secs: 0.0,
        iterations: 0,
        unconverged: 0,
    };
    let n = (t_end / m.opt.timestep).round() as usize;
    for _ in 0..n {
        d.ctrl.copy_from_slice(&ctrl(d.time));
        let t = std::time::Instant::now();
        diffmj::step(m, d)?;
        s.secs += t.elapsed().as_secs_f64();
        s.steps += 1;
        record(d);
    }
    if let Some(p) = diffmj::pbad::workspace(d) {
        s.iterations = p.stats.total_iterations;
        s.unconverged = p.stats.unconverged_steps;
    }
    Ok(s)
}

/// Create the examples' output directory and register the font; returns the directory.
pub fn setup() -> R<&'static str> {
    let dir = "out/pbad";
    std::fs::create_dir_all(dir)?;
    font()?;
    Ok(dir)
}

/// Load the bundled model `models/pbad/<name>.xml`.
pub fn load_model(name: &str) -> R<diffmj::Model<f64>> {
    let root = env!("CARGO_MANIFEST_DIR");
    Ok(diffmj::mjcf::load_file(format!(
        "{root}/models/pbad/{name}.xml"
    ))?)
}

/// Register the bundled DejaVu Sans as plotters' "sans-serif" font.
pub fn font() -> R<()> {
    plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        include_bytes!("../../assets/DejaVuSans.ttf"),
    )
    .map_err(|_| "the bundled font could not be loaded")?;
    Ok(())
}

/// Series colours, in order.
pub const COLORS: [RGBColor; 6] = [
    RGBColor(200, 30, 30),
    RGBColor(30, 60, 200),
    RGBColor(20, 150, 40),
    RGBColor(0, 0, 0),
    RGBColor(160, 60, 200),
    RGBColor(230, 140, 0),
];

/// Line plot of several named series into the PNG file `path`; `logxy` plots log10 of x
/// and/or y (non-positive values are dropped).
pub fn plot(
    path: &str,
    title: &str,
    xl: &str,
    yl: &str,
    series: &[(String, Vec<(f64, f64)>)],
    logxy: (bool, bool),
) -> R<()> {
    let tr = |v: f64, log: bool| if log { v.max(1e-300).log10() } else { v };
    let pts: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.1.iter().map(|&(x, y)| (tr(x, logxy.0), tr(y, logxy.1))))
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in &pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let pad = ((y1 - y0) * 0.05).max(1e-9);
    let root = BitMapBackend::new(path, (1000, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let xd = if logxy.0 {
        format!("log10 {xl}")
    } else {
        xl.into()
    };
    let yd = if logxy.1 {
        format!("log10 {yl}")
    } else {
        yl.into()
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, (y0 - pad)..(y1 + pad))?;
    chart.configure_mesh().x_desc(xd).y_desc(yd).draw()?;
    for (k, (name, s)) in series.iter().enumerate() {
        let c = COLORS[k % COLORS.len()];
        let width = 4u32.saturating_sub(k as u32).max(1);
        let p: Vec<(f64, f64)> = s
            .iter()
            .map(|&(x, y)| (tr(x, logxy.0), tr(y, logxy.1)))
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .collect();
        chart
            // later series thinner, so one drawn over another (PBAD-3 over RK4) still shows
            .draw_series(LineSeries::new(p.clone(), c.stroke_width(width)))?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(width))
            });
        if p.len() < 20 {
            chart.draw_series(p.iter().map(|&q| Circle::new(q, 3, c.filled())))?;
        }
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .draw()?;
    root.present()?;
    Ok(())
}
