//! Atomic file output: readers of OUT see either the old file or the complete new one,
//! never a half-written result (e.g. when a sweep is interrupted).

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The temporary file written next to `path` before the rename (`OUT.tmp`).
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut name: OsString = path.file_name().map(OsString::from).unwrap_or_default();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Write `bytes` to `path` atomically: write `path.tmp` in the same directory, flush it to
/// disk, then rename it over `path`. On failure the temporary file is removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if path.file_name().is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the output path names no file",
        ));
    }
    let tmp = tmp_path(path);
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "schedlab-atomic-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn writes_and_replaces_without_leaving_tmp() {
        let d = scratch("replace");
        let out = d.join("r.json");
        write_atomic(&out, b"first\n").unwrap();
        write_atomic(&out, b"second\n").unwrap();
        assert_eq!(fs::read_to_string(&out).unwrap(), "second\n");
        assert!(!tmp_path(&out).exists());
        assert_eq!(tmp_path(&out), d.join("r.json.tmp"));
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn missing_directory_is_an_error_and_leaves_nothing() {
        let d = scratch("missing");
        let out = d.join("no/such/dir/r.json");
        assert!(write_atomic(&out, b"x").is_err());
        assert!(!out.exists());
        fs::remove_dir_all(d).unwrap();
    }
}
