//! The ids of envbench's own benchmarks as result files name them
//! (`family.name`), written once: the benches answer them
//! ([`crate::bench::Bench::id`]), the importers that stand in for them and
//! the diagnosis that groups their cases match them. A bench only an
//! importer knows (sysbench's mutex, HPCC's HPL) is named by that importer
//! alone.

/// The CPU family.
pub const CPU: &str = "cpu";
/// The memory family.
pub const MEM: &str = "mem";
/// The operating-system family.
pub const OS: &str = "os";
/// The file-system family.
pub const IO: &str = "io";
/// The network family.
pub const NET: &str = "net";
/// The application family: work people feel, in-process.
pub const APP: &str = "app";
/// The command family: a person's own commands (`run --cmd`).
pub const CMD: &str = "cmd";

/// Dhrystone-style integer loops.
pub const CPU_INT: &str = "cpu.int";
/// Whetstone-style floating-point loops.
pub const CPU_FLOAT: &str = "cpu.float";
/// Prime counting, as sysbench cpu.
pub const CPU_PRIMES: &str = "cpu.primes";
/// Dense LU factorisation, as HPL.
pub const CPU_LU: &str = "cpu.lu";
/// STREAM's four kernels.
pub const MEM_STREAM: &str = "mem.stream";
/// Dependent loads over a working set, as lmbench lat_mem_rd.
pub const MEM_LATENCY: &str = "mem.latency";
/// A system call in a loop.
pub const OS_SYSCALL: &str = "os.syscall";
/// fork and wait.
pub const OS_FORK: &str = "os.fork";
/// fork after the parent allocated memory (copy-on-write).
pub const OS_FORK_COW: &str = "os.fork_cow";
/// Thread creation and join.
pub const OS_THREAD: &str = "os.thread";
/// Starting a program (fork and exec, posix_spawn).
pub const OS_SPAWN: &str = "os.spawn";
/// Shell scripts, as UnixBench.
pub const OS_SHELL: &str = "os.shell";
/// Pipe throughput and ping-pong.
pub const OS_PIPE: &str = "os.pipe";
/// Several processes computing at once.
pub const OS_MULTIPROG: &str = "os.multiprog";
/// Sequential file reads and writes, as IOzone.
pub const IO_SEQ: &str = "io.seq";
/// dd's block copies, cold reads and durable writes.
pub const IO_DD: &str = "io.dd";
/// File creation, stat and removal.
pub const IO_META: &str = "io.meta";
/// Random reads and writes, as sysbench fileio.
pub const IO_RANDOM: &str = "io.random";
/// TCP request-response over loopback.
pub const NET_TCP_ECHO: &str = "net.tcp_echo";
/// TCP bulk transfer over loopback.
pub const NET_TCP_STREAM: &str = "net.tcp_stream";
/// An HTTP load against a server.
pub const NET_HTTP: &str = "net.http";
/// `git status`'s index refresh: lstat every file of a tree.
pub const APP_STATUS: &str = "app.status";
/// Unpacking a gzip tar of many small files, then removing the tree.
pub const APP_UNPACK: &str = "app.unpack";
/// Walking a tree and searching its files, as `grep -r` and ripgrep.
pub const APP_SEARCH: &str = "app.search";
/// Resolving module names over a search path where most lookups miss.
pub const APP_IMPORTS: &str = "app.imports";
/// A build: read sources, transform them, write objects and link them.
pub const APP_BUILD: &str = "app.build";
/// SQLite transactions with synchronous=FULL, rollback journal and WAL.
pub const APP_DB: &str = "app.db";
/// The environment's own C compiler building a small project.
pub const APP_CC: &str = "app.cc";
/// A person's own command, timed and counted.
pub const CMD_RUN: &str = "cmd.run";

/// Every bench id above, for the test that holds each to one bench.
#[cfg(test)]
pub const ALL: [&str; 29] = [
    CPU_INT,
    CPU_FLOAT,
    CPU_PRIMES,
    CPU_LU,
    MEM_STREAM,
    MEM_LATENCY,
    OS_SYSCALL,
    OS_FORK,
    OS_FORK_COW,
    OS_THREAD,
    OS_SPAWN,
    OS_SHELL,
    OS_PIPE,
    OS_MULTIPROG,
    IO_SEQ,
    IO_DD,
    IO_META,
    IO_RANDOM,
    NET_TCP_ECHO,
    NET_TCP_STREAM,
    NET_HTTP,
    APP_STATUS,
    APP_UNPACK,
    APP_SEARCH,
    APP_IMPORTS,
    APP_BUILD,
    APP_DB,
    APP_CC,
    CMD_RUN,
];

/// The family of a bench id: `os` of `os.syscall`.
pub(crate) fn family(id: &str) -> &str {
    id.split_once('.').map_or(id, |(f, _)| f)
}

/// A bench's name within its family: `syscall` of `os.syscall`.
pub(crate) fn name(id: &str) -> &str {
    id.split_once('.').map_or(id, |(_, n)| n)
}
