//! The values of the command line's options, each parsed and bounded as
//! clap reads it: whole numbers, repetition ranges, seconds, percentages,
//! `KEY=VALUE` pairs and `--dir [NAME=]PATH`. A value refused here is
//! refused by clap, with the message returned.

use std::path::PathBuf;

pub(super) fn parse_key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v))
            if !k.trim().is_empty()
                && k.trim()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_') =>
        {
            Ok((k.trim().to_string(), v.trim().to_string()))
        }
        _ => Err(format!("'{s}' is not KEY=VALUE with a snake_case KEY")),
    }
}

/// Most warm-up repetitions: warm-up runs before the case's time budget
/// starts, so a large count would make the progress estimate a lie.
pub const MAX_WARMUP: u32 = 100;

/// A whole number of at most `max`, with a message that says what is wrong.
fn parse_whole(t: &str, max: u64) -> Result<u64, String> {
    let t = t.trim();
    let digits = t.strip_prefix('+').unwrap_or(t);
    if let Some(rest) = t.strip_prefix('-') {
        if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "'{t}' is negative: a positive whole number is needed"
            ));
        }
    }
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{t}' is not a whole number"));
    }
    match digits.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!("'{t}' is too large (at most {max})")),
    }
}

pub(super) fn parse_threads(s: &str) -> Result<usize, String> {
    let cap = crate::bench::os::HARD_CAP;
    match parse_whole(s, u64::MAX) {
        Ok(0) => Err("0 threads: thread counts must be positive whole numbers".into()),
        Ok(n) if n > cap as u64 => Err(format!(
            "'{}' is above envbench's hard cap of {cap} threads (it measures, it does not stress-test)",
            s.trim()
        )),
        Ok(n) => Ok(n as usize),
        Err(e) if e.contains("negative") => Err(format!(
            "'{}': thread counts must be positive whole numbers",
            s.trim()
        )),
        Err(e) => Err(e.replace("at most 18446744073709551615", &format!("at most {cap}"))),
    }
}

pub(super) fn parse_warmup(s: &str) -> Result<u32, String> {
    parse_whole(s, u64::from(MAX_WARMUP))
        .map(|n| n as u32)
        .map_err(|e| format!("{e}: warm-up repetitions run outside the case's time budget"))
}

/// Most repetitions per case: the minimum runs whatever the budget, so an
/// unbounded one (`--reps 4294967295`) would never end; 10 000 of the
/// cheapest case take seconds, and every sample is kept in the file.
pub const MAX_REPS: u32 = 10_000;

pub(super) fn parse_reps(s: &str) -> Result<(u32, u32), String> {
    let parse = |t: &str| {
        parse_whole(t, u64::from(MAX_REPS))
            .map(|n| n as u32)
            .map_err(|e| format!("{e}: the minimum runs whatever the budget"))
    };
    let (min, max) = match s.split_once("..") {
        Some((a, b)) => (parse(a)?, parse(b)?),
        None => {
            let n = parse(s)?;
            (n, n)
        }
    };
    if min < 2 {
        return Err(
            "at least 2 repetitions are needed for a median and its confidence interval".into(),
        );
    }
    if max < min {
        return Err(format!("MAX ({max}) is smaller than MIN ({min})"));
    }
    Ok((min, max))
}

pub(super) fn parse_positive_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(_) => Err("must be a positive number of seconds".into()),
        Err(_) => Err(format!("'{s}' is not a number of seconds")),
    }
}

/// Longest `--wait-idle`: an hour; longer is better done by a scheduler.
pub const MAX_WAIT_IDLE_SECS: f64 = 3600.0;

pub(super) fn parse_wait_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= MAX_WAIT_IDLE_SECS => Ok(v),
        Ok(_) => Err(format!(
            "'{s}': the wait must be a positive number of seconds, at most {MAX_WAIT_IDLE_SECS}"
        )),
        Err(_) => Err(format!("'{s}' is not a number of seconds")),
    }
}

/// A `--dir` value: `NAME=PATH` or a plain `PATH`.
#[derive(Debug, Clone, PartialEq)]
pub struct DirArg {
    /// The name given, if any.
    pub name: Option<String>,
    /// The directory.
    pub path: PathBuf,
}

/// A `--cmd` value: `NAME=COMMAND`, or a plain `COMMAND` (named cmd1,
/// cmd2 ... by position).
#[derive(Debug, Clone, PartialEq)]
pub struct CmdArg {
    /// The name given, if any.
    pub name: Option<String>,
    /// The command's text.
    pub text: String,
}

/// `NAME=COMMAND` where the text before the first `=` is a name (letters,
/// digits, `_`, `-`: `make CC=gcc` stays a command); the command must hold
/// a word.
pub(super) fn parse_cmd(s: &str) -> Result<CmdArg, String> {
    let (name, text) = match s.split_once('=') {
        Some((name, text)) if valid_name(name) => (Some(name.to_string()), text),
        _ => (None, s),
    };
    if text.trim().is_empty() {
        return Err(format!(
            "'{s}' gives no command: --cmd NAME='PROGRAM ARGS...' (the name is {NAME_RULE})"
        ));
    }
    Ok(CmdArg {
        name,
        text: text.to_string(),
    })
}

/// `NAME=PATH` when the text before the first `=` holds no `/` (a path
/// such as `/tmp/a=b` stays a path); the name must be `[A-Za-z0-9_-]+`.
pub(super) fn parse_dir(s: &str) -> Result<DirArg, String> {
    let named = s.split_once('=').filter(|(name, _)| !name.contains('/'));
    let Some((name, path)) = named else {
        return Ok(DirArg {
            name: None,
            path: PathBuf::from(s),
        });
    };
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if name.is_empty() || !name.chars().all(valid) {
        return Err(format!(
            "'{name}' is not a directory name: use letters, digits, '_' and '-' (NAME=PATH), \
             or write ./{s} for a path holding '='"
        ));
    }
    if path.is_empty() {
        return Err(format!("{name}= names no directory: write {name}=PATH"));
    }
    Ok(DirArg {
        name: Some(name.to_string()),
        path: PathBuf::from(path),
    })
}

/// An `--in` value: `NAME` (this host as it is) or `NAME=PREFIX`, the
/// prefix split into words ([`split_words`]).
#[derive(Debug, Clone, PartialEq)]
pub struct InArg {
    /// The environment's name, `[A-Za-z0-9_-]+`.
    pub name: String,
    /// The prefix's words; empty for none.
    pub prefix: Vec<String>,
}

/// The rule of an environment's name, for messages.
const NAME_RULE: &str = "letters, digits, '_' and '-', starting with a letter or digit";

/// Whether `name` names an environment: it may not start with '-', which
/// would read as a flag wherever the name is typed again (`--in=-x`).
fn valid_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

pub(super) fn parse_in(s: &str) -> Result<InArg, String> {
    let (name, prefix) = match s.split_once('=') {
        Some((name, prefix)) => (name, Some(prefix)),
        None => (s, None),
    };
    if !valid_name(name) {
        return Err(format!(
            "'{name}' is not an environment name: use {NAME_RULE} (NAME or NAME=PREFIX)"
        ));
    }
    let prefix = match prefix {
        None => Vec::new(),
        Some(p) => {
            let words = split_words(p)?;
            if words.is_empty() {
                return Err(format!(
                    "{name}= gives no prefix: write {name} alone for this host as it is, or \
                     {name}='PROGRAM ARGS...'"
                ));
            }
            words
        }
    };
    Ok(InArg {
        name: name.to_string(),
        prefix,
    })
}

/// An `--in-binary` value: `NAME=PATH`.
pub(super) fn parse_in_binary(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, path)) if valid_name(name) && !path.is_empty() => {
            Ok((name.to_string(), PathBuf::from(path)))
        }
        Some((name, _)) if valid_name(name) => Err(format!(
            "{name}= names no binary: write {name}=PATH, envbench's path inside {name}"
        )),
        _ => Err(format!(
            "'{s}' is not NAME=PATH with an --in NAME ({NAME_RULE})"
        )),
    }
}

/// Characters a shell would act on outside quotes; no shell runs a
/// prefix, so each would reach the program as it is: refused unquoted.
const SHELL_ONLY: &str = "|&;<>()$`*?";

/// Splits a command prefix into words as a POSIX shell splits a simple
/// command, without running one: blanks separate words; `'...'` keeps
/// everything literally; `"..."` keeps everything but `\` before `"`,
/// `\`, `$` or `` ` ``; a backslash outside quotes keeps the next
/// character. Nothing is expanded.
///
/// # Errors
/// An unterminated quote or trailing backslash, and the characters of
/// pipes, lists, redirections, substitutions and globs outside quotes
/// ([`SHELL_ONLY`], `~` and `#` starting a word), which only a shell acts on.
pub(crate) fn split_words(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(q) => w.push(q),
                        None => return Err(format!("{s}: a ' is never closed")),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => w.push(e),
                            Some('\n') => {}
                            Some(other) => {
                                w.push('\\');
                                w.push(other);
                            }
                            None => return Err(format!("{s}: a \" is never closed")),
                        },
                        Some(q) => w.push(q),
                        None => return Err(format!("{s}: a \" is never closed")),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(e) => word.get_or_insert_with(String::new).push(e),
                None => return Err(format!("{s}: ends in a lone backslash")),
            },
            c if SHELL_ONLY.contains(c) || (word.is_none() && (c == '~' || c == '#')) => {
                return Err(format!(
                    "{s}: '{c}' outside quotes: no shell runs the prefix, so it would reach the \
                     program as it is; quote it if that is meant, or give the program's own \
                     arguments (a path in full, no pipes or redirections)"
                ));
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

pub(super) fn parse_percent(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v > 0.0 && v < 100.0 => Ok(v / 100.0),
        _ => Err(format!("'{s}' is not a percentage between 0 and 100")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rep_ranges() {
        assert_eq!(parse_reps("5..30"), Ok((5, 30)));
        assert_eq!(parse_reps("10"), Ok((10, 10)));
        assert!(parse_reps("0").is_err());
        assert!(parse_reps("1..5").is_err());
        assert!(parse_reps("9..3").is_err());
        assert!(parse_reps("a..b").is_err());
        assert!(parse_reps("99999999999").unwrap_err().contains("too large"));
        assert!(parse_reps("-3").unwrap_err().contains("negative"));
    }

    #[test]
    fn thread_counts_are_positive_and_capped() {
        assert_eq!(parse_threads("8"), Ok(8));
        assert!(parse_threads("0").unwrap_err().contains("positive"));
        assert!(parse_threads("-1")
            .unwrap_err()
            .contains("positive whole numbers"));
        assert!(parse_threads("5000").unwrap_err().contains("cap of 4096"));
        assert!(parse_threads("99999999999999999999")
            .unwrap_err()
            .contains("too large (at most 4096)"));
        assert!(parse_threads("two")
            .unwrap_err()
            .contains("not a whole number"));
    }

    #[test]
    fn warmup_is_bounded() {
        assert_eq!(parse_warmup("0"), Ok(0));
        assert!(parse_warmup("4294967295")
            .unwrap_err()
            .contains("at most 100"));
    }

    #[test]
    fn dirs_are_named_or_plain_paths() {
        let named = parse_dir("ext4=/home/me/w").unwrap();
        assert_eq!(named.name.as_deref(), Some("ext4"));
        assert_eq!(named.path, PathBuf::from("/home/me/w"));
        assert_eq!(parse_dir("/tmp/a=b").unwrap().name, None);
        assert_eq!(parse_dir(".").unwrap().path, PathBuf::from("."));
        assert!(parse_dir("=/tmp")
            .unwrap_err()
            .contains("not a directory name"));
        assert!(parse_dir("my dir=/tmp")
            .unwrap_err()
            .contains("letters, digits"));
        assert!(parse_dir("a=").unwrap_err().contains("a=PATH"));
    }

    fn words(s: &str) -> Vec<String> {
        split_words(s).unwrap()
    }

    #[test]
    fn prefixes_split_into_words_as_a_shell_would() {
        assert_eq!(
            words("runsc --network=none do"),
            ["runsc", "--network=none", "do"]
        );
        assert_eq!(words("  ssh\t-T   guest \n"), ["ssh", "-T", "guest"]);
        assert_eq!(words("a 'b c' \"d e\" f\\ g"), ["a", "b c", "d e", "f g"]);
        assert_eq!(words("x'y'\"z\""), ["xyz"]);
        assert_eq!(words("'' \"\""), ["", ""]);
        // single quotes keep everything; double quotes drop only their escapes
        assert_eq!(
            words(r#"'a\"b$c' "a\"b\$c\d" \$"#),
            [r#"a\"b$c"#, r#"a"b$c\d"#, "$"]
        );
        assert_eq!(words("'|;&' \"*?\" a\\|b"), ["|;&", "*?", "a|b"]);
        assert_eq!(words("a=~ b#c"), ["a=~", "b#c"]);
        assert_eq!(words(""), Vec::<String>::new());
    }

    #[test]
    fn what_only_a_shell_would_act_on_is_refused() {
        for (bad, what) in [
            ("ssh guest | tee log", "'|'"),
            ("a; b", "';'"),
            ("a && b", "'&'"),
            ("a > out", "'>'"),
            ("echo $HOME", "'$'"),
            ("echo `id`", "'`'"),
            ("ls *", "'*'"),
            ("ssh -i ~/.ssh/k guest", "'~'"),
            ("a #comment", "'#'"),
        ] {
            let err = split_words(bad).unwrap_err();
            assert!(
                err.contains(what) && err.contains("no shell"),
                "{bad}: {err}"
            );
        }
        assert!(split_words("'open").unwrap_err().contains("never closed"));
        assert!(split_words("\"open").unwrap_err().contains("never closed"));
        assert!(split_words("a\\").unwrap_err().contains("lone backslash"));
    }

    #[test]
    fn environments_are_named_with_or_without_a_prefix() {
        assert_eq!(
            parse_in("host").unwrap(),
            InArg {
                name: "host".into(),
                prefix: vec![]
            }
        );
        let g = parse_in("gvisor=runsc --network=none do").unwrap();
        assert_eq!((g.name.as_str(), g.prefix.len()), ("gvisor", 3));
        assert!(parse_in("a b=x")
            .unwrap_err()
            .contains("not an environment name"));
        assert!(parse_in("=x")
            .unwrap_err()
            .contains("not an environment name"));
        assert!(parse_in("vm=").unwrap_err().contains("gives no prefix"));
        assert!(parse_in("vm=  ").unwrap_err().contains("gives no prefix"));
        assert_eq!(
            parse_in_binary("vm=/usr/local/bin/envbench").unwrap(),
            ("vm".into(), PathBuf::from("/usr/local/bin/envbench"))
        );
        assert!(parse_in_binary("vm=")
            .unwrap_err()
            .contains("names no binary"));
        assert!(parse_in_binary("/x").unwrap_err().contains("NAME=PATH"));
    }

    #[test]
    fn budget_must_be_positive() {
        assert!(parse_positive_secs("0").is_err());
        assert!(parse_positive_secs("-3").is_err());
        assert!(parse_positive_secs("inf").is_err());
        assert_eq!(parse_positive_secs("2.5"), Ok(2.5));
    }
}
