//! Safe, all-or-nothing file output.
//!
//! Every file a command writes goes through [`write_atomic`]:
//! - `-` means standard output;
//! - the bytes go to a new temporary file next to the target, with a random name, created
//!   with `O_CREAT | O_EXCL | O_NOFOLLOW` — a file or symbolic link planted under a
//!   predictable name (`OUT.tmp`) cannot redirect the write, even when run as root — and
//!   are flushed to disk;
//! - the temporary files are renamed over their targets only when the command succeeds
//!   ([`commit`], called by `main`): a failed command leaves no output behind and changes
//!   none (its temporary files are removed by [`discard`]). An interrupted real run
//!   (SIGINT/SIGTERM) commits, as its partial results are printed on purpose;
//! - a target that exists and is not a regular file (a device such as `/dev/null`, a
//!   directory, a FIFO) is refused rather than replaced; a symbolic link is replaced by
//!   the file, never followed;
//! - a target that is also another argument of the command (`simulate w.yaml -o w.yaml`,
//!   or two outputs named alike) is refused, so an input is never overwritten by its result;
//! - missing parent directories are created.
//!
//! Readers of a target see either the old file or the complete new one.

use std::collections::hash_map::RandomState;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A temporary file written and waiting for [`commit`].
struct Staged {
    tmp: PathBuf,
    target: PathBuf,
}

static STAGED: Mutex<Vec<Staged>> = Mutex::new(Vec::new());

fn staged() -> std::sync::MutexGuard<'static, Vec<Staged>> {
    STAGED.lock().unwrap_or_else(|e| e.into_inner())
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// Whether `path` names standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Write `bytes` to `path` when the command succeeds (see the module documentation);
/// `-` writes to standard output at once.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if is_stdout(path) {
        let mut out = io::stdout().lock();
        return match out.write_all(bytes).and_then(|()| out.flush()) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        };
    }
    let tmp = stage(path, bytes)?;
    staged().push(Staged {
        tmp,
        target: path.to_path_buf(),
    });
    Ok(())
}

/// Write `bytes` to `path` now (temporary file, then rename), for a file the command
/// itself reads back before it ends, or one that must survive a later failure (a
/// long run's checkpoint).
#[allow(dead_code)] // no command needs it yet; the tests use it
pub fn write_atomic_now(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = stage(path, bytes)?;
    fs::rename(&tmp, path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// Rename every staged file over its target. On the first failure the remaining
/// temporary files are removed and the error names the target.
pub fn commit() -> Result<(), String> {
    let pending = std::mem::take(&mut *staged());
    let mut failure = None;
    for s in pending {
        if failure.is_some() {
            let _ = fs::remove_file(&s.tmp);
            continue;
        }
        if let Err(e) = fs::rename(&s.tmp, &s.target) {
            let _ = fs::remove_file(&s.tmp);
            failure = Some(format!("cannot write {}: {e}", s.target.display()));
        }
    }
    failure.map_or(Ok(()), Err)
}

/// Remove every staged temporary file: the command failed, its outputs are not written.
pub fn discard() {
    for s in std::mem::take(&mut *staged()) {
        let _ = fs::remove_file(&s.tmp);
    }
}

/// Check now, before a long or unrepeatable piece of work (a real run), that `path` can
/// be written when the command ends: the refusals of [`write_atomic`] (a device, a
/// directory, an input of the command) and a probe file created and removed in its
/// directory (or the nearest existing ancestor, which `write_atomic` would create it
/// from): an unwritable, read-only or immutable directory is found before the work.
pub fn check_target(path: &Path) -> io::Result<()> {
    if is_stdout(path) {
        return Ok(());
    }
    let Some(name) = path.file_name() else {
        return Err(invalid("the output path names no file".into()));
    };
    match fs::symlink_metadata(path) {
        Ok(m) => refuse_target(path, &m)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    while !dir.exists() {
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir = p.to_path_buf(),
            _ => dir = PathBuf::from("."),
        }
    }
    let (tmp, f) = create_temp(&dir, name)?;
    drop(f);
    fs::remove_file(&tmp)
}

/// The refusals of an existing target: not a regular file (a device, a directory, a
/// FIFO), or the same file as another argument of the command.
fn refuse_target(path: &Path, m: &fs::Metadata) -> io::Result<()> {
    let ft = m.file_type();
    if !ft.is_file() && !ft.is_symlink() {
        let what = if ft.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        };
        return Err(invalid(format!(
            "refusing to replace it: it is {what} (write to a file, or use `-` for \
             standard output)"
        )));
    }
    if ft.is_file() {
        refuse_if_argument(path, m)?;
    }
    Ok(())
}

/// Check the target, create its directory, write the bytes to a fresh temporary file
/// beside it and flush them; returns the temporary file's path.
fn stage(path: &Path, bytes: &[u8]) -> io::Result<PathBuf> {
    let Some(name) = path.file_name() else {
        return Err(invalid("the output path names no file".into()));
    };
    let existing = match fs::symlink_metadata(path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    if let Some(m) = &existing {
        refuse_target(path, m)?;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;
    // The mode of the file replaced is kept; a new file gets 0666 less the umask.
    let mode = existing
        .as_ref()
        .filter(|m| m.file_type().is_file())
        .map(|m| m.permissions().mode() & 0o7777);
    let (tmp, mut f) = create_temp(&dir, name)?;
    let written = (|| {
        if let Some(mode) = mode {
            f.set_permissions(fs::Permissions::from_mode(mode))?;
        }
        f.write_all(bytes)?;
        f.sync_all()
    })();
    drop(f);
    match written {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// A new file `.NAME.RANDOM.tmp` in `dir`, created exclusively and without following a
/// symbolic link.
fn create_temp(dir: &Path, name: &std::ffi::OsStr) -> io::Result<(PathBuf, File)> {
    let mut last = None;
    for attempt in 0..16u64 {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(attempt ^ u64::from(std::process::id()));
        let mut file_name = OsString::from(".");
        file_name.push(name);
        file_name.push(format!(".{:016x}.tmp", h.finish()));
        let tmp = dir.join(file_name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .mode(0o666)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no temporary file name was free")))
}

/// Refuse a target that is the same file as another argument of the command (an input,
/// or a second output).
fn refuse_if_argument(path: &Path, target: &fs::Metadata) -> io::Result<()> {
    let mut named = 0;
    let mut other = None;
    for arg in crate::args() {
        // `--opt=FILE` names FILE.
        let value = match arg.to_str().and_then(|s| s.split_once('=')) {
            Some((k, v)) if k.starts_with("--") => OsString::from(v),
            _ => arg.clone(),
        };
        let Ok(m) = fs::metadata(&value) else {
            continue;
        };
        if m.is_file() && m.dev() == target.dev() && m.ino() == target.ino() {
            named += 1;
            if Path::new(&value) != path {
                other = Some(value);
            }
        }
    }
    if named > 1 {
        let other = other.map_or_else(
            || path.display().to_string(),
            |o| Path::new(&o).display().to_string(),
        );
        return Err(invalid(format!(
            "refusing to overwrite it: it is also given as `{other}` to this command \
             (an input, or another output)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

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

    fn leftovers(d: &Path) -> Vec<String> {
        fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn replaces_atomically_without_leaving_tmp() {
        let d = scratch("replace");
        let out = d.join("r.json");
        write_atomic_now(&out, b"first\n").unwrap();
        write_atomic_now(&out, b"second\n").unwrap();
        assert_eq!(fs::read_to_string(&out).unwrap(), "second\n");
        assert!(leftovers(&d).is_empty());
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn creates_missing_directories() {
        let d = scratch("mkdir");
        let out = d.join("no/such/dir/r.json");
        write_atomic_now(&out, b"x").unwrap();
        assert_eq!(fs::read_to_string(&out).unwrap(), "x");
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_planted_symlink_is_never_followed() {
        let d = scratch("symlink");
        let victim = d.join("victim");
        fs::write(&victim, "precious").unwrap();
        // The old predictable temporary name, planted as a link to the victim.
        symlink(&victim, d.join("r.html.tmp")).unwrap();
        // The target itself as a link to the victim: replaced, not followed.
        symlink(&victim, d.join("r.html")).unwrap();
        write_atomic_now(&d.join("r.html"), b"report").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert!(!fs::symlink_metadata(d.join("r.html"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(d.join("r.html")).unwrap(), "report");
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn refuses_devices_and_directories() {
        let e = write_atomic_now(Path::new("/dev/null"), b"x").unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let d = scratch("dir");
        let e = write_atomic_now(&d, b"x").unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn keeps_the_mode_of_the_file_it_replaces() {
        let d = scratch("mode");
        let out = d.join("r.txt");
        fs::write(&out, "old").unwrap();
        fs::set_permissions(&out, fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic_now(&out, b"new").unwrap();
        assert_eq!(
            fs::metadata(&out).unwrap().permissions().mode() & 0o777,
            0o600
        );
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn staged_files_appear_only_at_commit_and_vanish_at_discard() {
        let d = scratch("stage");
        let (a, b) = (d.join("a.json"), d.join("b.csv"));
        fs::write(&b, "old b").unwrap();
        write_atomic(&a, b"new a").unwrap();
        write_atomic(&b, b"new b").unwrap();
        assert!(!a.exists());
        assert_eq!(fs::read_to_string(&b).unwrap(), "old b");
        discard();
        assert!(!a.exists());
        assert_eq!(fs::read_to_string(&b).unwrap(), "old b");
        assert!(leftovers(&d).is_empty());
        write_atomic(&a, b"new a").unwrap();
        write_atomic(&b, b"new b").unwrap();
        commit().unwrap();
        assert_eq!(fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(fs::read_to_string(&b).unwrap(), "new b");
        assert!(leftovers(&d).is_empty());
        fs::remove_dir_all(d).unwrap();
    }
}
