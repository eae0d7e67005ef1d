//! The two engines behind one history: the embedded SQLite file (the
//! default, no server) and a shared PostgreSQL store (`--db postgres://...`).
//! Both take the same statements, written with SQLite's `?1` placeholders
//! (turned into PostgreSQL's `$1` here), and answer rows of integers and
//! texts; the schema and its versions are in [`super::schema`].

use super::HistoryError;
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
    pub(crate) fn shown(&self) -> String {
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

/// `url` with the password of `user:password@` and of every `password=`
/// replaced by `***`. A password may hold `/`, `?`, `@` or `:` unencoded,
/// so the user's part runs to the last `@`: a URL that is not what it
/// seems hides too much rather than too little.
pub(crate) fn redact(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let mut rest = url;
    while let Some(i) = rest.find("password=") {
        let start = i + "password=".len();
        out.push_str(&rest[..start]);
        out.push_str("***");
        rest = &rest[start..];
        rest = &rest[rest.find('&').unwrap_or(rest.len())..];
    }
    out.push_str(rest);
    let Some((scheme, rest)) = out.split_once("://") else {
        return out;
    };
    let Some(at) = rest.rfind('@') else {
        return out;
    };
    match rest[..at].split_once(':') {
        Some((user, _)) if !user.contains(['/', '?', '@']) => {
            format!("{scheme}://{user}:***{}", &rest[at..])
        }
        _ => out.clone(),
    }
}

/// What is wrong with a store URL before it is parsed, in words: TLS
/// demands (this client speaks plain connections) and `sslmode` values
/// the driver would only call an invalid connection string.
fn url_problem(url: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    let mode = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("sslmode="))?;
    match mode {
        "disable" | "prefer" => None,
        "require" | "verify-ca" | "verify-full" => Some(format!(
            "sslmode={mode}: this envbench connects without TLS; reach the server over a Unix socket, the loopback or an SSH tunnel"
        )),
        "allow" => Some("sslmode=allow: give sslmode=disable or prefer (this envbench connects without TLS)".into()),
        other => Some(format!(
            "sslmode={}: not one of disable, allow, prefer, require, verify-ca, verify-full",
            crate::terminal::escape(other)
        )),
    }
}

/// `url` with its scheme in lower case (`POSTGRES://` names a server too).
fn lower_scheme(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => format!("{}://{rest}", scheme.to_ascii_lowercase()),
        None => url.to_string(),
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
    pub(crate) fn int(&self) -> i64 {
        match self {
            Cell::Int(i) => *i,
            Cell::Text(_) => 0,
        }
    }

    /// The text, or empty for an integer.
    pub(crate) fn into_text(self) -> String {
        match self {
            Cell::Text(t) => t,
            Cell::Int(_) => String::new(),
        }
    }
}

/// How long one exchange with the server (a statement and its answer)
/// may take before the command gives up on it.
pub const EXCHANGE_DEADLINE: Duration = Duration::from_secs(30);

/// An open connection.
pub enum Conn {
    /// The embedded engine.
    Lite(rusqlite::Connection),
    /// A server, served by a thread of its own.
    Pg(PgConn),
}

/// What the server's thread does for one exchange.
type PgJob = Box<dyn FnOnce(&mut postgres::Client) -> PgAnswer + Send>;
type PgAnswer = Result<Vec<Vec<Cell>>, postgres::Error>;

/// A server connection whose client lives on a thread of its own, so that
/// every exchange has a deadline: a server that accepts the connection and
/// never answers cannot hang a command (the synchronous client has a
/// timeout only for the socket's connect). After a missed deadline the
/// connection is given up; its thread ends with the process.
pub struct PgConn {
    jobs: std::sync::mpsc::Sender<PgJob>,
    answers: std::sync::mpsc::Receiver<PgAnswer>,
    given_up: std::cell::Cell<bool>,
}

impl PgConn {
    /// Connects on a new thread, waiting at most `deadline` for the
    /// server to complete the handshake.
    fn connect(config: postgres::Config, deadline: Duration) -> Result<PgConn, Failure> {
        let (jobs, job_rx) = std::sync::mpsc::channel::<PgJob>();
        let (answer_tx, answers) = std::sync::mpsc::channel::<PgAnswer>();
        let (ready_tx, ready) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("envbench-postgres".into())
            .spawn(move || {
                let mut client = match config.connect(postgres::NoTls) {
                    Ok(c) => {
                        let _ = ready_tx.send(Ok(()));
                        c
                    }
                    Err(e) => return drop(ready_tx.send(Err(e))),
                };
                for job in job_rx {
                    if answer_tx.send(job(&mut client)).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| {
                Failure::Deadline(format!("cannot start a thread for the connection: {e}"))
            })?;
        match ready.recv_timeout(deadline) {
            Ok(Ok(())) => Ok(PgConn {
                jobs,
                answers,
                given_up: std::cell::Cell::new(false),
            }),
            Ok(Err(e)) => Err(Failure::Pg(e)),
            Err(_) => Err(Failure::Deadline(format!(
                "the server did not complete the connection within {} s (it may accept \
                 connections and never answer)",
                deadline.as_secs()
            ))),
        }
    }

    /// Runs `job` on the connection's thread, waiting at most
    /// [`EXCHANGE_DEADLINE`] for its answer.
    fn exchange(&self, what: &str, job: PgJob) -> Result<Vec<Vec<Cell>>, Failure> {
        if self.given_up.get() {
            return Err(Failure::Deadline(
                "the connection was lost earlier (closed by the server, or given up when an exchange got no answer)".into(),
            ));
        }
        let lost = || Failure::Deadline("the connection's thread ended".into());
        self.jobs.send(job).map_err(|_| lost())?;
        match self.answers.recv_timeout(EXCHANGE_DEADLINE) {
            Ok(answer) => answer.map_err(|e| {
                if e.is_closed() {
                    self.given_up.set(true);
                }
                Failure::Pg(e)
            }),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                self.given_up.set(true);
                Err(Failure::Deadline(format!(
                    "no answer to {what} within {} s",
                    EXCHANGE_DEADLINE.as_secs()
                )))
            }
            Err(_) => {
                self.given_up.set(true);
                Err(lost())
            }
        }
    }
}

/// What went wrong, before it is named with the database's place.
pub enum Failure {
    /// From SQLite.
    Lite(rusqlite::Error),
    /// From PostgreSQL.
    Pg(postgres::Error),
    /// The server did not answer in time, or the connection was given up.
    Deadline(String),
}

impl Conn {
    /// Opens the SQLite file at `path` (created unless `read_only`).
    pub(crate) fn sqlite(path: &Path, read_only: bool) -> Result<Conn, rusqlite::Error> {
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
    pub(crate) fn empty() -> Result<Conn, rusqlite::Error> {
        Ok(Conn::Lite(rusqlite::Connection::open_in_memory()?))
    }

    /// Connects to the server at `url`, waiting at most [`BUSY_WAIT`] unless
    /// the URL says otherwise.
    ///
    /// # Errors
    /// [`HistoryError::Server`] for a URL that does not parse, a TLS demand
    /// (this client speaks plain connections), or a server that does not
    /// answer or refuses.
    pub(crate) fn postgres(url: &str) -> Result<Conn, HistoryError> {
        let shown = redact(url);
        let refuse = |cause: String| HistoryError::Server {
            place: shown.clone(),
            cause,
        };
        if let Some(problem) = url_problem(url) {
            return Err(refuse(problem));
        }
        let mut config: postgres::Config = lower_scheme(url).parse().map_err(|e| {
            refuse(format!(
                "not a PostgreSQL URL this envbench can read ({e}); a password with /, ?, @, : or # must be percent-encoded (/ as %2F)"
            ))
        })?;
        if config.get_ssl_mode() == postgres::config::SslMode::Require {
            return Err(refuse(
                "sslmode=require: this envbench connects without TLS; reach the server over a Unix socket, the loopback or an SSH tunnel".into(),
            ));
        }
        let (password_from, warning) = super::pgpass::fill(&mut config);
        if let Some(w) = warning {
            eprintln!("envbench: warning: {w}");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(BUSY_WAIT);
        }
        if config.get_application_name().is_none() {
            config.application_name("envbench");
        }
        let deadline = config.get_connect_timeout().copied().unwrap_or(BUSY_WAIT);
        let conn = PgConn::connect(config, deadline).map_err(|f| {
            let cause = match f {
                Failure::Pg(e) => pg_cause(&e),
                Failure::Deadline(why) => why,
                Failure::Lite(e) => e.to_string(),
            };
            let from = match &password_from {
                Some(super::pgpass::Source::Variable) => {
                    " (the password from PGPASSWORD)".to_string()
                }
                Some(super::pgpass::Source::File(f)) => format!(
                    " (the password from {})",
                    crate::terminal::escape(&f.display().to_string())
                ),
                None => String::new(),
            };
            refuse(format!("{cause}{from}"))
        })?;
        Ok(Conn::Pg(conn))
    }

    /// Whether the server's connection was closed or given up: every
    /// further exchange would fail.
    pub(crate) fn is_lost(&self) -> bool {
        match self {
            Conn::Lite(_) => false,
            Conn::Pg(c) => c.given_up.get(),
        }
    }

    /// Why runs cannot be written through this connection, if they
    /// cannot: a file SQLite opened read-only, a role without INSERT and
    /// UPDATE on the runs (`table`), a session that is read-only. Asked
    /// before measuring, so a run is not made only to be lost.
    pub(crate) fn cannot_write(&self, table: &str) -> Result<Option<String>, Failure> {
        match self {
            Conn::Lite(c) => Ok(c
                .is_readonly(rusqlite::MAIN_DB)
                .map_err(Failure::Lite)?
                .then(|| {
                    "the file can only be read (its permissions or its file system)".to_string()
                })),
            Conn::Pg(_) => {
                let rows = self.rows(
                    &format!(
                        "SELECT current_user::text, \
                           (has_table_privilege('{table}', 'INSERT') AND has_table_privilege('{table}', 'UPDATE'))::text, \
                           current_setting('transaction_read_only')"
                    ),
                    &[],
                )?;
                let cells: Vec<String> = rows
                    .into_iter()
                    .next()
                    .unwrap_or_default()
                    .into_iter()
                    .map(Cell::into_text)
                    .collect();
                let [user, may, read_only] = cells.as_slice() else {
                    return Ok(None);
                };
                Ok(if may != "true" {
                    Some(format!(
                        "role {} may not add runs (it needs INSERT and UPDATE on {table})",
                        crate::terminal::escape(user)
                    ))
                } else if read_only == "on" {
                    Some(format!(
                        "the session of role {} is read-only (default_transaction_read_only, or a standby server)",
                        crate::terminal::escape(user)
                    ))
                } else {
                    None
                })
            }
        }
    }

    /// Whether this is the server.
    pub(crate) fn is_server(&self) -> bool {
        matches!(self, Conn::Pg(_))
    }

    /// Runs `sql` (several statements, no arguments).
    pub(crate) fn batch(&self, sql: &str) -> Result<(), Failure> {
        match self {
            Conn::Lite(c) => c.execute_batch(sql).map_err(Failure::Lite),
            Conn::Pg(c) => {
                let sql = sql.to_string();
                c.exchange(
                    "a statement",
                    Box::new(move |client| client.batch_execute(&sql).map(|()| Vec::new())),
                )
                .map(drop)
            }
        }
    }

    /// The rows `sql` answers with `args` bound to `?1`, `?2` ...
    pub(crate) fn rows(&self, sql: &str, args: &[Cell]) -> Result<Vec<Vec<Cell>>, Failure> {
        match self {
            Conn::Lite(c) => lite_rows(c, sql, args).map_err(Failure::Lite),
            Conn::Pg(c) => {
                let (sql, args) = (sql.to_string(), args.to_vec());
                c.exchange(
                    "a query",
                    Box::new(move |client| pg_rows(client, &sql, &args)),
                )
            }
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
pub(crate) fn pg_cause(e: &postgres::Error) -> String {
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
    fn a_server_that_accepts_and_never_answers_is_given_up_at_the_deadline() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        // accepts one connection and holds it open, silent, until the test ends
        let (stop_tx, stop) = std::sync::mpsc::channel::<()>();
        let server = std::thread::spawn(move || {
            let held = listener.accept();
            let _ = stop.recv_timeout(Duration::from_secs(20));
            drop(held);
        });
        let t0 = std::time::Instant::now();
        let url = format!("postgres://envbench@127.0.0.1:{port}/envbench?connect_timeout=1");
        let Err(e) = Conn::postgres(&url) else {
            panic!("a silent server gave a connection");
        };
        let took = t0.elapsed();
        assert!(took < Duration::from_secs(10), "{took:?}");
        let text = e.to_string();
        assert!(
            text.contains("did not complete the connection within 1 s"),
            "{text}"
        );
        stop_tx.send(()).unwrap();
        server.join().unwrap();
    }

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
        // unencoded separators in the password hide it all the same
        for (url, shown) in [
            ("postgres://u:se/cr?et@h/db", "postgres://u:***@h/db"),
            ("postgres://u:s@c:r#t@h:5/db", "postgres://u:***@h:5/db"),
            (
                "postgres://u:pw@h/db?password=x&password=y",
                "postgres://u:***@h/db?password=***&password=***",
            ),
        ] {
            assert_eq!(redact(url), shown);
            let Err(e) = Conn::postgres(url) else {
                panic!("{url} accepted")
            };
            for secret in ["se/cr", "s@c", "pw@", "=x", "=y"] {
                assert!(!e.to_string().contains(secret), "{e}");
            }
        }
    }

    #[test]
    fn a_tls_demand_and_a_bad_url_are_refused_before_connecting() {
        for (url, says) in [
            ("postgres://u@127.0.0.1:1/db?sslmode=require", "without TLS"),
            ("postgres://u@h:notaport/db", "not a PostgreSQL URL"),
            (
                "postgres://u@h/db?sslmode=verify-full",
                "sslmode=verify-full: this envbench connects without TLS",
            ),
            ("postgres://u@h/db?sslmode=verify-ca", "without TLS"),
            (
                "postgres://u@h/db?sslmode=allow",
                "give sslmode=disable or prefer",
            ),
            ("postgres://u@h/db?sslmode=maybe", "not one of disable"),
            // an upper-case scheme is read: the connection is what fails
            ("POSTGRES://u@127.0.0.1:1/db", "Connection refused"),
        ] {
            let Err(e) = Conn::postgres(url) else {
                panic!("{url} accepted")
            };
            assert!(e.to_string().contains(says), "{e}");
        }
    }
}
