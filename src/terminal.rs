//! Text from files on the terminal: control characters, escape sequences
//! and bidirectional overrides in a label or note could clear the screen,
//! set the window title, forge a line or reorder what the user reads, so
//! they are shown escaped (`\u{1b}`), as Rust's `escape_debug` would:
//! [`escape`], the one escaper, for each string of data (every string of
//! a result file as it is read), and [`escape_output`] over a whole
//! rendered document, which keeps its line breaks. envbench's colours are
//! added after data was escaped, and only [`escape_coloured_output`] lets
//! them through.

/// Whether `c` must not reach a terminal raw: C0 and C1 controls (tab and
/// newline included: one field stays on one line), DEL, and the Unicode
/// format characters that reorder or hide text (bidi overrides and
/// isolates, zero-width marks, BOM).
pub(crate) fn is_unsafe(c: char) -> bool {
    // U+061C is the Arabic letter mark, a bidi control like U+200E/F
    c.is_control()
        || matches!(c,
            '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// `s` with every [`is_unsafe`] character written as `\u{XX}`.
pub(crate) fn escape(s: &str) -> String {
    if !s.chars().any(is_unsafe) {
        return s.to_string();
    }
    s.chars()
        .map(|c| {
            if is_unsafe(c) {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Rendered output made safe to print: like [`escape`], but keeping line
/// breaks and tabs, the document's own. Every escape sequence is shown
/// escaped. Strings from result files are escaped when read
/// ([`crate::results::validate::escape_strings`]); this catches text from
/// elsewhere (an error's cause, a path, a live fingerprint).
pub(crate) fn escape_output(text: &str) -> String {
    escape_keeping(text, &[])
}

/// [`escape_output`] of `compare --color`'s report: envbench's own
/// coloured verdicts pass whole. They are added after the data was
/// escaped (when its file was read), so data never holds one, and with
/// `--color never` [`escape_output`] lets none through.
pub(crate) fn escape_coloured_output(text: &str) -> String {
    escape_keeping(text, &OWN_COLOURS)
}

/// `text` with every [`is_unsafe`] character but line breaks and tabs
/// escaped, and each sequence of `own` at an escape kept whole.
fn escape_keeping(text: &str, own: &[&str]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\u{1b}' {
            if let Some(sgr) = own.iter().find(|o| rest.starts_with(**o)) {
                out.push_str(sgr);
                rest = &rest[sgr.len()..];
                continue;
            }
        }
        if is_unsafe(c) && c != '\n' && c != '\t' {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The coloured words envbench writes, whole: a verdict in its colour
/// and the reset after it (`report::comparison::text::verdict_cell`). Any other
/// escape sequence comes from data: `ESC [ 8 m` (conceal) in a fingerprint
/// field would hide the rest of the output, and a colour in a CPU model
/// would paint what follows it.
const OWN_COLOURS: [&str; 4] = [
    "\u{1b}[32mfaster\u{1b}[0m",
    "\u{1b}[31mslower\u{1b}[0m",
    "\u{1b}[2mtie\u{1b}[0m",
    "\u{1b}[33munclear\u{1b}[0m",
];

/// The width envbench's terminal text wraps at: the comparison report's
/// sentences (its tables do not) and `list`.
pub(crate) const TEXT_WIDTH: usize = 120;

/// `s` after `first`, wrapped between words at `width` columns, each
/// further line after `rest`; a word longer than a line stays whole, and
/// so does a number with a space between its thousands (`27 578`).
pub(crate) fn wrap(s: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in words(s) {
        let len = line.chars().count() + usize::from(!empty) + word.chars().count();
        if !empty && len > width {
            out += line.trim_end();
            out += "\n";
            line = rest.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line += &word;
        empty = false;
    }
    out + line.trim_end() + "\n"
}

/// `s`'s words, split at spaces but for those between a number's
/// thousands: a group of three digits (with what may close a number
/// after it: `,.;:)]%`) after one to three digits (with `(` or `[`
/// before them) stays with them.
fn words(s: &str) -> Vec<String> {
    let digits = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
    let mut out: Vec<String> = Vec::new();
    // whether the last word is a number that a group may continue
    let mut open = false;
    for word in s.split(' ') {
        let group = word.trim_end_matches([',', '.', ';', ':', ')', ']', '%']);
        match out.last_mut() {
            Some(last) if open && group.len() == 3 && digits(group) => {
                last.push(' ');
                last.push_str(word);
                open = group.len() == word.len();
            }
            _ => {
                let lead = word.trim_start_matches(['(', '[']);
                open = digits(lead) && lead.len() <= 3;
                out.push(word.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_with_spaced_thousands_is_never_split() {
        // "1 046" would break after "1" at this width
        assert_eq!(
            wrap("from its 1 046 reads", 13, "", "  "),
            "from its\n  1 046 reads\n"
        );
        // three digits after a word that is no number are a word of their own
        assert_eq!(
            wrap("at 100 000 and x 200", 11, "", ""),
            "at 100 000\nand x 200\n"
        );
        assert_eq!(words("x 200 300 4000 500"), ["x", "200 300", "4000", "500"]);
        // beside what opens and closes it; a closed number takes no group
        assert_eq!(
            words("(1 046, 27 578.) 12, 345"),
            ["(1 046,", "27 578.)", "12,", "345"]
        );
        // the words join back into the text, spaces and all
        for text in ["", " a  1  000 ", "x 200 300 4000 500"] {
            assert_eq!(words(text).join(" "), text);
        }
    }

    #[test]
    fn output_keeps_lines_and_tabs_but_no_sequence() {
        assert_eq!(escape_output("a\tb\n"), "a\tb\n");
        // without colour even envbench's own verdict colour is not let through
        assert_eq!(
            escape_output("\u{1b}[32mfaster\u{1b}[0m"),
            "\\u{1b}[32mfaster\\u{1b}[0m"
        );
        assert_eq!(
            escape_output("\u{1b}[2J\u{1b}]0;t\u{7}"),
            "\\u{1b}[2J\\u{1b}]0;t\\u{7}"
        );
        assert_eq!(
            escape_output("x\u{202e}y\u{85}\r"),
            "x\\u{202e}y\\u{85}\\u{d}"
        );
    }

    #[test]
    fn coloured_output_keeps_only_envbench_s_whole_verdicts() {
        assert_eq!(
            escape_coloured_output("\u{1b}[32mfaster\u{1b}[0m\n"),
            "\u{1b}[32mfaster\u{1b}[0m\n"
        );
        // a colour that is not a whole verdict of envbench's is data
        assert_eq!(escape_coloured_output("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(
            escape_coloured_output("\u{1b}[32mok\u{1b}[0m"),
            "\\u{1b}[32mok\\u{1b}[0m"
        );
        // a sequence envbench never writes is data, and escaped
        assert_eq!(
            escape_coloured_output("\u{1b}[8mhidden"),
            "\\u{1b}[8mhidden"
        );
        assert_eq!(escape_coloured_output("\u{1b}[1;31mx"), "\\u{1b}[1;31mx");
    }

    #[test]
    fn escapes_controls_escape_sequences_and_bidi_overrides() {
        assert_eq!(escape("native"), "native");
        assert_eq!(escape("a\nb"), "a\\u{a}b");
        assert_eq!(escape("\u{1b}[2Jx"), "\\u{1b}[2Jx");
        assert_eq!(escape("ab\u{202e}cd"), "ab\\u{202e}cd");
        assert_eq!(escape("Ärger ✓"), "Ärger ✓");
        // tab, carriage return, C1 controls and DEL: one field, one line
        assert_eq!(escape("a\tb\rc"), "a\\u{9}b\\u{d}c");
        assert_eq!(escape("\u{85}\u{9b}\u{7f}"), "\\u{85}\\u{9b}\\u{7f}");
        assert_eq!(escape("\u{2066}x\u{2069}"), "\\u{2066}x\\u{2069}");
    }

    #[test]
    fn sentences_wrap_between_words_with_a_hanging_indent() {
        let s = "os: B slower in 8 of 8 cases, 3.5x to 400x: system calls (222x, 400x)";
        assert_eq!(wrap(s, 120, "  ", "      "), format!("  {s}\n"));
        let w = wrap(s, 30, "  ", "      ");
        assert_eq!(
            w,
            "  os: B slower in 8 of 8\n      cases, 3.5x to 400x:\n      system calls (222x,\n      400x)\n"
        );
        assert!(w.lines().all(|l| l.chars().count() <= 30));
        // a word longer than the line is kept whole on its own line
        let long = "x".repeat(40);
        assert_eq!(
            wrap(&format!("a {long} b"), 30, "", "  "),
            format!("a\n  {long}\n  b\n")
        );
    }
}
