//! The market a workload's operations are priced in: each counted
//! operation's price on both sides, from the first declared micro case
//! that ran on the workload's directory, with the metrics it is made of.

use super::*;

/// What one unit of an operation costs on each side, seconds, and the
/// micro case that says so.
#[derive(Clone)]
pub(super) struct Priced {
    pub(super) key: String,
    pub(super) metric: String,
    pub(super) base: f64,
    pub(super) other: f64,
    /// `other` as the measured metrics it is made of, seconds each.
    pub(super) terms: Vec<Term>,
    /// The names each operation's path walked in the pricing case
    /// ([`crate::results::price::Price::names`]).
    pub(super) names: u8,
}

impl Priced {
    /// The case and metric: `io.meta[dir=work,files=500] stats_per_sec`.
    pub(super) fn by(&self) -> String {
        format!("{} {}", self.key, self.metric)
    }

    /// This price less the names its pricing case walked, each at `name`'s
    /// price on its side (none below 0: where a name costs more than a
    /// third of the operation, the operation at one name is priced above
    /// what the near stat took, and its names carry it), where the
    /// workload's own names are priced apart; as it is otherwise. It is
    /// made of the operation's metrics less the name's, so that a metric
    /// in both nets out in the prediction's interval ([`shifts`]).
    pub(super) fn less_names(self, name: Option<&Priced>) -> Priced {
        match name {
            Some(n) if self.names > 0 => {
                let names = f64::from(self.names);
                let other = self.other - names * n.other;
                // none below 0: then it is 0 whatever the metrics do
                let terms = if other > 0.0 {
                    let mut t = self.terms.clone();
                    t.extend(n.terms.iter().map(|t| t.scaled(-names)));
                    t
                } else {
                    Vec::new()
                };
                Priced {
                    metric: format!("{}, less its {} names", self.metric, self.names),
                    base: (self.base - names * n.base).max(0.0),
                    other: other.max(0.0),
                    terms,
                    names: 0,
                    ..self
                }
            }
            _ => self,
        }
    }
}

/// The cases of a comparison by key (the baseline's first of each), the
/// metrics compared and the benches' prices: what prices one workload's
/// operations in environment `env` on directory `dir`.
pub(super) struct Market<'a> {
    pub(super) cases: &'a BTreeMap<&'a str, &'a CaseResult>,
    pub(super) metrics: &'a [MetricComparison],
    pub(super) prices: &'a [BenchPrice],
    pub(super) env: &'a str,
    pub(super) dir: Option<&'a str>,
}

impl Market<'_> {
    /// The comparison of `metric` of a case of `bench` that `want` accepts,
    /// in this environment, with positive values on both sides.
    pub(super) fn find(
        &self,
        bench: &str,
        metric: &str,
        want: impl Fn(&CaseResult) -> bool,
    ) -> Option<&MetricComparison> {
        self.metrics.iter().find(|m| {
            m.environment == self.env
                && m.metric == metric
                && m.base_value > 0.0
                && m.other_value > 0.0
                && self
                    .cases
                    .get(m.key.as_str())
                    .is_some_and(|c| c.bench == bench && want(c))
        })
    }

    /// Operation `op`'s price on both sides: the first declared price whose
    /// case ran here.
    pub(super) fn price(&self, op: Op) -> Option<Priced> {
        self.prices
            .iter()
            .filter(|p| p.price.op == op)
            .find_map(|p| self.priced_by(p))
    }

    /// `p`'s price on both sides, where its case ran here.
    pub(super) fn priced_by(&self, p: &BenchPrice) -> Option<Priced> {
        let declared = p.price;
        let m = self.find(p.bench, declared.metric, |c| {
            declared.params.iter().all(|(k, v)| c.param_is(k, v))
                && (!declared.on_dir || c.dir_param() == self.dir)
        })?;
        let (base, other) = (
            declared.cost.seconds(m.base_value)?,
            declared.cost.seconds(m.other_value)?,
        );
        let spread = spread(declared.cost, m, other);
        let term = Term {
            id: format!("{} {}", m.key, m.metric),
            other,
            ends: spread,
        };
        match declared.cost {
            // its operation's share of its time moves with the whole
            Cost::LessTransfers { read, written } => {
                self.less_transfers(m, (base, other), term, read, written)
            }
            Cost::PerName { near, apart } => self.per_name(m, (base, other), term, near, apart),
            _ => Some(Priced {
                key: m.key.clone(),
                metric: m.metric.clone(),
                base,
                other,
                terms: vec![term],
                names: declared.names,
            }),
        }
    }

    /// A name's price from `m`'s operation (`each` seconds on each side,
    /// the other side as the metric's `term`) and the same case's metric
    /// `near` of the same operation at paths `apart` names shorter: the
    /// difference over `apart`, none below 0. It is made of both metrics,
    /// `m` over `apart` less `near` over `apart`, each moving alone in the
    /// prediction's interval ([`shifts`]): a command whose operations walk
    /// 1 to `apart` + 1 names adds both with weights of one sign, one
    /// walking fewer or more with weights of opposite signs.
    pub(super) fn per_name(
        &self,
        m: &MetricComparison,
        each: (f64, f64),
        term: Term,
        near: &str,
        apart: u8,
    ) -> Option<Priced> {
        let n = self.find_key(&m.key, near)?;
        let near_s = (
            Cost::PerSecond.seconds(n.base_value)?,
            Cost::PerSecond.seconds(n.other_value)?,
        );
        let apart_f = f64::from(apart.max(1));
        let per = |deep: f64, near: f64| ((deep - near) / apart_f).max(0.0);
        let other = per(each.1, near_s.1);
        let terms = if other > 0.0 {
            let near_term = Term {
                id: format!("{} {}", n.key, n.metric),
                other: near_s.1,
                ends: self::spread(Cost::PerSecond, n, near_s.1),
            };
            vec![term.scaled(1.0 / apart_f), near_term.scaled(-1.0 / apart_f)]
        } else {
            Vec::new()
        };
        Some(Priced {
            key: m.key.clone(),
            metric: format!("{} less {}, over {apart} names", m.metric, n.metric),
            base: per(each.0, near_s.0),
            other,
            terms,
            names: 0,
        })
    }

    /// The price of `m`'s operation (`each` seconds on each side, its whole
    /// time, the other side as the metric's `term`)
    /// once the bytes its metrics `read` and `written` moved are priced at
    /// this directory's byte prices; None where under a tenth of its time
    /// is left.
    pub(super) fn less_transfers(
        &self,
        m: &MetricComparison,
        each: (f64, f64),
        term: Term,
        read: &str,
        written: &str,
    ) -> Option<Priced> {
        let same = |metric: &str| self.find_key(&m.key, metric);
        let (r, w) = (same(read)?, same(written)?);
        let (by_read, by_write) = (self.price(Op::ByteRead)?, self.price(Op::ByteWritten)?);
        let left = |each: f64, r: f64, w: f64, pr: f64, pw: f64| {
            let left = 1.0 - (r * pr + w * pw) * MIB_BYTES;
            (left >= LEAST_LEFT).then_some(left * each)
        };
        let other = left(
            each.1,
            r.other_value,
            w.other_value,
            by_read.other,
            by_write.other,
        )?;
        // its operation's share moves with the whole, its transfers'
        // prices held
        let term = term.scaled(other / each.1);
        Some(Priced {
            key: m.key.clone(),
            metric: format!(
                "{}, less its reads and writes at {}'s rates",
                m.metric, by_read.key
            ),
            base: left(
                each.0,
                r.base_value,
                w.base_value,
                by_read.base,
                by_write.base,
            )?,
            other,
            terms: vec![term],
            names: 0,
        })
    }

    /// Metric `metric` of case `key` in this environment.
    pub(super) fn find_key(&self, key: &str, metric: &str) -> Option<&MetricComparison> {
        self.metrics
            .iter()
            .find(|m| m.environment == self.env && m.key == key && m.metric == metric)
    }

    /// The benches and metrics that would price `ops`: `io.meta
    /// creates_per_sec`.
    pub(super) fn who_prices(&self, ops: &[Op]) -> String {
        let mut named: Vec<String> = Vec::new();
        for p in self.prices.iter().filter(|p| ops.contains(&p.price.op)) {
            let mut one = format!("{} {}", p.bench, p.price.metric);
            let params: Vec<String> = p
                .price
                .params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            if !params.is_empty() {
                one.push_str(&format!(" with {}", params.join(",")));
            }
            if !named.contains(&one) {
                named.push(one);
            }
        }
        named.join(", ")
    }
}
