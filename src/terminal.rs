//! Text from files on the terminal: control characters, escape sequences
//! and bidirectional overrides in a label or note could clear the screen,
//! set the window title or reorder what the user reads, so they are shown
//! escaped (`\u{1b}`), as Rust's `escape_debug` would.

/// Whether `c` must not reach a terminal raw: C0 and C1 controls (tab and
/// newline included: one field stays on one line), DEL, and the Unicode
/// format characters that reorder or hide text (bidi overrides and
/// isolates, zero-width marks, BOM).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// `s` with every [`is_unsafe`] character written as `\u{XX}`.
pub fn escape(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_escape_sequences_and_bidi_overrides() {
        assert_eq!(escape("native"), "native");
        assert_eq!(escape("a\nb"), "a\\u{a}b");
        assert_eq!(escape("\u{1b}[2Jx"), "\\u{1b}[2Jx");
        assert_eq!(escape("ab\u{202e}cd"), "ab\\u{202e}cd");
        assert_eq!(escape("Ärger ✓"), "Ärger ✓");
    }
}
