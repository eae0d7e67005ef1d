//! `net.http`'s built-in server: hyper on a tokio runtime of its own
//! (keep-alive, at most [`super::MAX_WORKERS`] workers unless placed on
//! more CPUs), serving seed 002's pages from memory; `--http-url` runs none.

use super::super::IO_TIMEOUT;
use crate::bench::affinity::Pinned;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Runtime;

/// Seed 002's page sizes: 1 KB, 10 KB and 100 KB (here KiB).
pub const PAGE_BYTES: [usize; 3] = [1024, 10 * 1024, 100 * 1024];

/// The path of the built-in page of `bytes` bytes: `/1k.html` ...
pub fn page_path(bytes: usize) -> String {
    format!("/{}k.html", bytes / 1024)
}

/// The body of a page: `bytes` printable bytes.
pub fn page_body(bytes: usize) -> Bytes {
    const LINE: &[u8] = b"envbench page: seed 002 measured Apache and IIS with 1, 10, 100 KB.\n";
    LINE.iter().copied().cycle().take(bytes).collect()
}

/// The server's tokio runtime: `workers` threads named `name` (at most 15 bytes).
fn runtime(workers: usize, name: &str) -> io::Result<Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .max_blocking_threads(1)
        .thread_name(name)
        .enable_io()
        .enable_time()
        .build()
}

/// The built-in server. Dropping it shuts its runtime down: the accept
/// loop and every connection are dropped (closing their sockets) and the
/// worker threads joined.
pub struct HttpServer {
    rt: Option<Runtime>,
    addr: SocketAddr,
    /// Its worker threads.
    pub(super) workers: usize,
    /// The CPUs its threads may use, when placed.
    pub(super) cpus: Option<Vec<usize>>,
}

impl HttpServer {
    /// Serves the pages of [`PAGE_BYTES`] at [`page_path`] on `host`, on a
    /// port the OS chooses, with `workers` threads.
    ///
    /// # Errors
    /// Binding or building the runtime.
    pub(crate) fn start(host: IpAddr, workers: usize) -> io::Result<HttpServer> {
        HttpServer::launch(SocketAddr::new(host, 0), workers, None)
    }

    /// [`HttpServer::start`] on `addr`'s port (`__http_serve`'s, chosen
    /// by `envbench fidelity`).
    ///
    /// # Errors
    /// Binding or building the runtime.
    pub(crate) fn start_at(addr: SocketAddr, workers: usize) -> io::Result<HttpServer> {
        HttpServer::launch(addr, workers, None)
    }

    /// [`HttpServer::start`] with a worker per CPU of `cpus`, every thread
    /// of the server kept on them.
    ///
    /// # Errors
    /// Pinning (a CPU outside this process's mask), binding or building the runtime.
    pub(crate) fn start_on(host: IpAddr, cpus: &[usize]) -> io::Result<HttpServer> {
        HttpServer::launch(SocketAddr::new(host, 0), cpus.len().max(1), Some(cpus))
    }

    fn launch(addr: SocketAddr, workers: usize, cpus: Option<&[usize]>) -> io::Result<HttpServer> {
        let std_listener = std::net::TcpListener::bind(addr)?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let rt = {
            // the runtime starts its workers while this thread is pinned:
            // they, and every thread they start, inherit the mask
            let _pinned = cpus.map(Pinned::to_set).transpose()?;
            runtime(workers, "net-http-srv")?
        };
        let pages: Arc<Vec<(String, Bytes)>> = Arc::new(
            PAGE_BYTES
                .iter()
                .map(|&b| (page_path(b), page_body(b)))
                .collect(),
        );
        let listener = {
            let _guard = rt.enter();
            tokio::net::TcpListener::from_std(std_listener)?
        };
        rt.spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        stream.set_nodelay(true).ok();
                        tokio::spawn(serve_connection(stream, Arc::clone(&pages)));
                    }
                    // out of descriptors and the like: retry a little later
                    Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
                }
            }
        });
        Ok(HttpServer {
            rt: Some(rt),
            addr,
            workers,
            cpus: cpus.map(<[usize]>::to_vec),
        })
    }

    /// Where it listens.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_timeout(IO_TIMEOUT);
        }
    }
}

async fn serve_connection(stream: tokio::net::TcpStream, pages: Arc<Vec<(String, Bytes)>>) {
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let resp = respond(&pages, req.method(), req.uri().path());
        async move { Ok::<_, Infallible>(resp) }
    });
    // a client that goes away ends the connection; nothing to report
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

fn respond(pages: &[(String, Bytes)], method: &Method, path: &str) -> Response<Full<Bytes>> {
    let status = |s: StatusCode| {
        let mut r = Response::new(Full::new(Bytes::from_static(b"")));
        *r.status_mut() = s;
        r
    };
    if method != Method::GET && method != Method::HEAD {
        return status(StatusCode::METHOD_NOT_ALLOWED);
    }
    match pages.iter().find(|(p, _)| p == path) {
        Some((_, body)) => {
            let mut r = Response::new(Full::new(body.clone()));
            r.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("text/html"),
            );
            r
        }
        None => status(StatusCode::NOT_FOUND),
    }
}
