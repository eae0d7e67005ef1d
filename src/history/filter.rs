//! Which runs of a label a comparison takes, by their fingerprint
//! (`--where host=lab-a`): in the query where the database can choose, and
//! again on the parsed runs.

use super::backend::Cell;
use crate::results::ResultFile;

/// Which runs of a label to take, by fingerprint: each field given is a
/// case-insensitive part of the run's value (`cpu=EPYC`, `kernel=6.8`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Part of the host name.
    pub host: Option<String>,
    /// Part of the CPU model.
    pub cpu: Option<String>,
    /// Part of the kernel release.
    pub kernel: Option<String>,
    /// Part of the virtualisation summary (`wsl2`, `docker`, `bare-metal`).
    pub virt: Option<String>,
}

impl Filter {
    /// The fields, in the order of the query's placeholders.
    fn parts(&self) -> [&Option<String>; 4] {
        [&self.host, &self.cpu, &self.kernel, &self.virt]
    }

    /// Whether no field is given.
    pub(crate) fn is_empty(&self) -> bool {
        self.parts().iter().all(|p| p.is_none())
    }

    /// Whether `run` passes.
    pub(crate) fn matches(&self, run: &ResultFile) -> bool {
        let fp = &run.fingerprint;
        let values = [
            fp.os.hostname.clone().unwrap_or_default(),
            fp.cpu.model.clone().unwrap_or_default(),
            fp.os.kernel_release.clone().unwrap_or_default(),
            fp.virtualization.summary(),
        ];
        self.parts().iter().zip(values).all(|(want, have)| {
            want.as_ref()
                .is_none_or(|w| have.to_lowercase().contains(&w.to_lowercase()))
        })
    }

    /// The query's conditions and their arguments (numbered from
    /// `first`): `lower(column) LIKE '%part%'`, `%` and `_` escaped, for
    /// each part given in ASCII. SQLite's `lower` and `LIKE` fold ASCII
    /// only, and PostgreSQL's `lower` folds by the database's locale, so a
    /// part with other letters is left to [`Filter::matches`] on the
    /// parsed runs; so are the CPU model and kernel of a version 1 layout.
    pub(super) fn conditions(&self, first: usize, version: i64) -> (String, Vec<Cell>) {
        let columns = ["host", "cpu_model", "kernel", "virtualization"];
        let (mut sql, mut args) = (String::new(), Vec::new());
        for (part, column) in self.parts().iter().zip(columns) {
            let Some(part) = part.as_deref().filter(|p| p.is_ascii()) else {
                continue;
            };
            if version < 2 && matches!(column, "cpu_model" | "kernel") {
                continue;
            }
            let escaped = part
                .to_ascii_lowercase()
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            args.push(Cell::Text(format!("%{escaped}%")));
            sql += &format!(
                " AND lower({column}) LIKE ?{} ESCAPE '\\'",
                first + args.len() - 1
            );
        }
        (sql, args)
    }
}
