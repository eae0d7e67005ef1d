//! `envbench compare --figures DIR`: every chart as a standalone SVG and
//! every table as CSV, named by family and view, for a paper or a thesis:
//! `speedup.svg` (with `speedup.csv`, its numbers), `cpu-cases.csv` (each
//! family's cases), and each declared view (`fam.bench-bandwidth_by_threads.svg`
//! with its points in `.csv`, grids as `.csv`). Names that two figures
//! would share (labels `a b` and `a_b`) are numbered, and listed.

use super::{Export, Exporter};
use crate::report::comparison::draw::figures;
use crate::report::comparison::figure::{speedup_figures, Figure};
use crate::report::comparison::svg::standalone;
use crate::report::comparison::text::cases_table;
use crate::report::comparison::Report;
use crate::report::render_csv;

/// `compare --figures DIR`.
#[derive(Debug)]
pub struct Figures;

impl Exporter for Figures {
    fn export(&self, r: &Report) -> Export {
        let c = r.comparison;
        let mut all = speedup_figures(c);
        let mut families: Vec<&str> = Vec::new();
        for m in &c.metrics {
            if !families.contains(&m.family.as_str()) {
                families.push(&m.family);
            }
        }
        for f in families {
            all.push(Figure {
                family: f.to_string(),
                name: crate::units::file_safe(&format!("{f}-cases")),
                title: format!("{f}: cases"),
                svg: None,
                table: Some(cases_table(c, false, true, Some(f))),
            });
        }
        all.extend(figures(c, r.environments, r.views));
        let renamed = crate::report::comparison::figure::unique_names(&mut all)
            .into_iter()
            .map(|(title, name)| {
                let kinds: Vec<&str> = all
                    .iter()
                    .filter(|f| f.name == name)
                    .flat_map(|f| {
                        [
                            f.svg.as_ref().map(|_| ".svg"),
                            f.table.as_ref().map(|_| ".csv"),
                        ]
                    })
                    .flatten()
                    .collect();
                format!("{name} ({}): {title}", kinds.join(", "))
            })
            .collect();
        let mut files = Vec::new();
        for f in all {
            if let Some(svg) = &f.svg {
                files.push((format!("{}.svg", f.name), standalone(svg)));
            }
            if let Some(t) = &f.table {
                files.push((format!("{}.csv", f.name), render_csv(t)));
            }
        }
        Export::Files { files, renamed }
    }
}
