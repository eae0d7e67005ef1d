//! Views: what a family asks the report to draw from a comparison.
//!
//! A family declares its views beside its benches ([`crate::bench::Bench::views`]);
//! the report draws any view from the comparison's data and names no
//! bench itself. The vocabulary is small and typed on purpose: lines
//! against a numeric parameter, latency percentiles, a timeline from a
//! case's details, and a grid of verdicts over two parameters. Axis labels
//! take their unit from the data, and series of different units never
//! share an axis: the report splits them into charts of their own.

/// One view of one bench.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// What the view shows, after the bench id: `GFLOPS by threads`.
    pub title: &'static str,
    /// How to draw it.
    pub kind: ViewKind,
}

/// The kinds of view.
#[derive(Debug, Clone, PartialEq)]
pub enum ViewKind {
    /// A metric against a numeric parameter.
    Lines(Lines),
    /// Several percentile metrics of one case as one line per case.
    Percentiles(Percentiles),
    /// Spans read from a case's details, one bar each.
    Timeline(Timeline),
    /// Variation and verdict of a metric over two parameters.
    Grid(Grid),
}

/// Linear or logarithmic axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Linear.
    Linear,
    /// log10.
    Log,
}

/// What a line plots on its y axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum YValue {
    /// The metric itself (median over runs of each case's median).
    Metric,
    /// The speed-up over the same line's value at x = this value (the
    /// metric divided by it where higher is better, it divided by the metric
    /// where lower is better; > 1 better): a speed-up over one thread, say.
    /// Lines without that point are left out.
    SpeedupOverX(f64),
}

/// `metric` against the numeric parameter `x`, one line per environment
/// and per value of each parameter in `by`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lines {
    /// Metric name, e.g. `gflops`.
    pub metric: &'static str,
    /// What the y axis shows, without the unit (the data gives it): `rate`.
    pub y_label: &'static str,
    /// Plotted value.
    pub y: YValue,
    /// y scale.
    pub y_scale: Scale,
    /// Parameter on the x axis, e.g. `threads`.
    pub x: &'static str,
    /// What the x axis shows, e.g. `threads`.
    pub x_label: &'static str,
    /// x scale.
    pub x_scale: Scale,
    /// Parameters whose values split the lines further, e.g. `["n"]`.
    pub by: &'static [&'static str],
}

/// For every case: one line through its percentile metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct Percentiles {
    /// (metric name, percentile): `("latency_p95", 95.0)`; 0 is the minimum, 100 the maximum.
    pub points: &'static [(&'static str, f64)],
    /// What one sample is, for the axis: `spawn`.
    pub per: &'static str,
}

/// One bar per span of the last case of the bench that has the detail,
/// per environment (its first run).
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// Key in the case's details holding an array of objects.
    pub detail: &'static str,
    /// Field of each object: start, seconds.
    pub start: &'static str,
    /// Field of each object: end, seconds.
    pub end: &'static str,
}

/// A table of verdicts: rows, a column per environment and value of
/// the parameter `columns`; each cell the variation and verdict against
/// the baseline (seed 000's Table 4: operations by threads).
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// What the rows are.
    pub rows: GridRows,
    /// Parameter of the columns, e.g. `threads`.
    pub columns: &'static str,
}

/// The rows of a [`Grid`].
#[derive(Debug, Clone, PartialEq)]
pub enum GridRows {
    /// One row per value of a parameter, cells of one metric (None: each
    /// case's headline metric).
    Param {
        /// The parameter, e.g. `n`.
        name: &'static str,
        /// The metric of the cells.
        metric: Option<&'static str>,
    },
    /// One row per metric, e.g. `write`, `rewrite`, `read`, `reread`.
    Metrics(&'static [&'static str]),
}

/// A view with the bench it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchView {
    /// Bench id, e.g. `cpu.lu`.
    pub bench: String,
    /// The view.
    pub view: View,
}
