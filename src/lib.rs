//! envbench: how does this execution environment perform against that one,
//! on the same hardware?
//!
//! The flow, top down: [`cli`] settles the command line into a command's
//! settings; [`cmd`] runs it. `run` plans the battery from the
//! [`probe`]d fingerprint with the families of [`bench`], and the
//! [`engine`] measures it ([`engine::schedule`] round by round,
//! [`engine::runner`] case by case, with [`validity`] watching), keeping
//! raw samples summarised by
//! [`stats`] in the wire schema ([`results`]), saved by [`store`] and
//! recorded in the [`history`]. `compare` judges environments
//! ([`compare`]) and [`report`] renders them; `import` turns other tools'
//! outputs into result files ([`import`]). Below everything: [`error`],
//! [`measure`], [`config`], [`units`], [`timestamp`], [`terminal`], [`cleanup`], [`deadline`],
//! [`view`].
//! Benches never print; reports never measure.
#![warn(missing_docs)]

pub mod bench;
pub(crate) mod cleanup;
pub mod cli;
pub mod cmd;
pub mod compare;
pub mod config;
pub(crate) mod deadline;
pub mod engine;
pub(crate) mod error;
pub(crate) mod history;
pub mod import;
pub mod measure;
pub mod probe;
pub mod report;
pub mod results;
pub(crate) mod stats;
pub mod store;
pub(crate) mod terminal;
pub(crate) mod timestamp;
pub mod units;
pub(crate) mod validity;
pub(crate) mod view;
