//! The two engines behind one history: the embedded SQLite file (the
//! default, no server) and a shared PostgreSQL store (`--db postgres://...`).
//! Both take the same statements, written with SQLite's `?1` placeholders
//! (turned into PostgreSQL's `$1` here), and answer rows of integers and
//! texts; the schema and its versions are in [`super::schema`].

use super::HistoryError;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a connection waits for another writer (SQLite) or for the
/// server to answer a connection (PostgreSQL, unless the URL sets
/// `connect_timeout`).
pub const BUSY_WAIT: Duration = Duration::from_secs(10);

/// Where a history lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Db {
    /// An SQLite file.
    File(PathBuf),
    /// A PostgreSQL connection URL (`postgres://` or `postgresql://`).
    Server(String),
}

impl Db {
    /// `postgres://` and `postgresql://` name a server; anything else is a path.
    pub fn parse(text: &str) -> Db {
        if is_server_url(text) {
            Db::Server(text.to_string())
        } else {
            Db::File(PathBuf::from(text))
        }
    }

    /// The file's path, or the URL with its password hidden: what messages show.
    pub fn shown(&self) -> String {
        match self {
            Db::File(p) => p.display().to_string(),
            Db::Server(url) => redact(url),
        }
    }
}

/// Whether `text` is a PostgreSQL URL.
pub fn is_server_url(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// `url` with the password of `user:password@` and of `password=`
/// replaced by `***`.
pub fn redact(url: &str) -> String {
    let url = match url.find("password=") {
        Some(i) => {
            let start = i + "password=".len();
            let end = url[start..].find('&').map_or(url.len(), |e| start + e);
            format!("{}***{}", &url[..start], &url[end..])
        }
        None => url.to_string(),
    };
    let Some((scheme, rest)) = url.split_once("://") else {
        return url;
    };
    let (auth_end, _) = rest
        .char_indices()
        .find(|(_, c)| matches!(c, '/' | '?'))
        .unwrap_or((rest.len(), ' '));
    match rest[..auth_end].rfind('@') {
        Some(at) => match rest[..at].split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***{}", &rest[at..]),
            None => url.clone(),
        },
        None => url.clone(),
    }
}

/// One value of a row or a statement's argument.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// An integer (ids).
    Int(i64),
    /// A text.
    Text(String),
}

impl Cell {
    /// The integer, or 0 for a text.
    pub fn int(&self) -> i64 {
        match self {
            Cell::Int(i) => *i,
            Cell::Text(_) => 0,
        }
    }

    /// The text, or empty for an integer.
    pub fn into_text(self) -> String {
        match self {
            Cell::Text(t) => t,
            Cell::Int(_) => String::new(),
        }
    }
}

/// An open connection.
pub enum Conn {
    /// The embedded engine.
    Lite(rusqlite::Connection),
    /// A server; `RefCell` because its client takes `&mut` for every query.
    Pg(RefCell<postgres::Client>),
}

/// What went wrong, before it is named with the database's place.
pub enum Failure {
    /// From SQLite.
    Lite(rusqlite::Error),
    /// From PostgreSQL.
    Pg(postgres::Error),
}

impl Conn {
    /// Opens the SQLite file at `path` (created unless `read_only`).
    pub fn sqlite(path: &Path, read_only: bool) -> Result<Conn, rusqlite::Error> {
        let conn = if read_only {
            let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
                | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
            rusqlite::Connection::open_with_flags(path, flags)?
        } else {
            rusqlite::Connection::open(path)?
        };
        conn.busy_timeout(BUSY_WAIT)?;
        Ok(Conn::Lite(conn))
    }

    /// An empty in-memory SQLite database: the history that does not exist yet.
    pub fn empty() -> Result<Conn, rusqlite::Error> {
        Ok(Conn::Lite(rusqlite::Connection::open_in_memory()?))
    }

    /// Connects to the server at `url`, waiting at most [`BUSY_WAIT`] unless
    /// the URL says otherwise.
    ///
    /// # Errors
    /// [`HistoryError::Server`] for a URL that does not parse, a TLS demand
    /// (this client speaks plain connections), or a server that does not
    /// answer or refuses.
    pub fn postgres(url: &str) -> Result<Conn, HistoryError> {
        let shown = redact(url);
        let mut config: postgres::Config = url.parse().map_err(|e| HistoryError::Server {
            place: shown.clone(),
            cause: format!("not a PostgreSQL URL this envbench can read ({e})"),
        })?;
        if config.get_ssl_mode() == postgres::config::SslMode::Require {
            return Err(HistoryError::Server {
                place: shown,
                cause: "sslmode=require: this envbench connects without TLS; reach the server over a Unix socket, the loopback or an SSH tunnel".into(),
            });
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(BUSY_WAIT);
        }
        if config.get_application_name().is_none() {
            config.application_name("envbench");
        }
        let client = config
            .connect(postgres::NoTls)
            .map_err(|e| HistoryError::Server {
                place: shown,
                cause: pg_cause(&e),
            })?;
        Ok(Conn::Pg(RefCell::new(client)))
    }

    /// Whether this is the server.
    pub fn is_server(&self) -> bool {
        matches!(self, Conn::Pg(_))
    }

    /// Runs `sql` (several statements, no arguments).
    pub fn batch(&self, sql: &str) -> Result<(), Failure> {
        match self {
            Conn::Lite(c) => c.execute_batch(sql).map_err(Failure::Lite),
            Conn::Pg(c) => c.borrow_mut().batch_execute(sql).map_err(Failure::Pg),
        }
    }

    /// The rows `sql` answers with `args` bound to `?1`, `?2` ...
    pub fn rows(&self, sql: &str, args: &[Cell]) -> Result<Vec<Vec<Cell>>, Failure> {
        match self {
            Conn::Lite(c) => lite_rows(c, sql, args).map_err(Failure::Lite),
            Conn::Pg(c) => pg_rows(&mut c.borrow_mut(), sql, args).map_err(Failure::Pg),
        }
    }
}

fn lite_rows(
    c: &rusqlite::Connection,
    sql: &str,
    args: &[Cell],
) -> Result<Vec<Vec<Cell>>, rusqlite::Error> {
    use rusqlite::types::{Value, ValueRef};
    let values: Vec<Value> = args
        .iter()
        .map(|a| match a {
            Cell::Int(i) => Value::Integer(*i),
            Cell::Text(t) => Value::Text(t.clone()),
        })
        .collect();
    let mut stmt = c.prepare(sql)?;
    let width = stmt.column_count();
    let rows = stmt.query_map(rusqlite::params_from_iter(values), |r| {
        (0..width)
            .map(|i| {
                Ok(match r.get_ref(i)? {
                    ValueRef::Integer(n) => Cell::Int(n),
                    ValueRef::Null => Cell::Text(String::new()),
                    v => Cell::Text(v.as_str().unwrap_or_default().to_string()),
                })
            })
            .collect()
    })?;
    rows.collect()
}

fn pg_rows(
    c: &mut postgres::Client,
    sql: &str,
    args: &[Cell],
) -> Result<Vec<Vec<Cell>>, postgres::Error> {
    let sql = sql.replace('?', "$");
    let bound: Vec<Box<dyn postgres::types::ToSql + Sync>> = args
        .iter()
        .map(|a| -> Box<dyn postgres::types::ToSql + Sync> {
            match a {
                Cell::Int(i) => Box::new(*i),
                Cell::Text(t) => Box::new(t.clone()),
            }
        })
        .collect();
    let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = bound.iter().map(AsRef::as_ref).collect();
    let rows = c.query(sql.as_str(), &refs)?;
    rows.iter()
        .map(|r| {
            (0..r.len())
                .map(|i| {
                    Ok(if *r.columns()[i].type_() == postgres::types::Type::INT8 {
                        Cell::Int(r.try_get(i)?)
                    } else {
                        Cell::Text(r.try_get::<_, Option<String>>(i)?.unwrap_or_default())
                    })
                })
                .collect()
        })
        .collect()
}

/// What a PostgreSQL error means for the person: the server's own message
/// where it sent one, else the client's (refused, timed out, closed).
pub fn pg_cause(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None if e.is_closed() => "the server closed the connection".into(),
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                text = format!("{text}: {s}");
                source = s.source();
            }
            text
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_servers_and_hide_their_passwords() {
        assert_eq!(
            Db::parse("postgres://u:secret@db.lab:5432/envbench"),
            Db::Server("postgres://u:secret@db.lab:5432/envbench".into())
        );
        assert!(is_server_url("PostgreSQL://h/db"));
        assert_eq!(Db::parse("h.sqlite3"), Db::File("h.sqlite3".into()));
        assert_eq!(
            redact("postgres://u:secret@db.lab:5432/envbench?x=1"),
            "postgres://u:***@db.lab:5432/envbench?x=1"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(
            redact("postgres://h/db?password=a@b&user=u"),
            "postgres://h/db?password=***&user=u"
        );
        assert_eq!(
            Db::Server("postgresql://a:b@h".into()).shown(),
            "postgresql://a:***@h"
        );
    }

    #[test]
    fn a_tls_demand_and_a_bad_url_are_refused_before_connecting() {
        for (url, says) in [
            ("postgres://u@127.0.0.1:1/db?sslmode=require", "without TLS"),
            ("postgres://u@h:notaport/db", "not a PostgreSQL URL"),
        ] {
            let Err(e) = Conn::postgres(url) else {
                panic!("{url} accepted")
            };
            assert!(e.to_string().contains(says), "{e}");
        }
    }
}
