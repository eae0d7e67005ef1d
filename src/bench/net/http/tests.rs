use super::*;
use crate::bench::net::{testing, DEFAULT_HOST};
use crate::bench::TestEnv;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::Arc;

/// One response read by hand from a plain socket: status line, headers
/// (names lowercased) and exactly Content-Length body bytes.
fn read_response(
    r: &mut BufReader<std::net::TcpStream>,
) -> (String, Vec<(String, String)>, Vec<u8>) {
    let mut status = String::new();
    r.read_line(&mut status).unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':').unwrap();
        headers.push((k.to_ascii_lowercase(), v.trim().to_string()));
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .map(|(_, v)| v.parse().unwrap())
        .unwrap();
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).unwrap();
    (status.trim_end().to_string(), headers, body)
}

#[test]
fn the_server_answers_correct_http_to_a_plain_client() {
    let _g = testing::lock();
    let server = HttpServer::start(DEFAULT_HOST, 1).unwrap();
    let s = std::net::TcpStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    // every page twice on one connection (keep-alive), then a missing one
    for &bytes in PAGE_BYTES.iter().chain(&PAGE_BYTES) {
        write!(w, "GET {} HTTP/1.1\r\nHost: x\r\n\r\n", page_path(bytes)).unwrap();
        let (status, headers, body) = read_response(&mut r);
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert!(headers.contains(&("content-length".into(), bytes.to_string())));
        assert!(headers.contains(&("content-type".into(), "text/html".into())));
        assert_eq!(body, page_body(bytes));
    }
    write!(w, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let (status, _, body) = read_response(&mut r);
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    assert!(body.is_empty());
    write!(
        w,
        "POST /1k.html HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
    )
    .unwrap();
    assert_eq!(read_response(&mut r).0, "HTTP/1.1 405 Method Not Allowed");
}

#[test]
fn pages_have_their_sizes() {
    for b in PAGE_BYTES {
        assert_eq!(page_body(b).len(), b);
    }
    assert_eq!(page_path(10 * 1024), "/10k.html");
}

#[test]
fn a_case_measures_and_leaves_no_thread_or_socket() {
    let _g = testing::lock();
    let env = TestEnv::real(0.005);
    let before = testing::counts();
    // 100 KiB arrives in 8 KiB reads (READ_BYTES): still every byte
    for (c, page) in [(1, 1024), (3, 1024), (1, 100 * 1024)] {
        let case = CaseSpec {
            bench: Http.id().into(),
            params: [
                ("clients".to_string(), Value::from(c)),
                ("page".to_string(), Value::from(page)),
            ]
            .into(),
            metrics: metrics(),
        };
        let mut t = Http.prepare(&case, &env.ctx()).unwrap();
        for _ in 0..2 {
            let v = t.once(&env.clock).unwrap();
            crate::engine::runner::check_values(&case, &v).unwrap();
            assert_eq!(v[4], 0.0, "no error status: {v:?}");
            assert!(v[2] <= v[3], "{v:?}");
            // every response carried its whole body
            assert!((v[1] * 1e6 / v[0] - page as f64).abs() < 1e-6, "{v:?}");
        }
        assert_eq!(t.details().unwrap()["client_threads"], c.min(2));
        drop(t);
        assert_eq!(testing::counts_back_to(before), before, "{c} client(s)");
    }
}

#[test]
fn error_statuses_are_counted() {
    let _g = testing::lock();
    let server = HttpServer::start(DEFAULT_HOST, 1).unwrap();
    let target = Target {
        addr: server.addr(),
        authority: server.addr().to_string(),
        path: "/missing".into(),
    };
    let mut client = LoadClient::connect(target, 2, 1, None).unwrap();
    let err = client.check_first_response().unwrap_err().to_string();
    assert!(err.contains("answered 404 Not Found"), "{err}");
    let tallies = client.load(Duration::from_millis(20)).unwrap();
    let (responses, errors): (u64, u64) = tallies
        .iter()
        .fold((0, 0), |(r, e), t| (r + t.responses, e + t.errors));
    assert!(responses > 0);
    assert_eq!(errors, responses);
}

#[test]
fn a_server_that_goes_away_mid_run_ends_the_case_with_the_counts() {
    let _g = testing::lock();
    let before = testing::counts();
    let server = HttpServer::start(DEFAULT_HOST, 1).unwrap();
    let target = Target {
        addr: server.addr(),
        authority: server.addr().to_string(),
        path: page_path(1024),
    };
    let mut client = LoadClient::connect(target, 4, 2, None).unwrap();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        drop(server);
    });
    let err = match client.load(Duration::from_secs(2)) {
        Err(BenchError::Failed(why)) => why,
        other => panic!("{:?}", other.map(|t| t.len())),
    };
    killer.join().unwrap();
    assert!(err.contains("connection "), "{err}");
    assert!(err.contains("the case stops here"), "{err}");
    // the count comes last: "... (after N completed in this repetition ..."
    // (a refused reconnection says "reconnecting after the server closed" first)
    let counted: u64 = err
        .rsplit("(after ")
        .next()
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {err}"));
    assert!(counted > 0, "{err}");
    drop(client);
    assert_eq!(testing::counts_back_to(before), before);
}

#[test]
fn a_user_url_is_loaded_and_a_dead_one_refused_clearly() {
    let _g = testing::lock();
    let env = TestEnv::real(0.005);
    let server = HttpServer::start(DEFAULT_HOST, 1).unwrap();
    let url = super::super::parse_http_url(&format!("http://{}/10k.html", server.addr())).unwrap();
    let mut plan = TestEnv::plan(Suite::Quick, 2);
    plan.options = plan.options.clone().with("http_url", url.text());
    let cases = Http.cases(&plan);
    assert_eq!(cases.len(), 2);
    assert_eq!(
        cases[0].key(),
        format!("net.http[clients=1,url={}]", url.text())
    );
    let mut t = Http.prepare(&cases[1], &env.ctx()).unwrap();
    let v = t.once(&env.clock).unwrap();
    assert!(v[0] > 0.0 && v[4] == 0.0, "{v:?}");
    assert_eq!(t.details().unwrap()["server"], "the user's (--http-url)");
    drop(t);
    let addr = server.addr();
    drop(server);
    let mut dead = cases[0].clone();
    dead.params
        .insert("url".into(), Value::from(format!("http://{addr}/")));
    match Http.prepare(&dead, &env.ctx()) {
        Err(BenchError::Failed(why)) => {
            assert!(why.contains(&format!("cannot connect to {addr}")), "{why}");
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[test]
fn quick_has_three_points_and_standard_eighteen() {
    let quick = Http.cases(&TestEnv::plan(Suite::Quick, 2));
    let keys: Vec<String> = quick.iter().map(CaseSpec::key).collect();
    assert_eq!(
        keys,
        [
            "net.http[clients=1,cpus=same,page=10240]",
            "net.http[clients=1,cpus=split,page=10240]",
            "net.http[clients=16,cpus=split,page=10240]"
        ]
    );
    // 3 pages x 5 client counts, split, and one connection on one CPU per page
    assert_eq!(Http.cases(&TestEnv::plan(Suite::Standard, 2)).len(), 18);
}

#[test]
fn placed_cases_keep_server_and_client_on_their_cpus() {
    let _g = testing::lock();
    let env = TestEnv::real(0.005);
    let allowed = affinity::allowed_cpus().unwrap();
    let placed = Http.cases(&TestEnv::plan(Suite::Quick, 2));
    assert!(placed.iter().all(|c| c.params.contains_key("cpus")));
    for mut case in placed {
        case.params.insert("page".into(), Value::from(1024));
        let placement = Placement::from_name(case.params["cpus"].as_str().unwrap()).unwrap();
        let Ok((server_cpus, client_cpus)) = placement.sets(&allowed, MAX_WORKERS) else {
            assert!(matches!(
                Http.prepare(&case, &env.ctx()),
                Err(BenchError::Unsupported(_))
            ));
            continue;
        };
        let mut t = Http.prepare(&case, &env.ctx()).unwrap();
        // every server thread, workers included, on the server's CPUs
        let server_threads = testing::thread_cpus("net-http-srv");
        assert_eq!(server_threads.len(), server_cpus.len(), "{}", case.key());
        assert!(
            server_threads.iter().all(|c| *c == server_cpus),
            "{}: {server_threads:?}",
            case.key()
        );
        t.once(&env.clock).unwrap();
        let d = t.details().unwrap();
        assert_eq!(d["server_cpus"], serde_json::json!(server_cpus));
        assert_eq!(d["client_cpus"], serde_json::json!(client_cpus));
        assert_eq!(d["server_workers"], server_cpus.len());
        // the calling thread may run where it could before
        assert_eq!(affinity::allowed_cpus().unwrap(), allowed, "{}", case.key());
    }
}

/// A server that answers one request per connection with `response` and
/// closes it; stopped (and joined) when dropped.
struct OneShotServer {
    addr: std::net::SocketAddr,
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl OneShotServer {
    fn start(response: &'static [u8]) -> OneShotServer {
        let listener = std::net::TcpListener::bind((DEFAULT_HOST, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            while !flag.load(std::sync::atomic::Ordering::SeqCst) {
                let Ok((s, _)) = listener.accept() else {
                    continue;
                };
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut line = String::new();
                while r.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    line.clear();
                }
                let mut w = s;
                let _ = w.write_all(response);
            }
        });
        OneShotServer {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    fn target(&self) -> Target {
        Target {
            addr: self.addr,
            authority: self.addr.to_string(),
            path: "/".into(),
        }
    }
}

impl Drop for OneShotServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // wakes its accept
        drop(std::net::TcpStream::connect(self.addr));
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

#[test]
fn a_server_closing_keep_alive_connections_makes_the_client_reconnect() {
    let _g = testing::lock();
    // `Connection: close`, as a server at its keep-alive limit answers
    let server = OneShotServer::start(
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    );
    let mut client = LoadClient::connect(server.target(), 1, 1, None).unwrap();
    let tallies = client.load(Duration::from_millis(30)).unwrap();
    assert!(tallies[0].responses > 1, "{tallies:?}");
    assert!(
        tallies[0].reconnects >= tallies[0].responses - 1,
        "{tallies:?}"
    );
    assert_eq!(tallies[0].body_bytes, 2 * tallies[0].responses);
}

#[test]
fn a_server_closing_idle_connections_without_saying_so_is_asked_again() {
    let _g = testing::lock();
    let before = testing::counts();
    // a response that promises keep-alive, then a close: the client's next
    // request meets a closed connection (EOF or a reset) and must open a
    // new one and ask again, not fail the case
    let server = OneShotServer::start(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    let mut client = LoadClient::connect(server.target(), 2, 1, None).unwrap();
    client.check_first_response().unwrap();
    let tallies = client.load(Duration::from_millis(30)).unwrap();
    for t in &tallies {
        assert!(t.responses > 1 && t.reconnects >= t.responses - 1, "{t:?}");
        assert_eq!(t.body_bytes, 2 * t.responses);
    }
    // and the next repetition goes on from the connections it left
    assert!(client.load(Duration::from_millis(10)).unwrap()[0].responses > 0);
    drop(client);
    drop(server);
    assert_eq!(testing::counts_back_to(before), before);
}
