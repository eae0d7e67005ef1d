//! The password for a store URL that names none, where libpq and `psql`
//! look for it: `PGPASSWORD`, else the password file (`PGPASSFILE`, else
//! `~/.pgpass`). The file is read as libpq reads it: lines of
//! `host:port:database:user:password`, `*` matching anything, `\` escaping
//! `:` and `\`, `#` starting a comment, the first matching line winning; a
//! Unix socket's host matches `localhost` or the socket's directory; a file
//! that its group or others can read is ignored, with a warning.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// Where the password came from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The `PGPASSWORD` variable.
    Variable,
    /// A password file.
    File(PathBuf),
}

/// Sets the password of `config` from `PGPASSWORD` or the password file
/// when the URL gave none. Returns where it came from, or a warning about
/// a password file that was passed over.
pub(crate) fn fill(config: &mut postgres::Config) -> (Option<Source>, Option<String>) {
    if config.get_password().is_some() {
        return (None, None);
    }
    if let Some(pw) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
        config.password(std::os::unix::ffi::OsStrExt::as_bytes(pw.as_os_str()));
        return (Some(Source::Variable), None);
    }
    let Some(file) = password_file() else {
        return (None, None);
    };
    let text = match read_private(&file) {
        Ok(Some(text)) => text,
        Ok(None) => return (None, None),
        Err(warning) => return (None, Some(warning)),
    };
    let user = config
        .get_user()
        .map(str::to_string)
        .or_else(os_user)
        .unwrap_or_default();
    let want = Wanted {
        hosts: host_names(config),
        port: config
            .get_ports()
            .first()
            .copied()
            .unwrap_or(5432)
            .to_string(),
        database: config.get_dbname().unwrap_or(&user).to_string(),
        user: user.clone(),
    };
    match lookup(&text, &want) {
        Some(pw) => {
            config.password(pw);
            (Some(Source::File(file)), None)
        }
        None => (None, None),
    }
}

/// What a line must match.
struct Wanted {
    /// The names the host goes by (a socket: `localhost` and its directory).
    hosts: Vec<String>,
    port: String,
    database: String,
    user: String,
}

fn password_file() -> Option<PathBuf> {
    match std::env::var_os("PGPASSFILE").filter(|p| !p.is_empty()) {
        Some(p) => Some(PathBuf::from(p)),
        None => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| Path::new(&h).join(".pgpass")),
    }
}

/// The file's text: None when there is no such regular file; a warning
/// when its group or others may read it (libpq ignores it then too).
fn read_private(file: &Path) -> Result<Option<String>, String> {
    let Ok(meta) = std::fs::metadata(file) else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Ok(None);
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "password file {} has group or world access and is ignored; permissions should be u=rw (0600) or less",
            crate::terminal::escape(&file.display().to_string())
        ));
    }
    // bounded: a password file is a few lines
    let mut text = String::new();
    use std::io::Read as _;
    std::fs::File::open(file)
        .and_then(|f| f.take(1 << 20).read_to_string(&mut text))
        .map_or(Ok(None), |_| Ok(Some(text)))
}

fn host_names(config: &postgres::Config) -> Vec<String> {
    match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => vec![h.clone()],
        Some(postgres::config::Host::Unix(dir)) => {
            vec!["localhost".into(), dir.display().to_string()]
        }
        None => vec!["localhost".into()],
    }
}

fn os_user() -> Option<String> {
    // SAFETY: getpwuid returns a pointer into static storage or null; the
    // name is copied out at once, on this thread
    unsafe {
        let pw = libc::getpwuid(libc::geteuid());
        if pw.is_null() {
            return None;
        }
        std::ffi::CStr::from_ptr((*pw).pw_name)
            .to_str()
            .ok()
            .map(str::to_string)
    }
}

/// The password of the first line matching `want`.
fn lookup(text: &str, want: &Wanted) -> Option<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(fields)
        .find(|f| {
            let is = |field: &str, value: &str| field == "*" || field == value;
            want.hosts.iter().any(|h| is(&f[0], h))
                && is(&f[1], &want.port)
                && is(&f[2], &want.database)
                && is(&f[3], &want.user)
        })
        .map(|mut f| f.swap_remove(4))
}

/// The five fields of a line (`\` escaping `:` and `\`); None for a line
/// with fewer. The password runs to the end of the line.
fn fields(line: &str) -> Option<Vec<String>> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.last_mut()?.push(chars.next().unwrap_or('\\')),
            ':' if out.len() < 5 => out.push(String::new()),
            c => out.last_mut()?.push(c),
        }
    }
    (out.len() == 5).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn want(host: &str) -> Wanted {
        Wanted {
            hosts: vec![host.into()],
            port: "5432".into(),
            database: "envbench".into(),
            user: "bench".into(),
        }
    }

    #[test]
    fn the_first_matching_line_gives_the_password_with_wildcards_and_escapes() {
        let text = "# comment\n\
                    other:5432:envbench:bench:no\n\
                    db.lab:*:envbench:bench:pa\\:ss\\\\w:rd\n\
                    *:*:*:*:fallback\n";
        assert_eq!(
            lookup(text, &want("db.lab")).as_deref(),
            Some("pa:ss\\w:rd")
        );
        assert_eq!(
            lookup(text, &want("elsewhere")).as_deref(),
            Some("fallback")
        );
        assert_eq!(
            lookup("db.lab:5432:envbench:bench\n", &want("db.lab")),
            None
        );
        let mut w = want("db.lab");
        w.port = "5433".into();
        assert_eq!(lookup("db.lab:5432:*:*:x\n", &w), None);
    }

    #[test]
    fn a_file_others_can_read_is_passed_over_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "*:*:*:*:secret\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let warning = read_private(&file).unwrap_err();
        assert!(warning.contains("group or world access"), "{warning}");
        assert!(!warning.contains("secret"));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            read_private(&file).unwrap().as_deref(),
            Some("*:*:*:*:secret\n")
        );
        assert_eq!(read_private(&dir.path().join("none")).unwrap(), None);
    }
}
