//! Every integration test, one module per file beside this one, in one
//! test binary: one link instead of sixteen, and the harness's threads
//! pass from one file's tests to the next without waiting for the
//! slowest test of each file. `cargo test --release --test all layers::`
//! runs one file's tests.

mod common;

mod bad_input;
mod cli;
mod commands;
mod diagnosis;
mod docs;
mod family;
mod fidelity;
mod fleet_ansible;
mod fuzz_reader;
mod html_in_chromium;
mod import;
mod interleave;
mod layers;
mod portable_glibc;
mod probe_fixtures;
mod report_direction;
mod score;
mod store_postgres;
