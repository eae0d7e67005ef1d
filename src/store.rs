//! Loading and saving result files. Saving is atomic (write a sibling, then
//! rename), so a crash mid-write leaves the previous version intact; every
//! error names the file.

use crate::results::{ResultFile, SCHEMA_VERSION};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a result file could not be read or written.
#[derive(Debug, Error)]
pub enum StoreError {
    /// Written by a newer envbench.
    #[error("{path}: schema version {found} is newer than this envbench supports ({supported}); upgrade envbench to read it")]
    SchemaTooNew {
        /// The file.
        path: PathBuf,
        /// Its schema_version.
        found: u64,
        /// [`SCHEMA_VERSION`].
        supported: u32,
    },
    /// Not an envbench result file.
    #[error("{path}: not an envbench result file (no schema_version field)")]
    NotAResultFile {
        /// The file.
        path: PathBuf,
    },
    /// Read or write failure.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Malformed JSON or a field of the wrong type.
    #[error("{path}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// serde's message, with line and column.
        source: serde_json::Error,
    },
}

/// Writes `file` to `path` atomically.
///
/// # Errors
/// [`StoreError::Io`] naming `path`.
pub fn save(path: &Path, file: &ResultFile) -> Result<(), StoreError> {
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    let json = serde_json::to_vec_pretty(file).expect("invariant: result types always serialise");
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, &json).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

/// Reads a result file, refusing newer schemas.
///
/// # Errors
/// [`StoreError`] naming `path`: unreadable, not JSON, not a result file,
/// newer schema, or a field of the wrong shape.
pub fn load(path: &Path) -> Result<ResultFile, StoreError> {
    let text = std::fs::read_to_string(path).map_err(|source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &text)
}

/// Parses result-file text; `path` is only used in errors.
///
/// # Errors
/// As [`load`].
pub fn parse(path: &Path, text: &str) -> Result<ResultFile, StoreError> {
    let json = |source| StoreError::Json {
        path: path.to_path_buf(),
        source,
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(json)?;
    let version = value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| StoreError::NotAResultFile {
            path: path.to_path_buf(),
        })?;
    if version > u64::from(SCHEMA_VERSION) {
        return Err(StoreError::SchemaTooNew {
            path: path.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    serde_json::from_value(value).map_err(json)
}
