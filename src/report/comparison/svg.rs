//! Inline SVG charts built as plain strings: bars with CI whiskers, line
//! charts (linear or log axes), and a process timeline. Every chart has a
//! title, labelled axes with units, and a legend where series need one.
//! Labels get room computed from their length, so text does not overlap.

use std::fmt::Write as _;

/// Colours of series, in order (colour-blind-safe Okabe-Ito palette).
pub const PALETTE: [&str; 6] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
];

/// The charts' style: shared by the HTML report and standalone SVG files.
pub const STYLE: &str = "svg .title { font: 600 14px sans-serif; text-anchor: middle; } \
svg .label, svg .tick { font: 12px sans-serif; fill: #333; } \
svg .axis { font: 12px sans-serif; fill: #333; } svg .grid { stroke: #e5e5e5; } \
svg .axisline { stroke: #555; } svg .one { stroke: #333; stroke-dasharray: 4 3; } \
svg .whisker { stroke: #222; stroke-width: 1.2; } svg .band { fill: #e8e8e8; }";

/// A chart as a file of its own (`compare --figures`): an XML declaration,
/// a white background and the style inside the `<svg>` element.
pub(crate) fn standalone(svg: &str) -> String {
    let Some(end) = svg.find('>') else {
        return svg.to_string();
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}><style>{STYLE}</style><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>{}\n",
        &svg[..end],
        &svg[end + 1..]
    )
}

/// Escapes text for SVG and HTML: markup characters as entities, and the
/// characters XML 1.0 forbids (C0 controls but tab and line breaks,
/// U+FFFE, U+FFFF), which no entity can carry and which make a standalone
/// SVG ill-formed, written as their code (`\u{1b}`, as the terminal shows
/// them), with DEL and the C1 controls that HTML counts as errors.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\t' | '\n' | '\r' => out.push(c),
            '\0'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{fffe}' | '\u{ffff}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Approximate width of `s` in pixels at 12 px sans-serif.
fn text_px(s: &str) -> f64 {
    s.chars().count() as f64 * 6.8
}

/// A chart width of at least `base` that fits `title` (14 px bold) with margins.
fn fit_title(base: f64, title: &str) -> f64 {
    base.max(title.chars().count() as f64 * 8.6 + 40.0)
}

/// The opening `<svg>` element of a `w` × `h` chart with its centred title.
fn open_svg(w: f64, h: f64, title: &str) -> String {
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" role="img" aria-label="{t}"><text x="{:.0}" y="20" class="title">{t}</text>"#,
        w / 2.0,
        t = esc(title)
    )
}

/// A value axis: linear or log10, mapping data to pixels.
#[derive(Debug, Clone, Copy)]
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    px0: f64,
    px1: f64,
}

impl Axis {
    fn new(min: f64, max: f64, log: bool, px0: f64, px1: f64) -> Axis {
        let (mut lo, mut hi) = if log {
            (
                min.max(f64::MIN_POSITIVE).log10(),
                max.max(f64::MIN_POSITIVE).log10(),
            )
        } else {
            (min, max)
        };
        if log {
            lo = lo.floor();
            hi = hi.ceil();
        } else {
            lo = lo.min(0.0);
            // room above the largest value, but never beyond the largest
            // number: 1.7e308 would make the axis, and its points, infinite
            hi = (hi * 1.1).min(f64::MAX);
        }
        if !lo.is_finite() {
            lo = 0.0;
        }
        if !hi.is_finite() || hi <= lo {
            hi = lo + 1.0;
        }
        if log {
            lo = lo.max(hi - MAX_DECADES);
        }
        Axis {
            lo,
            hi,
            log,
            px0,
            px1,
        }
    }

    fn px(&self, v: f64) -> f64 {
        let v = if self.log {
            v.max(f64::MIN_POSITIVE).log10()
        } else {
            v
        };
        self.px0 + (v - self.lo) / (self.hi - self.lo) * (self.px1 - self.px0)
    }

    /// Tick values: decades on a log axis, five steps on a linear one.
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            (self.lo as i32..=self.hi as i32)
                .map(|e| 10f64.powi(e))
                .collect()
        } else {
            // a fifth of each end first: the span itself may be beyond
            // the largest number
            (0..=5)
                .map(|i| self.lo + (self.hi / 5.0 - self.lo / 5.0) * i as f64)
                .collect()
        }
    }
}

fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e6 {
        format!("{:.0e}", v)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else if a >= 0.001 {
        format!("{v:.3}")
    } else {
        format!("{:.0e}", v)
    }
}

/// Widest speed-up axis, in powers of two either side of 1x (about six
/// decades): beyond it bars are drawn at the edge.
pub const MAX_SPAN_LOG2: f64 = 20.0;

/// Widest log axis, in decades.
const MAX_DECADES: f64 = 12.0;

/// One bar: label, value, CI low and high, fill colour.
#[derive(Debug, Clone)]
pub struct Bar {
    /// Row label.
    pub label: String,
    /// Bar end.
    pub value: f64,
    /// Whisker low.
    pub lo: f64,
    /// Whisker high.
    pub hi: f64,
    /// Fill.
    pub color: String,
}

/// Bars beyond which a speed-up chart draws its scale above them too.
const TOP_SCALE_FROM: usize = 12;

/// Horizontal bars of speed-ups on a log2-symmetric axis around 1x, with CI
/// whiskers, a dashed line at 1x and the tie band (`band`: ±0.02 for the
/// default threshold) shaded behind them, at least 3 px wide so that it
/// shows on an axis of many decades.
///
/// A bar whose value is not a finite positive number (a median of 0 gives
/// an infinite speed-up) is left out with a note under the axis, and the
/// axis spans at most 2^±[`MAX_SPAN_LOG2`].
pub(crate) fn speedup_bars(title: &str, x_label: &str, bars: &[Bar], band: f64) -> String {
    let all = bars.len();
    let bars: Vec<&Bar> = bars
        .iter()
        .filter(|b| b.value.is_finite() && b.value > 0.0)
        .collect();
    let x_label = match all - bars.len() {
        0 => x_label.to_string(),
        n => format!("{x_label} ({n} not drawn: speed-up not finite)"),
    };
    let lines: Vec<&str> = x_label.lines().collect();
    let label_w = bars.iter().map(|b| text_px(&b.label)).fold(80.0, f64::max) + 16.0;
    let widest_line = lines.iter().map(|l| text_px(l)).fold(0.0, f64::max);
    let (w, row) = (
        fit_title(label_w + 520.0, title).max(widest_line + 40.0),
        22.0,
    );
    // a long chart repeats its scale above the bars, where the first
    // screen shows it
    let top = if bars.len() > TOP_SCALE_FROM {
        54.0
    } else {
        36.0
    };
    let h = top + 24.0 + row * bars.len() as f64 + 26.0 + 14.0 * lines.len() as f64;
    let extreme = bars
        .iter()
        .flat_map(|b| [b.value, b.lo, b.hi])
        .filter(|v| *v > 0.0 && v.is_finite())
        .map(|v| v.log2().abs())
        .fold(0.25, f64::max);
    let span = extreme.ceil().clamp(1.0, MAX_SPAN_LOG2);
    let (x0, x1) = (label_w, w - 20.0);
    let px = |v: f64| {
        let e = if v > 0.0 { v.log2() } else { -span };
        x0 + (e.clamp(-span, span) + span) / (2.0 * span) * (x1 - x0)
    };
    let mut s = open_svg(w, h, title);
    let y_end = top + 4.0 + row * bars.len() as f64;
    speedup_ticks(&mut s, px, span, (x0, x1), (top, y_end));
    let one = px(1.0);
    let (b0, b1) = (px(1.0 - band), px(1.0 + band));
    let bw = (b1 - b0).max(3.0);
    let _ = write!(
        s,
        r#"<rect x="{:.1}" y="{top}" width="{bw:.1}" height="{:.1}" class="band"/><line x1="{one:.1}" y1="{top}" x2="{one:.1}" y2="{y_end:.1}" class="one"/>"#,
        one - bw / 2.0,
        y_end - top
    );
    for (i, b) in bars.iter().enumerate() {
        speedup_bar(&mut s, b, top + 4.0 + row * i as f64, label_w, px);
    }
    // each line of the axis label centred on the page, not on the axis,
    // so that a line wider than the axis stays inside the chart
    for (i, line) in lines.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{:.0}" y="{:.0}" class="axis" text-anchor="middle">{}</text>"#,
            w / 2.0,
            y_end + 34.0 + 14.0 * i as f64,
            esc(line)
        );
    }
    s + "</svg>"
}

/// The speed-up axis's grid lines and tick labels, from `top` to `y_end`
/// (labels under it, and over it too on a long chart): every 2^step, with
/// step doubled until the labels fit across `x0..x1`.
fn speedup_ticks(
    s: &mut String,
    px: impl Fn(f64) -> f64,
    span: f64,
    (x0, x1): (f64, f64),
    (top, y_end): (f64, f64),
) {
    // ticks every 2^step, few enough that their labels never touch
    let widest = (-(span as i32)..=(span as i32))
        .map(|e| text_px(&format!("{}x", tick_label(2f64.powi(e)))))
        .fold(0.0, f64::max);
    let room = ((x1 - x0) / (widest + 12.0)).floor().max(2.0);
    let mut step = 1;
    while f64::from(2 * span as i32 / step + 1) > room {
        step *= 2;
    }
    for e in (-(span as i32)..=(span as i32)).filter(|e| e % step == 0) {
        let v = 2f64.powi(e);
        let x = px(v);
        let _ = write!(
            s,
            r#"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{y_end:.1}" class="grid"/><text x="{x:.1}" y="{:.1}" class="tick" text-anchor="middle">{}x</text>"#,
            y_end + 14.0,
            tick_label(v)
        );
        if top > 36.0 {
            let _ = write!(
                s,
                r#"<text x="{x:.1}" y="{:.1}" class="tick" text-anchor="middle">{}x</text>"#,
                top - 6.0,
                tick_label(v)
            );
        }
    }
}

/// One row of a speed-up chart at `y`: the label right-aligned before
/// `label_w`, the bar from 1x to the value and the interval's whisker.
fn speedup_bar(s: &mut String, b: &Bar, y: f64, label_w: f64, px: impl Fn(f64) -> f64) {
    let one = px(1.0);
    let (a, z) = (px(b.value).min(one), px(b.value).max(one));
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" class="label" text-anchor="end">{}</text>"#,
        label_w - 8.0,
        y + 14.0,
        esc(&b.label)
    );
    let _ = write!(
        s,
        r#"<rect x="{a:.1}" y="{:.1}" width="{:.1}" height="14" fill="{}"/>"#,
        y + 3.0,
        (z - a).max(1.0),
        b.color
    );
    let (wl, wh) = (px(b.lo), px(b.hi));
    let _ = write!(
        s,
        r#"<line x1="{wl:.1}" y1="{0:.1}" x2="{wh:.1}" y2="{0:.1}" class="whisker"/><line x1="{wl:.1}" y1="{1:.1}" x2="{wl:.1}" y2="{2:.1}" class="whisker"/><line x1="{wh:.1}" y1="{1:.1}" x2="{wh:.1}" y2="{2:.1}" class="whisker"/>"#,
        y + 10.0,
        y + 5.0,
        y + 15.0
    );
}

/// A named series of (x, y) points.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// A line chart with markers; `log_x`/`log_y` switch axes to log10.
pub(crate) fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log_x: bool,
    log_y: bool,
) -> String {
    let legend_w = series
        .iter()
        .map(|s| text_px(&s.name))
        .fold(100.0, f64::max)
        + 40.0;
    let (w, h) = (fit_title(470.0 + legend_w, title), 360.0);
    let (x0, x1, y0, y1) = (70.0, w - legend_w, h - 50.0, 36.0);
    let pts: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .collect();
    let fold = |f: fn(f64, f64) -> f64, init: f64, sel: fn(&(f64, f64)) -> f64| {
        pts.iter().map(sel).fold(init, f)
    };
    let xa = Axis::new(
        fold(f64::min, f64::INFINITY, |p| p.0),
        fold(f64::max, f64::NEG_INFINITY, |p| p.0),
        log_x,
        x0,
        x1,
    );
    let ya = Axis::new(
        fold(f64::min, f64::INFINITY, |p| p.1),
        fold(f64::max, f64::NEG_INFINITY, |p| p.1),
        log_y,
        y0,
        y1,
    );
    let mut s = open_svg(w, h, title);
    let _ = write!(
        s,
        r#"<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" class="axisline"/><line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" class="axisline"/>"#
    );
    y_ticks(&mut s, &ya, (x0, x1));
    x_ticks(&mut s, &xa, &pts, y0);
    for (i, ser) in series.iter().enumerate() {
        series_line(&mut s, i, ser, (&xa, &ya), x1);
    }
    let _ = write!(
        s,
        r#"<text x="{:.0}" y="{:.0}" class="axis" text-anchor="middle">{}</text>"#,
        (x0 + x1) / 2.0,
        h - 12.0,
        esc(x_label)
    );
    let _ = write!(
        s,
        r#"<text x="16" y="{:.0}" class="axis" text-anchor="middle" transform="rotate(-90 16 {:.0})">{}</text></svg>"#,
        (y0 + y1) / 2.0,
        (y0 + y1) / 2.0,
        esc(y_label)
    );
    s
}

/// The y axis's grid lines from `x0` to `x1` and its tick labels, each
/// label at least 14 px from the one above it.
fn y_ticks(s: &mut String, ya: &Axis, (x0, x1): (f64, f64)) {
    let mut last_y = f64::INFINITY;
    for t in ya.ticks() {
        let y = ya.px(t);
        // keep labels 14 px apart (y grows downwards)
        if last_y - y < 14.0 {
            continue;
        }
        last_y = y;
        let _ = write!(
            s,
            r#"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" class="grid"/><text x="{:.0}" y="{:.1}" class="tick" text-anchor="end">{}</text>"#,
            x0 - 6.0,
            y + 4.0,
            tick_label(t)
        );
    }
}

/// The x axis's tick labels under `y0`: decades on a log axis, else every
/// x of the points `pts`.
fn x_ticks(s: &mut String, xa: &Axis, pts: &[(f64, f64)], y0: f64) {
    let xticks: Vec<f64> = if xa.log {
        xa.ticks()
    } else {
        let mut v: Vec<f64> = pts.iter().map(|p| p.0).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    };
    // a label that would touch the one before it is left out
    let mut last_right = f64::NEG_INFINITY;
    for t in xticks {
        let x = xa.px(t);
        let label = tick_label(t);
        let half = text_px(&label) / 2.0;
        if x - half < last_right + 6.0 {
            continue;
        }
        last_right = x + half;
        let _ = write!(
            s,
            r#"<text x="{x:.1}" y="{:.0}" class="tick" text-anchor="middle">{label}</text>"#,
            y0 + 20.0,
        );
    }
}

/// Series `i` of a line chart: its line, a marker per point, and its entry
/// in the legend right of `x1`.
fn series_line(s: &mut String, i: usize, ser: &Series, (xa, ya): (&Axis, &Axis), x1: f64) {
    let c = PALETTE[i % PALETTE.len()];
    let path: Vec<String> = ser
        .points
        .iter()
        .map(|&(x, y)| format!("{:.1},{:.1}", xa.px(x), ya.px(y)))
        .collect();
    let _ = write!(
        s,
        r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"/>"#,
        path.join(" ")
    );
    for &(x, y) in &ser.points {
        let _ = write!(
            s,
            r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"/>"#,
            xa.px(x),
            ya.px(y)
        );
    }
    let ly = 44.0 + 18.0 * i as f64;
    let _ = write!(
        s,
        r#"<rect x="{:.0}" y="{:.0}" width="12" height="12" fill="{c}"/><text x="{:.0}" y="{:.0}" class="label">{}</text>"#,
        x1 + 14.0,
        ly - 10.0,
        x1 + 30.0,
        ly,
        esc(&ser.name)
    );
}

/// One horizontal bar per process from start to end (seed 002's timelines).
pub(crate) fn timeline(title: &str, spans: &[(f64, f64)]) -> String {
    let row = if spans.len() > 60 { 4.0 } else { 8.0 };
    let w = fit_title(640.0, title);
    let (x0, x1) = (70.0, w - 20.0);
    let h = 60.0 + row * spans.len() as f64 + 30.0;
    let end = spans.iter().map(|s| s.1).fold(0.0, f64::max).max(1e-9);
    let xa = Axis::new(0.0, end / 1.1, false, x0, x1);
    let mut s = open_svg(w, h, title);
    let y_end = 40.0 + row * spans.len() as f64;
    for t in xa.ticks() {
        let x = xa.px(t);
        let _ = write!(
            s,
            r#"<line x1="{x:.1}" y1="36" x2="{x:.1}" y2="{y_end:.1}" class="grid"/><text x="{x:.1}" y="{:.1}" class="tick" text-anchor="middle">{}</text>"#,
            y_end + 14.0,
            tick_label(t)
        );
    }
    for (i, &(a, b)) in spans.iter().enumerate() {
        let y = 40.0 + row * i as f64;
        let _ = write!(
            s,
            r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"/>"#,
            xa.px(a),
            (xa.px(b) - xa.px(a)).max(0.5),
            row * 0.8,
            PALETTE[0]
        );
    }
    let _ = write!(
        s,
        r#"<text x="36" y="{:.0}" class="axis" text-anchor="middle" transform="rotate(-90 36 {:.0})">process</text>"#,
        (40.0 + y_end) / 2.0,
        (40.0 + y_end) / 2.0
    );
    let _ = write!(
        s,
        r#"<text x="{:.0}" y="{:.0}" class="axis" text-anchor="middle">seconds since the first fork</text></svg>"#,
        (x0 + x1) / 2.0,
        h - 6.0
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infinite_and_huge_speed_ups_draw_a_bounded_chart() {
        let bar = |value: f64| Bar {
            label: "x".into(),
            value,
            lo: value / 2.0,
            hi: value * 2.0,
            color: PALETTE[0].into(),
        };
        let svg = speedup_bars(
            "t",
            "speed-up",
            &[bar(f64::INFINITY), bar(1e300), bar(2.0)],
            0.02,
        );
        assert!(svg.contains("1 not drawn"));
        assert!(svg.matches("class=\"grid\"").count() <= 2 * MAX_SPAN_LOG2 as usize + 1);
        let a = Axis::new(1.0, f64::INFINITY, true, 0.0, 100.0);
        assert!(a.ticks().len() <= MAX_DECADES as usize + 1);
    }

    #[test]
    fn a_linear_axis_up_to_the_largest_number_places_it_finitely() {
        let a = Axis::new(1.0, 1.7e308, false, 0.0, 100.0);
        let x = a.px(1.7e308);
        assert!((90.0..=100.0).contains(&x), "{x}");
        assert!(a
            .ticks()
            .iter()
            .all(|t| t.is_finite() && a.px(*t).is_finite()));
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(esc("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
    }

    #[test]
    fn characters_xml_forbids_are_written_as_their_code() {
        // a hostname with control characters (`--per-host` puts it in the labels)
        let host = "h\u{1}\u{1b}[8m\u{7f}\u{85}\u{fffe}\u{ffff}x\ty\u{e9}";
        assert_eq!(
            esc(host),
            "h\\u{1}\\u{1b}[8m\\u{7f}\\u{85}\\u{fffe}\\u{ffff}x\ty\u{e9}"
        );
        let b = speedup_bars(
            host,
            host,
            &[Bar {
                label: host.into(),
                value: 0.5,
                lo: 0.4,
                hi: 0.6,
                color: "#000".into(),
            }],
            0.02,
        );
        let l = line_chart(
            host,
            host,
            host,
            &[Series {
                name: host.into(),
                points: vec![(1.0, 1.0)],
            }],
            false,
            false,
        );
        for svg in [b, l, timeline(host, &[(0.0, 1.0)])] {
            let bad: Vec<char> = svg.chars().filter(|c| !xml_char(*c)).collect();
            assert!(bad.is_empty(), "{bad:?} in {svg}");
        }
    }

    /// A character XML 1.0 allows in a document.
    fn xml_char(c: char) -> bool {
        matches!(c, '\t' | '\n' | '\r' | ' '..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
    }

    #[test]
    fn log_axis_spans_whole_decades() {
        let a = Axis::new(16.0, 262_144.0, true, 0.0, 100.0);
        assert_eq!(a.ticks(), vec![10.0, 100.0, 1e3, 1e4, 1e5, 1e6]);
        assert!((a.px(10.0) - 0.0).abs() < 1e-9 && (a.px(1e6) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn charts_have_titles_axes_and_legends() {
        let l = line_chart(
            "GFLOPS",
            "threads",
            "GFLOPS",
            &[Series {
                name: "native".into(),
                points: vec![(1.0, 30.0), (2.0, 55.0)],
            }],
            false,
            false,
        );
        assert!(l.starts_with("<svg") && l.ends_with("</svg>"));
        assert!(
            l.contains(">threads<")
                && l.contains(">GFLOPS<")
                && l.contains(">native<")
                && l.contains("<polyline")
        );
        let b = speedup_bars(
            "speed-up",
            "x",
            &[Bar {
                label: "cpu.dense".into(),
                value: 0.5,
                lo: 0.4,
                hi: 0.6,
                color: "#000".into(),
            }],
            0.02,
        );
        assert!(b.contains(">cpu.dense<") && b.contains("<rect") && b.contains("class=\"one\""));
        assert!(b.contains("class=\"band\""), "the tie band is drawn");
        let alone = standalone(&b);
        assert!(
            alone.starts_with("<?xml") && alone.contains("<style>") && alone.ends_with("</svg>\n")
        );
        let t = timeline("t", &[(0.0, 1.0), (0.1, 2.0)]);
        assert_eq!(t.matches("<rect").count(), 2);
    }
}
