//! Writing files so that a failure never destroys what was there: [`AtomicFile`].
//!
//! Everything the project writes (converted traces, flame graph SVGs, screenshots, the
//! viewer's settings) goes through here. Bytes go to a temporary file beside the target;
//! [`AtomicFile::commit`] flushes it to disk and renames it over the target, so a reader (or
//! the next run, after a crash) sees either the old file or the complete new one. An
//! `AtomicFile` dropped without a commit (an error, a panic) removes its temporary file and
//! leaves the target untouched.
//!
//! A process killed with `SIGKILL` cannot clean up: its temporary file (hidden, named
//! `.TARGET.PID.N.partial`) stays behind, and the target is still intact. Programs that
//! handle `SIGINT`/`SIGTERM` call [`remove_partial_files`] before exiting.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// Temporary files being written now, for [`remove_partial_files`].
static PARTIAL: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Why a file could not be written. The target is untouched.
#[derive(Debug)]
pub struct WriteError {
    /// The file the user asked for.
    pub path: PathBuf,
    /// What was being done: "create a temporary file beside", "write", "replace".
    pub action: &'static str,
    /// The error the system gave.
    pub source: io::Error,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: cannot {}: {} (the existing file, if any, is unchanged)",
            self.path.display(),
            self.action,
            self.source
        )
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// A file written beside its target and renamed over it on [`commit`](AtomicFile::commit).
///
/// ```
/// use std::io::Write;
/// use spall_util::AtomicFile;
///
/// let dir = std::env::temp_dir().join(format!("spall-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("out.txt");
/// std::fs::write(&path, "old").unwrap();
///
/// let mut f = AtomicFile::create(&path).unwrap();
/// f.write_all(b"new, half written").unwrap();
/// drop(f); // an error before the commit: nothing changes
/// assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
///
/// let mut f = AtomicFile::create(&path).unwrap();
/// f.write_all(b"new").unwrap();
/// f.commit().unwrap();
/// assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct AtomicFile {
    /// The path the user gave, for messages.
    path: PathBuf,
    /// The file renamed over: `path` with symbolic links resolved.
    target: PathBuf,
    /// `None` when writing straight to the target (a device or pipe: `/dev/null`, `/dev/stdout`).
    tmp: Option<PathBuf>,
    out: BufWriter<File>,
    committed: bool,
}

impl AtomicFile {
    /// Creates a temporary file in the target's directory (so the rename stays on one file
    /// system), with the existing target's permissions. A target that exists and is not a
    /// regular file (a device, a pipe) is written directly: it cannot be replaced.
    pub fn create(path: &Path) -> Result<AtomicFile, WriteError> {
        let fail = |action, source| WriteError {
            path: path.to_path_buf(),
            action,
            source,
        };
        // Write through a symbolic link to the file it names, keeping the link.
        let target = match fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path).unwrap_or(path.into()),
            _ => path.to_path_buf(),
        };
        let existing = fs::metadata(&target).ok();
        if let Some(m) = &existing {
            if m.is_dir() {
                return Err(fail("write", io::Error::other("it is a directory")));
            }
            if !m.is_file() {
                let file = OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .map_err(|e| fail("open", e))?;
                return Ok(AtomicFile {
                    path: path.to_path_buf(),
                    target,
                    tmp: None,
                    out: BufWriter::with_capacity(1 << 20, file),
                    committed: false,
                });
            }
        }
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .unwrap_or("out".as_ref())
            .to_string_lossy();
        let tmp = dir.join(format!(
            ".{name}.{}.{}.partial",
            std::process::id(),
            SEQUENCE.fetch_add(1, Ordering::Relaxed)
        ));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| fail("create a temporary file beside it", e))?;
        partial().push(tmp.clone());
        if let Some(m) = existing {
            let _ = file.set_permissions(m.permissions());
        }
        Ok(AtomicFile {
            path: path.to_path_buf(),
            target,
            tmp: Some(tmp),
            out: BufWriter::with_capacity(1 << 20, file),
            committed: false,
        })
    }

    /// The path given to [`create`](AtomicFile::create).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes, syncs the data to disk, and renames the file over the target (then syncs the
    /// directory, so the rename itself survives a power cut).
    pub fn commit(mut self) -> Result<(), WriteError> {
        let path = self.path.clone();
        let fail = |action, source| WriteError {
            path: path.clone(),
            action,
            source,
        };
        self.out.flush().map_err(|e| fail("write", e))?;
        let Some(tmp) = self.tmp.clone() else {
            self.committed = true;
            return Ok(());
        };
        self.out
            .get_ref()
            .sync_all()
            .map_err(|e| fail("write", e))?;
        fs::rename(&tmp, &self.target).map_err(|e| fail("replace", e))?;
        self.committed = true;
        forget_partial(&tmp);
        #[cfg(unix)]
        if let Some(dir) = self.target.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        if let Some(tmp) = &self.tmp {
            let _ = fs::remove_file(tmp);
            forget_partial(tmp);
        }
    }
}

/// Writes a whole file atomically: `write` fills it, and it replaces the target only if
/// `write` succeeds.
pub fn write_atomically<T, E: From<WriteError>>(
    path: &Path,
    write: impl FnOnce(&mut AtomicFile) -> Result<T, E>,
) -> Result<T, E> {
    let mut f = AtomicFile::create(path)?;
    let value = write(&mut f)?;
    f.commit()?;
    Ok(value)
}

/// Removes the temporary files of writes still in progress (for a `SIGINT` handler: the
/// targets stay as they were).
pub fn remove_partial_files() {
    for p in partial().drain(..) {
        let _ = fs::remove_file(p);
    }
}

fn partial() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PARTIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

fn forget_partial(tmp: &Path) {
    partial().retain(|p| p != tmp);
}

impl From<WriteError> for io::Error {
    fn from(e: WriteError) -> io::Error {
        io::Error::new(e.source.kind(), e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `remove_partial_files` is process-wide: these tests must not run beside each other.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("spall-out-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn failed_write_leaves_target_and_no_temporary() {
        let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
        let d = dir("fail");
        let p = d.join("t.json");
        fs::write(&p, "old").unwrap();
        let r: Result<(), io::Error> = write_atomically(&p, |f| {
            f.write_all(b"partial")?;
            Err(io::Error::other("decoder failed"))
        });
        assert!(r.is_err());
        assert_eq!(fs::read(&p).unwrap(), b"old");
        assert_eq!(entries(&d), ["t.json"]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn commit_replaces_and_keeps_permissions() {
        let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
        let d = dir("commit");
        let p = d.join("t.spall");
        fs::write(&p, "old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
        }
        write_atomically(&p, |f| f.write_all(b"new")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(entries(&d), ["t.spall"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                fs::metadata(&p).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
        fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn writes_through_a_symlink_and_keeps_it() {
        let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
        let d = dir("link");
        let real = d.join("real.json");
        let link = d.join("link.json");
        fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomically(&link, |f| f.write_all(b"new")).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&real).unwrap(), b"new");
        fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_written_directly() {
        let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
        use std::os::unix::fs::FileTypeExt;
        write_atomically(Path::new("/dev/null"), |f| f.write_all(b"x")).unwrap();
        assert!(fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
    }

    #[test]
    fn a_directory_target_is_an_error() {
        let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
        let d = dir("isdir");
        let e = AtomicFile::create(&d).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        assert_eq!(entries(&d), Vec::<String>::new());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn interrupted_writes_can_be_cleaned_up() {
        let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
        let d = dir("sigint");
        let p = d.join("t.json");
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"x").unwrap();
        f.flush().unwrap();
        assert_eq!(entries(&d).len(), 1);
        remove_partial_files();
        assert_eq!(entries(&d), Vec::<String>::new());
        drop(f);
        fs::remove_dir_all(&d).unwrap();
    }
}
