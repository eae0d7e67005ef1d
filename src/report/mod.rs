//! Rendering: tables and views built from `results` and `probe` types. No
//! measuring happens here, and no rendering happens anywhere else.

pub mod catalog;
pub mod fingerprint;
pub mod summary;

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
}

/// A column heading.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Heading text.
    pub title: String,
    /// How cells align.
    pub align: Align,
}

/// A table of pre-formatted cells, rendered by each output format.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    /// Headings.
    pub columns: Vec<Column>,
    /// Rows of cells, one per column.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these headings; titles starting with `>` align right.
    pub fn new(titles: &[&str]) -> Table {
        Table {
            columns: titles
                .iter()
                .map(|t| match t.strip_prefix('>') {
                    Some(t) => Column {
                        title: t.to_string(),
                        align: Align::Right,
                    },
                    None => Column {
                        title: t.to_string(),
                        align: Align::Left,
                    },
                })
                .collect(),
            rows: Vec::new(),
        }
    }
}

/// Plain-text rendering with aligned columns separated by two spaces.
pub fn render_text(t: &Table) -> String {
    let widths: Vec<usize> = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            t.rows
                .iter()
                .map(|r| r.get(i).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
                .max(c.title.chars().count())
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let parts: Vec<String> = cells
            .iter()
            .zip(&t.columns)
            .zip(&widths)
            .map(|((s, c), &w)| match c.align {
                Align::Left => format!("{s:<w$}"),
                Align::Right => format!("{s:>w$}"),
            })
            .collect();
        parts.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(t.columns.iter().map(|c| c.title.as_str()).collect());
    for r in &t.rows {
        out += &line(r.iter().map(String::as_str).collect());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(&["name", ">value"]);
        t.rows.push(vec!["a".into(), "1.5".into()]);
        t.rows.push(vec!["longer".into(), "100".into()]);
        assert_eq!(
            render_text(&t),
            "name    value\na         1.5\nlonger    100\n"
        );
    }
}
