//! Rendering: tables, views and every sentence, built from `results`,
//! `probe` and `compare` types, in three rooms by what they render:
//! [`comparison`] (`compare`'s text, Markdown, HTML, CSV, JSON and
//! figures), [`run`] (a run's table of cases and its plan) and
//! [`listing`] (`list`'s catalog and `history`'s table); beside them the
//! fingerprint, shared by `info` and the comparison, the words every room
//! uses, and the table this module renders. Nothing here measures or
//! probes, and no rendering happens anywhere else.

pub mod comparison;
pub mod fingerprint;
pub mod listing;
pub mod run;
pub mod words;

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

/// Characters a terminal shows: ANSI colour sequences take no room.
fn visible_len(s: &str) -> usize {
    let mut n = 0;
    let mut in_escape = false;
    for c in s.chars() {
        match (in_escape, c) {
            (false, '\x1b') => in_escape = true,
            (true, 'm') => in_escape = false,
            (true, _) => {}
            (false, _) => n += 1,
        }
    }
    n
}

/// Plain-text rendering with aligned columns separated by two spaces.
pub(crate) fn render_text(t: &Table) -> String {
    let widths: Vec<usize> = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            t.rows
                .iter()
                .map(|r| r.get(i).map_or(0, |s| visible_len(s)))
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
            .map(|((s, c), &w)| {
                let pad = " ".repeat(w.saturating_sub(visible_len(s)));
                match c.align {
                    Align::Left => format!("{s}{pad}"),
                    Align::Right => format!("{pad}{s}"),
                }
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

/// Markdown pipe table (GitHub flavour): a pipe in a cell is escaped and
/// a line break becomes a space, so that data never ends a row or a cell.
pub(crate) fn render_markdown(t: &Table) -> String {
    let esc = |s: &str| s.replace('|', "\\|").replace(['\r', '\n'], " ");
    let mut out = format!(
        "| {} |\n",
        t.columns
            .iter()
            .map(|c| esc(&c.title))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    out += &format!(
        "|{}|\n",
        t.columns
            .iter()
            .map(|c| if c.align == Align::Right {
                "---:"
            } else {
                "---"
            })
            .collect::<Vec<_>>()
            .join("|")
    );
    for r in &t.rows {
        out += &format!(
            "| {} |\n",
            r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
        );
    }
    out
}

/// CSV (RFC 4180): fields with a comma, quote or line break are quoted.
///
/// A text cell starting with `=`, `+`, `-`, `@`, tab or CR is prefixed with
/// `'`, so a spreadsheet does not run it as a formula (a label
/// `=HYPERLINK(...)`); numbers, negative ones included, stay numbers.
pub fn render_csv(t: &Table) -> String {
    let field = |s: &str| {
        let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']) && s.parse::<f64>().is_err();
        let s = if formula {
            format!("'{s}")
        } else {
            s.to_string()
        };
        if s.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s
        }
    };
    let mut out = t
        .columns
        .iter()
        .map(|c| field(&c.title))
        .collect::<Vec<_>>()
        .join(",")
        + "\n";
    for r in &t.rows {
        out += &(r.iter().map(|c| field(c)).collect::<Vec<_>>().join(",") + "\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_text_cells_that_look_like_formulas_are_neutralised() {
        let t = Table {
            columns: vec![],
            rows: vec![vec![
                "=HYPERLINK(1)".into(),
                "-3.2".into(),
                "@x".into(),
                "a".into(),
            ]],
        };
        assert_eq!(render_csv(&t), "\n'=HYPERLINK(1),-3.2,'@x,a\n");
    }

    fn sample() -> Table {
        let mut t = Table::new(&["name", ">value"]);
        t.rows.push(vec!["a|b".into(), "1,5".into()]);
        t
    }

    #[test]
    fn markdown_escapes_pipes_and_aligns_numbers_right() {
        assert_eq!(
            render_markdown(&sample()),
            "| name | value |\n|---|---:|\n| a\\|b | 1,5 |\n"
        );
    }

    #[test]
    fn csv_quotes_fields_with_commas() {
        assert_eq!(render_csv(&sample()), "name,value\na|b,\"1,5\"\n");
    }

    #[test]
    fn colour_codes_take_no_width() {
        let mut t = Table::new(&["v", "w"]);
        t.rows.push(vec!["\x1b[32mok\x1b[0m".into(), "x".into()]);
        t.rows.push(vec!["long".into(), "y".into()]);
        assert_eq!(
            render_text(&t),
            "v     w\n\x1b[32mok\x1b[0m    x\nlong  y\n"
        );
    }

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
