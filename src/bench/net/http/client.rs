//! `net.http`'s load client: plain HTTP/1.1 keep-alive loops over
//! nonblocking sockets, one epoll set per client thread, as wrk's threads
//! run theirs. Each connection sends a GET as soon as the previous response
//! has fully arrived.
//!
//! Why not hyper's client: on one CPU with its server, a client's own work
//! is taken from the server's. On the Intel Xeon VM (2026-11-29, nginx on
//! the same CPU, 1 KiB pages) hyper's client spent 3.3 µs a request in
//! user space against wrk's 0.9 (its dispatch between the connection's task
//! and the request's, its body channel, header maps, wakers and timers),
//! so envbench measured 0.85x wrk's rate, a figure of its client. This loop
//! parses the response head with httparse and counts the body as it
//! arrives: no task hand-off, no channel, no header map.
//!
//! Reads: up to [`READ_BYTES`] a call, and again at once only after a full
//! read (a short read emptied the socket, as wrk reads), else back to
//! epoll. On the same VM and CPU this client then reached 1.08-1.11 of
//! wrk's rate at 1 and 10 KiB. Not for its system calls (wrk makes 6 a
//! request, this loop 3: write, epoll_wait, read): a C loop making these 3
//! read as wrk did on the AMD Zen 5 VM (2026-11-30). The gap was a new
//! thread each repetition, which the client's threads no longer are
//! ([`super::load`]).

use super::super::IO_TIMEOUT;
use super::Target;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Instant;

/// Bytes the client reads at most per read call: 8 KiB, as wrk reads
/// (its RECVBUF), and again at once only after a full read. Under hyper
/// (before 2026-11-29) the read size had to be 32 KiB to bring hyper's
/// per-read cost near wrk's; with this loop, alternated against wrk on the
/// Xeon VM (nginx on CPU 0, 2 s each, 2 rounds), 8 KiB gave 1.12 of wrk's
/// rate at 100 KiB on nginx's CPU and 1.04-1.08 on its own, where 32 KiB
/// gave 0.81-0.83 and 0.84-0.96: how a client reads a large response sets
/// the pace the server's congestion control sees (BBR here).
pub(super) const READ_BYTES: usize = 8 * 1024;

/// A response head longer than this is not a web server's.
const HEAD_MAX: usize = 64 * 1024;

/// Headers parsed per response head, at most.
const HEADERS_MAX: usize = 64;

/// One completed response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Response {
    pub status: u16,
    pub body_bytes: u64,
    /// The server said it closes the connection (or framed the body by
    /// closing it).
    pub close: bool,
}

/// How the body of the response being read ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    /// Bytes left of a Content-Length body.
    Length(u64),
    /// A chunked body, at this point of its framing.
    Chunked(Chunk),
    /// A body that ends when the server closes the connection.
    UntilClose,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Reading a chunk-size line.
    Size,
    /// Data bytes left of the current chunk.
    Data(u64),
    /// The CRLF after a chunk's data.
    DataEnd,
    /// Trailer lines after the last chunk, until an empty one.
    Trailer,
}

/// The response being parsed on a connection.
#[derive(Debug, Default)]
pub(super) struct Parser {
    /// Bytes read; those in `start..end` are not yet consumed.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// After the head: its status, whether it closes, and its body.
    head: Option<(u16, bool, Body)>,
    body_bytes: u64,
}

impl Parser {
    /// Whether any byte of the current response has arrived.
    fn started(&self) -> bool {
        self.head.is_some() || self.start < self.end
    }

    /// Room for one read of [`READ_BYTES`] after the unconsumed bytes
    /// (moved to the front when needed; the buffer grows only for a head
    /// or chunk line split across reads, and is never cleared per read).
    fn spare(&mut self) -> &mut [u8] {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
        if self.buf.len() - self.end < READ_BYTES {
            self.buf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
            if self.buf.len() - self.end < READ_BYTES {
                self.buf.resize(self.end + READ_BYTES, 0);
            }
        }
        &mut self.buf[self.end..self.end + READ_BYTES]
    }

    /// Keeps `n` of the bytes [`Parser::spare`] offered.
    fn filled(&mut self, n: usize) {
        self.end += n;
    }

    /// Parses what has arrived; the response once it is complete.
    ///
    /// # Errors
    /// Bytes that are not an HTTP/1.x response.
    pub(super) fn advance(&mut self) -> Result<Option<Response>, String> {
        loop {
            let Some((status, close, body)) = self.head else {
                if !self.parse_head()? {
                    return Ok(None);
                }
                continue;
            };
            let rest = self.end - self.start;
            let next = match body {
                Body::Length(left) => {
                    let k = left.min(rest as u64);
                    self.take(k as usize);
                    self.body_bytes += k;
                    if k == left {
                        return Ok(Some(self.finish(status, close)));
                    }
                    // all that has arrived is taken: wait for more
                    self.head = Some((status, close, Body::Length(left - k)));
                    return Ok(None);
                }
                Body::UntilClose => {
                    self.take(rest);
                    self.body_bytes += rest as u64;
                    return Ok(None);
                }
                Body::Chunked(Chunk::Data(left)) => {
                    let k = left.min(rest as u64);
                    self.take(k as usize);
                    self.body_bytes += k;
                    if k < left {
                        self.head = Some((status, close, Body::Chunked(Chunk::Data(left - k))));
                        return Ok(None);
                    }
                    Body::Chunked(Chunk::DataEnd)
                }
                Body::Chunked(state) => {
                    let Some(line) = self.line()? else {
                        return Ok(None);
                    };
                    match state {
                        Chunk::Size => {
                            let hex = line.split(|&b| b == b';').next().unwrap_or_default();
                            let hex = std::str::from_utf8(hex).unwrap_or("").trim();
                            let size = u64::from_str_radix(hex, 16)
                                .map_err(|_| format!("a chunk size that is not hex: {hex:?}"))?;
                            Body::Chunked(if size == 0 {
                                Chunk::Trailer
                            } else {
                                Chunk::Data(size)
                            })
                        }
                        Chunk::DataEnd if line.is_empty() => Body::Chunked(Chunk::Size),
                        Chunk::DataEnd => return Err("a chunk longer than its size".into()),
                        Chunk::Trailer if line.is_empty() => {
                            return Ok(Some(self.finish(status, close)));
                        }
                        _ => Body::Chunked(Chunk::Trailer),
                    }
                }
            };
            self.head = Some((status, close, next));
        }
    }

    /// The connection ended: the response, if its body ends so.
    fn at_close(&mut self) -> Option<Response> {
        match self.head {
            Some((status, _, Body::UntilClose)) => Some(self.finish(status, true)),
            _ => None,
        }
    }

    /// Parses the head when it has all arrived; whether it had.
    fn parse_head(&mut self) -> Result<bool, String> {
        let mut headers = [httparse::EMPTY_HEADER; HEADERS_MAX];
        let mut r = httparse::Response::new(&mut headers);
        let len = match r.parse(&self.buf[self.start..self.end]) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) if self.end - self.start > HEAD_MAX => {
                return Err(format!(
                    "a response head longer than {} KiB",
                    HEAD_MAX >> 10
                ));
            }
            Ok(httparse::Status::Partial) => return Ok(false),
            Err(e) => return Err(format!("an answer that is not HTTP/1.x ({e})")),
        };
        let status = r.code.unwrap_or_default();
        let mut close = r.version == Some(0);
        let (mut length, mut chunked) = (None, false);
        for h in r.headers.iter() {
            let v = std::str::from_utf8(h.value).unwrap_or("").trim();
            if h.name.eq_ignore_ascii_case("content-length") {
                length = Some(
                    v.parse::<u64>()
                        .map_err(|_| format!("a Content-Length that is no number: {v:?}"))?,
                );
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = v
                    .rsplit(',')
                    .next()
                    .is_some_and(|c| c.trim().eq_ignore_ascii_case("chunked"));
            } else if h.name.eq_ignore_ascii_case("connection") {
                for token in v.split(',').map(str::trim) {
                    if token.eq_ignore_ascii_case("close") {
                        close = true;
                    } else if token.eq_ignore_ascii_case("keep-alive") {
                        close = false;
                    }
                }
            }
        }
        self.take(len);
        // an interim response (100 Continue, 103 Early Hints) precedes the one
        if (100..200).contains(&status) && status != 101 {
            return Ok(true);
        }
        let body = if status == 204 || status == 304 {
            Body::Length(0)
        } else if chunked {
            Body::Chunked(Chunk::Size)
        } else if let Some(n) = length {
            Body::Length(n)
        } else {
            close = true;
            Body::UntilClose
        };
        self.head = Some((status, close, body));
        Ok(true)
    }

    /// The next CRLF-ended line, consumed, without its CRLF.
    fn line(&mut self) -> Result<Option<Vec<u8>>, String> {
        let rest = &self.buf[self.start..self.end];
        match rest.windows(2).position(|w| w == b"\r\n") {
            Some(i) => {
                let line = rest[..i].to_vec();
                self.take(i + 2);
                Ok(Some(line))
            }
            None if rest.len() > HEAD_MAX => Err("a chunk line without an end".into()),
            None => Ok(None),
        }
    }

    fn take(&mut self, n: usize) {
        self.start += n;
    }

    fn finish(&mut self, status: u16, close: bool) -> Response {
        let r = Response {
            status,
            body_bytes: self.body_bytes,
            close,
        };
        self.head = None;
        self.body_bytes = 0;
        r
    }
}

/// One keep-alive connection.
pub(super) struct Conn {
    stream: TcpStream,
    parser: Parser,
    /// No response has been read on it yet: a close before the first one
    /// is the server's refusal, not the end of a keep-alive.
    fresh: bool,
}

impl Conn {
    /// Opens a nonblocking connection with Nagle off.
    ///
    /// # Errors
    /// The connect's, or a timeout after [`IO_TIMEOUT`].
    pub(super) fn open(addr: SocketAddr) -> io::Result<Conn> {
        let stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
        stream.set_nodelay(true)?;
        stream.set_nonblocking(true)?;
        Ok(Conn {
            stream,
            parser: Parser::default(),
            fresh: true,
        })
    }

    pub(super) fn fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    /// No response has been read on it yet.
    pub(super) fn is_fresh(&self) -> bool {
        self.fresh
    }

    /// Writes the whole request, waiting for room if the socket has none.
    ///
    /// # Errors
    /// The write's (a connection the server closed: EPIPE, ECONNRESET).
    pub(super) fn send(&mut self, request: &[u8]) -> io::Result<()> {
        let mut sent = 0;
        while sent < request.len() {
            match (&self.stream).write(&request[sent..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    wait_for(self.fd(), libc::POLLOUT)?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Reads what the socket holds and parses it: the response once
    /// complete, None while more is to come.
    ///
    /// # Errors
    /// A read error, an answer that is not HTTP, or the connection closed
    /// mid-response ([`Closed`] when it closed before any byte of it).
    pub(super) fn receive(&mut self) -> Result<Option<Response>, Ended> {
        loop {
            let buf = self.parser.spare();
            let got = (&self.stream).read(buf);
            let n = match got {
                Ok(n) => n,
                Err(e) => {
                    self.parser.filled(0);
                    match e.kind() {
                        io::ErrorKind::WouldBlock => return Ok(None),
                        io::ErrorKind::Interrupted => continue,
                        _ if !self.parser.started() && !self.fresh => return Err(Ended::Closed),
                        _ => return Err(Ended::Failed(e.to_string())),
                    }
                }
            };
            self.parser.filled(n);
            if n == 0 {
                if let Some(r) = self.parser.at_close() {
                    return Ok(Some(r));
                }
                if !self.parser.started() && !self.fresh {
                    return Err(Ended::Closed);
                }
                return Err(Ended::Failed(
                    "the server closed the connection before its response was complete".into(),
                ));
            }
            if let Some(r) = self.parser.advance().map_err(Ended::Failed)? {
                self.fresh = false;
                return Ok(Some(r));
            }
            if n < READ_BYTES {
                return Ok(None);
            }
        }
    }
}

/// Why a connection gave no response.
#[derive(Debug)]
pub(super) enum Ended {
    /// It was closed by the server before any byte of the response: a
    /// keep-alive connection the server let go while the request was on
    /// its way. Open a new one and ask again.
    Closed,
    /// Anything else: the case stops.
    Failed(String),
}

/// Waits up to [`IO_TIMEOUT`] for `fd` to be readable.
///
/// # Errors
/// poll's, or [`io::ErrorKind::TimedOut`].
pub(super) fn readable(fd: RawFd) -> io::Result<()> {
    wait_for(fd, libc::POLLIN)
}

/// Waits up to [`IO_TIMEOUT`] for `events` on `fd`.
fn wait_for(fd: RawFd, events: libc::c_short) -> io::Result<()> {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let ms = IO_TIMEOUT.as_millis() as libc::c_int;
    loop {
        // SAFETY: one valid pollfd, its count 1.
        match unsafe { libc::poll(&mut p, 1, ms) } {
            0 => return Err(io::ErrorKind::TimedOut.into()),
            n if n > 0 => return Ok(()),
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

/// An epoll set of connections, each known by its index.
pub(super) struct Poller {
    fd: OwnedFd,
    events: Vec<libc::epoll_event>,
}

impl Poller {
    /// A set that reports up to `most` connections a wait.
    ///
    /// # Errors
    /// epoll_create1's.
    pub(super) fn new(most: usize) -> io::Result<Poller> {
        // SAFETY: no pointer arguments.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Poller {
            // SAFETY: a descriptor just made and owned by nothing else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            events: vec![libc::epoll_event { events: 0, u64: 0 }; most.max(1)],
        })
    }

    /// Watches `fd` for reading, as connection `index`.
    ///
    /// # Errors
    /// epoll_ctl's.
    pub(super) fn add(&mut self, fd: RawFd, index: usize) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: index as u64,
        };
        // SAFETY: a valid epoll descriptor and event.
        if unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Stops watching `fd`: a connection with no request out (done for
    /// this repetition, or failed) whose socket turns readable (the server
    /// closing it) would otherwise wake every wait until the repetition
    /// ends.
    pub(super) fn remove(&mut self, fd: RawFd) {
        // SAFETY: a valid epoll descriptor; the event is ignored for DEL.
        // An fd not in the set (already closed) is ENOENT: nothing to undo.
        unsafe {
            libc::epoll_ctl(
                self.fd.as_raw_fd(),
                libc::EPOLL_CTL_DEL,
                fd,
                std::ptr::null_mut(),
            )
        };
    }

    /// The indices of the connections ready to read, waiting until
    /// `until` at most (none when it passed).
    ///
    /// # Errors
    /// epoll_wait's.
    pub(super) fn wait(&mut self, until: Instant) -> io::Result<Vec<usize>> {
        let left = until.saturating_duration_since(Instant::now());
        // rounded up: a wait of 0 ms would spin until the deadline
        let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
        loop {
            // SAFETY: the buffer holds `events.len()` events.
            let n = unsafe {
                libc::epoll_wait(
                    self.fd.as_raw_fd(),
                    self.events.as_mut_ptr(),
                    self.events.len() as libc::c_int,
                    ms,
                )
            };
            if n >= 0 {
                return Ok(self.events[..n as usize]
                    .iter()
                    .map(|e| e.u64 as usize)
                    .collect());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// The GET request for `target`, as bytes.
pub(super) fn request_bytes(target: &Target) -> Vec<u8> {
    format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\n\r\n",
        target.path, target.authority
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `bytes` in pieces of `step` and collects the responses.
    fn parse_all(bytes: &[u8], step: usize) -> Result<Vec<Response>, String> {
        let mut p = Parser::default();
        let mut out = Vec::new();
        for piece in bytes.chunks(step) {
            let room = p.spare();
            room[..piece.len()].copy_from_slice(piece);
            p.filled(piece.len());
            while let Some(r) = p.advance()? {
                out.push(r);
            }
        }
        out.extend(p.at_close());
        Ok(out)
    }

    const TWO: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 404 Not Found\r\ncontent-length: 3\r\nConnection: close\r\n\r\nno!";

    #[test]
    fn length_framed_responses_are_counted_however_they_arrive() {
        for step in [1, 2, 7, 64, 4096] {
            let r = parse_all(TWO, step).unwrap();
            assert_eq!(
                r,
                [
                    Response {
                        status: 200,
                        body_bytes: 5,
                        close: false
                    },
                    Response {
                        status: 404,
                        body_bytes: 3,
                        close: true
                    }
                ],
                "step {step}"
            );
        }
    }

    #[test]
    fn chunked_bodies_count_their_data_and_end_after_the_trailer() {
        let text = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Sum: 1\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
        for step in [1, 3, 16, 4096] {
            let r = parse_all(text, step).unwrap();
            assert_eq!(r.len(), 2, "step {step}");
            assert_eq!((r[0].status, r[0].body_bytes), (200, 15), "step {step}");
            assert_eq!((r[1].status, r[1].body_bytes), (204, 0), "step {step}");
        }
    }

    #[test]
    fn interim_responses_are_skipped_and_http_1_0_closes() {
        let text = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
        let r = parse_all(text, 5).unwrap();
        assert_eq!(
            r,
            [Response {
                status: 200,
                body_bytes: 2,
                close: true
            }]
        );
        // HTTP/1.0 asking to be kept alive is kept
        let kept = b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n";
        assert!(!parse_all(kept, 64).unwrap()[0].close);
    }

    #[test]
    fn a_body_without_length_ends_with_the_connection() {
        let r = parse_all(b"HTTP/1.1 200 OK\r\n\r\nuntil the end", 4).unwrap();
        assert_eq!(
            r,
            [Response {
                status: 200,
                body_bytes: 13,
                close: true
            }]
        );
    }

    #[test]
    fn what_is_not_http_is_refused_saying_what() {
        let e = parse_all(b"SSH-2.0-OpenSSH_9.2\r\n\r\n", 64).unwrap_err();
        assert!(e.contains("not HTTP/1.x"), "{e}");
        let e = parse_all(b"HTTP/1.1 200 OK\r\nContent-Length: many\r\n\r\n", 64).unwrap_err();
        assert!(e.contains("Content-Length"), "{e}");
        let e = parse_all(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            64,
        )
        .unwrap_err();
        assert!(e.contains("not hex"), "{e}");
        let e = parse_all(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
            64,
        )
        .unwrap_err();
        assert!(e.contains("longer than its size"), "{e}");
    }

    #[test]
    fn the_request_names_path_and_host() {
        let t = Target {
            addr: "127.0.0.1:80".parse().unwrap(),
            authority: "example.test:8080".into(),
            path: "/a?b=1".into(),
        };
        assert_eq!(
            request_bytes(&t),
            b"GET /a?b=1 HTTP/1.1\r\nHost: example.test:8080\r\n\r\n"
        );
    }
}
