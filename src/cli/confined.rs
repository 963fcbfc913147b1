//! A folder the plugin installer writes in, and nothing beyond it.
//!
//! Agent Zero's Docker image keeps `usr/` as a volume the container writes
//! too, so anything in it may be a symbolic link planted to lead a write
//! out. Every name here is opened relative to its folder's descriptor with
//! `O_NOFOLLOW`, never as a path: a link is read as the link it is. Files
//! are written beside their name and renamed over it, which replaces a link
//! rather than writing through it.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What a name in a folder is, the name itself (a link is not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Folder,
    File,
    Link,
    Other,
}

/// An open folder: names are resolved in it, never through a link.
pub struct Folder {
    fd: OwnedFd,
    path: PathBuf,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// One name in a folder: no separators, not `.` or `..`.
fn cname(name: &str) -> io::Result<CString> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{name}' is not a single name in a folder"),
        ));
    }
    CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a name"))
}

impl Folder {
    /// The folder the person named (a link there is theirs to make).
    pub fn open(path: &Path) -> io::Result<Folder> {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a path"))?;
        // SAFETY: a valid C string; the descriptor is owned below.
        let fd = cvt(unsafe { libc::open(c.as_ptr(), libc::O_DIRECTORY | libc::O_CLOEXEC) })?;
        Ok(Folder {
            // SAFETY: `fd` was just opened and is owned by no one else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            path: path.to_owned(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What `name` is, without following it; `None` when absent.
    pub fn kind(&self, name: &str) -> io::Result<Option<Kind>> {
        let c = cname(name)?;
        // SAFETY: `st` is written by fstatat before it is read.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor, C string and stat buffer.
        let r = unsafe {
            libc::fstatat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if let Err(e) = cvt(r) {
            return match e.kind() {
                io::ErrorKind::NotFound => Ok(None),
                _ => Err(e),
            };
        }
        Ok(Some(match st.st_mode & libc::S_IFMT {
            libc::S_IFDIR => Kind::Folder,
            libc::S_IFREG => Kind::File,
            libc::S_IFLNK => Kind::Link,
            _ => Kind::Other,
        }))
    }

    /// The folder `name` in this one, made when missing. A link or anything
    /// but a folder there is refused, naming it.
    pub fn sub(&self, name: &str) -> io::Result<Folder> {
        let c = cname(name)?;
        let path = self.path.join(name);
        let open = || {
            // SAFETY: a valid descriptor and C string.
            cvt(unsafe {
                libc::openat(
                    self.fd.as_raw_fd(),
                    c.as_ptr(),
                    libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                )
            })
        };
        let fd = match open() {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // SAFETY: a valid descriptor and C string.
                let made = cvt(unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), 0o755) });
                match made {
                    Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                    _ => open(),
                }
            }
            other => other,
        };
        let fd = fd.map_err(|e| match self.kind(name) {
            Ok(Some(Kind::Link)) => io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a symbolic link; the installer writes only inside the folder it was given and follows no link. Remove the link (or install into the folder it points to) and try again",
                    path.display()
                ),
            ),
            Ok(Some(Kind::File | Kind::Other)) => io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a folder; move it away and try again", path.display()),
            ),
            _ => e,
        })?;
        Ok(Folder {
            // SAFETY: just opened, owned by no one else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            path,
        })
    }

    /// The names in this folder, each with what it is.
    pub fn entries(&self) -> io::Result<Vec<(String, Kind)>> {
        // SAFETY: dup of an open descriptor; fdopendir owns the copy and
        // closedir closes it.
        let dup = cvt(unsafe { libc::fcntl(self.fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) })?;
        // SAFETY: `dup` is a directory descriptor we own.
        let dir = unsafe { libc::fdopendir(dup) };
        if dir.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: fdopendir failed, so `dup` is still ours to close.
            unsafe { libc::close(dup) };
            return Err(e);
        }
        // The copy shares the folder's read position: from the start again.
        // SAFETY: `dir` is an open stream.
        unsafe { libc::rewinddir(dir) };
        let mut names = Vec::new();
        loop {
            // SAFETY: `dir` is an open stream until closedir below.
            let ent = unsafe { libc::readdir(dir) };
            if ent.is_null() {
                break;
            }
            // SAFETY: readdir's entry holds a NUL-terminated name.
            let name = unsafe { CStr::from_ptr((*ent).d_name.as_ptr()) };
            let name = name.to_string_lossy().into_owned();
            if name != "." && name != ".." {
                names.push(name);
            }
        }
        // SAFETY: closes the stream (and `dup`) once.
        unsafe { libc::closedir(dir) };
        names.sort();
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            if let Some(kind) = self.kind(&name)? {
                out.push((name, kind));
            }
        }
        Ok(out)
    }

    /// The file `name`'s bytes; `None` when absent. A link is refused.
    pub fn read(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        use std::io::Read;
        let c = cname(name)?;
        // SAFETY: a valid descriptor and C string.
        let fd = unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        match cvt(fd) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
            Ok(fd) => {
                // SAFETY: just opened, owned by the File.
                let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
                let mut bytes = Vec::new();
                f.read_to_end(&mut bytes)?;
                Ok(Some(bytes))
            }
        }
    }

    /// Writes `bytes` as the file `name` (mode `mode`): into a new file
    /// beside it, then renamed over it, so a link there is replaced.
    pub fn write(&self, name: &str, bytes: &[u8], mode: u32) -> io::Result<()> {
        use std::io::Write;
        let target = cname(name)?;
        let temp = cname(&format!(".{name}.{}.new", std::process::id()))?;
        // A leftover of an interrupted install (never a link we follow).
        // SAFETY: a valid descriptor and C string.
        unsafe { libc::unlinkat(self.fd.as_raw_fd(), temp.as_ptr(), 0) };
        // SAFETY: a valid descriptor and C string.
        let fd = cvt(unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                temp.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                mode as libc::c_uint,
            )
        })?;
        // SAFETY: just opened, owned by the File.
        let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
        let written = f
            .write_all(bytes)
            // The umask may have narrowed it; a secret's file is 0600 whatever it is.
            .and_then(|()| {
                // SAFETY: the File's open descriptor.
                cvt(unsafe { libc::fchmod(f.as_raw_fd(), mode as libc::mode_t) }).map(drop)
            })
            .and_then(|()| {
                // SAFETY: a valid descriptor and C strings.
                cvt(unsafe {
                    libc::renameat(
                        self.fd.as_raw_fd(),
                        temp.as_ptr(),
                        self.fd.as_raw_fd(),
                        target.as_ptr(),
                    )
                })
                .map(drop)
            });
        if written.is_err() {
            // SAFETY: a valid descriptor and C string.
            unsafe { libc::unlinkat(self.fd.as_raw_fd(), temp.as_ptr(), 0) };
        }
        written.map_err(|e| {
            io::Error::new(e.kind(), format!("{}: {e}", self.path.join(name).display()))
        })
    }

    /// Removes the file or link `name` (a link itself, not what it names).
    pub fn remove(&self, name: &str) -> io::Result<()> {
        let c = cname(name)?;
        // SAFETY: a valid descriptor and C string.
        cvt(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) }).map(drop)
    }

    /// Removes the empty folder `name`.
    pub fn remove_folder(&self, name: &str) -> io::Result<()> {
        let c = cname(name)?;
        // SAFETY: a valid descriptor and C string.
        cvt(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) })
            .map(drop)
    }
}
