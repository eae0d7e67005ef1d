//! Listings: the benchmarks `list` names ([`catalog`]) and the runs
//! `history` holds ([`history`]).

pub mod catalog;
pub mod history;
