//! `envbench history` as a table.

use crate::report::Table;

/// `envbench history` as a table.
pub(crate) fn table(entries: &[crate::history::Entry]) -> Table {
    let mut t = Table::new(&[
        ">id",
        "label",
        "host",
        "virtualization",
        "started (UTC)",
        "suite",
        "status",
        "file",
    ]);
    for e in entries {
        t.rows.push(vec![
            e.id.to_string(),
            e.label.clone(),
            e.host.clone(),
            e.virtualization.clone(),
            e.started_utc.clone(),
            e.suite.clone(),
            e.status.clone(),
            e.path.clone(),
        ]);
    }
    t
}
