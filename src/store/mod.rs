//! Loading and saving result files. Saving is atomic (write a sibling, then
//! rename), so a crash mid-write leaves the previous version intact; every
//! error names the file. The rename only ever replaces a regular file: a
//! device, FIFO, socket, directory or symbolic link at the destination is
//! refused and kept (`-o /dev/null --force` as root once replaced the
//! device node with a JSON file).

use crate::results::{ResultFile, SCHEMA_VERSION};
use std::path::{Path, PathBuf};
use thiserror::Error;

pub mod figures;
mod writable;
mod write;
pub use writable::why_not_writable;
pub use write::{
    mark_interrupted_holding_lock, output_path, random_tag, renameat2, resolved, same_file, save,
    save_new, write_document,
};

/// Largest result file read: a real one is a few MiB; this keeps
/// `show /dev/zero` or a runaway file from filling memory.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// Why a result file could not be read or written. Causes are part of the
/// message, not `source`s, so `{err:#}` prints each once.
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
    #[error("{path}: not an envbench result file ({why})")]
    NotAResultFile {
        /// The file.
        path: PathBuf,
        /// What is missing or wrong, e.g. `no schema_version field`.
        why: String,
    },
    /// Read or write failure.
    #[error("{path}: {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        cause: std::io::Error,
    },
    /// The destination exists and is not a regular file; it is left as it is.
    #[error("{path} is a {kind}, not a regular file; envbench reads and writes results only in regular files and left it untouched")]
    NotRegular {
        /// The destination.
        path: PathBuf,
        /// What it is: `character device`, `FIFO`, `directory` ...
        kind: &'static str,
    },
    /// A new result file's name was taken between the check and the
    /// first write (another run chose the same name); nothing was replaced.
    #[error("{path} appeared while this run started (another run chose the same name); nothing was replaced: choose another -o FILE")]
    Taken {
        /// The destination.
        path: PathBuf,
    },
    /// Larger than [`MAX_FILE_BYTES`].
    #[error("{path}: larger than {} MiB; not an envbench result file", MAX_FILE_BYTES >> 20)]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// Malformed JSON or a field of the wrong type.
    #[error("{path}: {cause}")]
    Json {
        /// The file.
        path: PathBuf,
        /// serde's message, with line and column.
        cause: serde_json::Error,
    },
    /// A field of the wrong shape, with the path to it.
    #[error("{path}: field {field}: {cause}")]
    Field {
        /// The file.
        path: PathBuf,
        /// e.g. `cases[3].metrics[0].unit`.
        field: String,
        /// serde's message, with line and column.
        cause: serde_json::Error,
    },
    /// Values that parse but cannot be true (see [`crate::results::validate`]).
    #[error("{path}: {msg}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Which field and why.
        msg: String,
    },
}

impl StoreError {
    /// Whether the error is about the path the user gave (missing directory,
    /// no permission, not a regular file) rather than a failure while
    /// writing (disk full, I/O error).
    pub(crate) fn is_bad_path(&self) -> bool {
        use std::io::ErrorKind as K;
        match self {
            StoreError::NotRegular { .. } | StoreError::Taken { .. } => true,
            StoreError::Io { cause, .. } => matches!(
                cause.kind(),
                K::NotFound | K::PermissionDenied | K::NotADirectory | K::IsADirectory
            ),
            _ => false,
        }
    }
}

pub use crate::probe::kind_name;

/// Reads a result file, refusing newer schemas, what is not a regular
/// file (a FIFO is opened non-blocking and refused, never waited on) and
/// files above [`MAX_FILE_BYTES`].
///
/// # Errors
/// [`StoreError`] naming `path`: unreadable, not a regular file, too large,
/// not JSON, not a result file, newer schema, a field of the wrong shape,
/// or values that cannot be true.
pub fn load(path: &Path) -> Result<ResultFile, StoreError> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let io = |cause| StoreError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(StoreError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_name(&meta.file_type()),
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(StoreError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    let mut bytes = Vec::new();
    f.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(StoreError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    let text = decode_text(&bytes).ok_or_else(|| {
        io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ))
    })?;
    parse(path, &text)
}

/// Text as editors and shells save it: UTF-8 with or without a byte-order
/// mark, or UTF-16 (PowerShell's `>` and `Out-File` write UTF-16 LE with a
/// mark; without one, NUL in every other byte of the start gives it away).
/// None for bytes that are neither.
pub(crate) fn decode_text(bytes: &[u8]) -> Option<String> {
    let utf16 = |b: &[u8], little: bool| -> Option<String> {
        let units = b.chunks_exact(2).map(|c| {
            if little {
                u16::from_le_bytes([c[0], c[1]])
            } else {
                u16::from_be_bytes([c[0], c[1]])
            }
        });
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .ok()
    };
    match bytes {
        [0xEF, 0xBB, 0xBF, rest @ ..] => String::from_utf8(rest.to_vec()).ok(),
        [0xFF, 0xFE, rest @ ..] => utf16(rest, true),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, false),
        _ => {
            let head = &bytes[..bytes.len().min(64) & !1];
            let nul_at =
                |odd: usize| head.len() >= 4 && head.iter().skip(odd).step_by(2).all(|&b| b == 0);
            if nul_at(1) && bytes.len().is_multiple_of(2) {
                utf16(bytes, true)
            } else if nul_at(0) && bytes.len().is_multiple_of(2) {
                utf16(bytes, false)
            } else {
                String::from_utf8(bytes.to_vec()).ok()
            }
        }
    }
}

/// Parses and validates result-file text, every string escaped
/// ([`crate::results::validate::escape_strings`]); `path` is only used in
/// errors.
///
/// # Errors
/// As [`load`].
pub fn parse(path: &Path, text: &str) -> Result<ResultFile, StoreError> {
    let mut value: serde_json::Value =
        serde_json::from_str(text).map_err(|cause| StoreError::Json {
            path: path.to_path_buf(),
            cause,
        })?;
    let not_result = |why: String| StoreError::NotAResultFile {
        path: path.to_path_buf(),
        why,
    };
    let version = match value.get("schema_version") {
        None if value.is_object() => return Err(not_result("no schema_version field".into())),
        None => return Err(not_result("not a JSON object".into())),
        Some(v) => v.as_u64().ok_or_else(|| {
            not_result(format!(
                "schema_version is {}, expected a whole number from 1 to {SCHEMA_VERSION}",
                json_type(v)
            ))
        })?,
    };
    if version > u64::from(SCHEMA_VERSION) {
        return Err(StoreError::SchemaTooNew {
            path: path.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    if version == 0 {
        return Err(not_result(format!(
            "schema_version 0; versions run from 1 to {SCHEMA_VERSION}"
        )));
    }
    let de = &mut serde_json::Deserializer::from_str(text);
    let mut file: ResultFile =
        serde_path_to_error::deserialize(de).map_err(|e| StoreError::Field {
            path: path.to_path_buf(),
            field: match e.path().to_string() {
                p if p == "." => "(top level)".into(),
                p => p,
            },
            cause: e.into_inner(),
        })?;
    // every string as the reports may show it, whatever field holds it;
    // read again from the document only where one changed, so that errors
    // above name their line
    if crate::results::validate::escape_strings(&mut value) {
        file = serde_json::from_value(value).map_err(|cause| StoreError::Json {
            path: path.to_path_buf(),
            cause,
        })?;
    }
    crate::results::validate::validate(&mut file).map_err(|msg| StoreError::Invalid {
        path: path.to_path_buf(),
        msg,
    })?;
    Ok(file)
}

/// A JSON value's type in words, for messages.
fn json_type(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "null".into(),
        serde_json::Value::Bool(_) => "a boolean".into(),
        serde_json::Value::Number(n) => format!("the number {n}"),
        serde_json::Value::String(s) => {
            format!("a string ({:?})", crate::terminal::escape(s))
        }
        serde_json::Value::Array(_) => "an array".into(),
        serde_json::Value::Object(_) => "an object".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::write::{place_new, replace_regular, write_atomic};
    use super::*;
    use std::os::unix::fs::FileTypeExt as _;

    /// A character device like /dev/null (1, 3), made in `dir`.
    fn mknod_null(dir: &Path) -> PathBuf {
        use std::os::unix::ffi::OsStrExt as _;
        let p = dir.join("null");
        let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid path; tests run as root in a temporary directory.
        let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
        assert_eq!(rc, 0, "mknod: {}", std::io::Error::last_os_error());
        p
    }

    #[test]
    fn text_with_a_byte_order_mark_or_in_utf16_reads_as_text() {
        let utf16le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("4+0 records in\n".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let utf16be_bare: Vec<u8> = "{\"a\": 1}"
            .encode_utf16()
            .flat_map(u16::to_be_bytes)
            .collect();
        let utf16le_bare: Vec<u8> = "{\"a\": 1}"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(decode_text(&utf16le).as_deref(), Some("4+0 records in\n"));
        assert_eq!(decode_text(&utf16be_bare).as_deref(), Some("{\"a\": 1}"));
        assert_eq!(decode_text(&utf16le_bare).as_deref(), Some("{\"a\": 1}"));
        assert_eq!(decode_text(b"\xEF\xBB\xBF{}").as_deref(), Some("{}"));
        assert_eq!(decode_text(b"plain").as_deref(), Some("plain"));
        assert_eq!(decode_text(b"\xFFplain"), None);
        // NULs without UTF-16's shape pass through: the caller refuses them
        assert_eq!(decode_text(b"ab\0cd").as_deref(), Some("ab\0cd"));
    }

    #[test]
    fn saving_over_a_device_fails_and_keeps_the_device() {
        let tmp = tempfile::tempdir().unwrap();
        let dev = mknod_null(tmp.path());
        let err = write_atomic(&dev, b"{}").unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::NotRegular {
                    kind: "character device",
                    ..
                }
            ),
            "{err}"
        );
        assert!(std::fs::symlink_metadata(&dev)
            .unwrap()
            .file_type()
            .is_char_device());
        assert_eq!(
            std::fs::read_dir(tmp.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn a_device_that_appears_at_the_rename_is_swapped_back() {
        let tmp = tempfile::tempdir().unwrap();
        let dev = mknod_null(tmp.path());
        let file = tmp.path().join(".partial");
        std::fs::write(&file, "new").unwrap();
        let err = replace_regular(&file, &dev).unwrap_err();
        assert!(matches!(err, StoreError::NotRegular { .. }), "{err}");
        assert!(std::fs::symlink_metadata(&dev)
            .unwrap()
            .file_type()
            .is_char_device());
    }

    #[test]
    fn saving_replaces_a_regular_file_and_creates_a_missing_one() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("r.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_new_file_is_written_whole_and_never_over_one_that_appeared() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("r.json");
        place_new(&p, b"first").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "first");
        // another run took the name: refused, kept, no temporary file left
        let err = place_new(&p, b"second").unwrap_err();
        assert!(matches!(err, StoreError::Taken { .. }), "{err}");
        assert!(err.is_bad_path());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "first");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
        // nor over a device
        let dev = mknod_null(tmp.path());
        assert!(place_new(&dev, b"x").is_err());
        assert!(std::fs::symlink_metadata(&dev)
            .unwrap()
            .file_type()
            .is_char_device());
    }

    #[test]
    fn output_paths_follow_links_and_refuse_what_is_not_a_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dev = mknod_null(tmp.path());
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&dev, &link).unwrap();
        for p in [&dev, &link, &tmp.path().to_path_buf()] {
            let err = output_path(p, true, "-o").unwrap_err();
            assert!(
                err.contains("results are written only into regular files"),
                "{err}"
            );
        }
        let file = tmp.path().join("f.json");
        std::fs::write(&file, "x").unwrap();
        let flink = tmp.path().join("flink");
        std::os::unix::fs::symlink(&file, &flink).unwrap();
        assert_eq!(
            output_path(&flink, true, "-o").unwrap(),
            std::fs::canonicalize(&file).unwrap()
        );
        assert!(output_path(&flink, false, "-o")
            .unwrap_err()
            .contains("--force"));
        let dangling = tmp.path().join("dangling");
        std::os::unix::fs::symlink(tmp.path().join("nowhere"), &dangling).unwrap();
        assert!(output_path(&dangling, true, "-o").is_err());
    }
}
