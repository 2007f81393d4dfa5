//! PNG line charts for the commands' `--plots` (pure-Rust bitmaps with the bundled font).

use plotters::prelude::*;
use std::path::Path;

/// One curve of a chart.
pub struct Series {
    /// Legend text (empty: no legend entry).
    pub label: String,
    /// `(x, y)` points.
    pub points: Vec<(f64, f64)>,
}

/// The colors of successive series.
const COLORS: [RGBColor; 6] = [RED, BLUE, GREEN, MAGENTA, CYAN, BLACK];

/// Registers the bundled font (a second registration, as in tests, is harmless).
pub fn register_font() {
    let _ = plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        include_bytes!("../../assets/DejaVuSans.ttf"),
    );
}

/// Draws `series` as lines into the PNG `path` (800×450), the y axis in log scale when
/// `log_y` (non-positive values are drawn at the smallest positive one).
pub fn lines(
    path: &Path,
    caption: &str,
    x_desc: &str,
    series: &[Series],
    log_y: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    register_font();
    let root = BitMapBackend::new(path, (800, 450)).into_drawing_area();
    root.fill(&WHITE)?;
    let pts = || series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = pts().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (x0, x1) = if x0 < x1 { (x0, x1) } else { (0.0, 1.0) };
    if log_y {
        let lo = pts()
            .map(|p| p.1)
            .filter(|y| *y > 0.0)
            .fold(f64::MAX, f64::min)
            .min(1.0);
        let hi = pts().map(|p| p.1).fold(0.0, f64::max).max(lo * 10.0);
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 20))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, (lo..hi).log_scale())?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_label_formatter(&|y| format!("{y:.0e}"))
            .draw()?;
        draw(&mut chart, series, |y| y.max(lo))?;
    } else {
        let (lo, hi) = pts().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
        let (lo, hi) = if lo <= hi { (lo, hi) } else { (0.0, 1.0) };
        let pad = 0.05 * (hi - lo).max(1e-9);
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 20))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, lo - pad..hi + pad)?;
        chart.configure_mesh().x_desc(x_desc).draw()?;
        draw(&mut chart, series, |y| y)?;
    }
    root.present()?;
    Ok(())
}

/// Draws the series (y through `f`) with their legend.
fn draw<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    series: &[Series],
    f: impl Fn(f64) -> f64,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (j, s) in series.iter().enumerate() {
        let c = COLORS[j % COLORS.len()];
        let drawn = chart
            .draw_series(LineSeries::new(
                s.points.iter().map(|&(x, y)| (x, f(y))),
                c.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?;
        if !s.label.is_empty() {
            drawn
                .label(s.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c));
        }
    }
    if series.iter().any(|s| !s.label.is_empty()) {
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE)
            .draw()
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
