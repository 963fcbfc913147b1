//! One journal file: records appended, read back after a crash, emptied.
//!
//! With `normal` durability a record is copied into a shared mapping of the
//! file: once copied it is in the kernel's page cache, which outlives a
//! killed engine exactly as a `write(2)`'s bytes do, for ~50 ns instead of
//! the ~450 ns an appending `write(2)` costs on ext4 (the largest single
//! cost of a write's round trip after the socket's own). The file's blocks
//! are reserved (`posix_fallocate`, 256 KiB at first, when the file is
//! opened) before they are mapped, so a full disk is an error returned to
//! the writer, never a `SIGBUS`, and a disk that fills up still takes what
//! the journal has reserved. With `full`
//! durability, or on a file system that cannot reserve blocks, records are
//! written with `write(2)` (and `fdatasync` for `full`).
//!
//! A mapped file is longer than its records: zeros follow them. A record
//! is copied without its newline first and the newline last, so a record
//! cut short by a killed engine never ends a line; reading stops at the
//! first line that does not end, and opening cuts the file back to its last
//! whole record. Emptying a mapped file zeroes its records from the last to
//! the first (a crash midway leaves whole records at the front, which replay
//! skips as applied, never a half-zeroed one in the middle).

use std::fs::{File, OpenOptions};
use std::io::BufRead;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

use super::Record;
use crate::error::{Error, Result};

/// The smallest mapping, and the step it grows by (doubling past it).
const MIN_MAP: usize = 256 << 10;

pub(super) struct JournalFile {
    file: File,
    path: PathBuf,
    /// Bytes of records in the file (a mapped file is longer).
    len: usize,
    /// `None` when records are written with `write(2)`.
    map: Option<Map>,
    /// Records are mapped (until the file system turns out unable to
    /// reserve blocks).
    mapping: bool,
}

impl JournalFile {
    /// Opens (creating) the file at `path`, reads its records into `out`,
    /// and cuts it back to its last whole record.
    pub fn open(path: &Path, sync: bool, out: &mut Vec<Record>) -> Result<JournalFile> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| io_error("open", path, e))?;
        let len = read_records(path, &file, out)?;
        if file.metadata().map(|m| m.len()).unwrap_or(0) != len as u64 {
            file.set_len(len as u64)
                .map_err(|e| io_error("cut back", path, e))?;
        }
        let mut opened = JournalFile {
            file,
            path: path.to_path_buf(),
            len,
            map: None,
            mapping: !sync,
        };
        if opened.mapping {
            // Room reserved from the start: a disk that fills up later still
            // takes this much of the journal. (Not now: the first append
            // tries again, and says why.)
            if let Err(e) = opened.grow(len) {
                tracing::warn!("{}: cannot reserve room yet: {e}", path.display());
            }
        }
        Ok(opened)
    }

    /// Bytes of records in the file.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Appends one record's line (ending in a newline). On an error nothing
    /// of it stays.
    pub fn append(&mut self, line: &[u8], sync: bool) -> std::io::Result<()> {
        let end = self.len + line.len();
        if self.mapping && self.map.as_ref().is_none_or(|m| m.cap < end) {
            self.grow(end)?;
        }
        match &self.map {
            Some(map) => {
                let (body, newline) = line.split_at(line.len() - 1);
                // SAFETY: `end <= cap`, the mapping is ours alone (under the
                // journal's lock) and `line` is not in it.
                unsafe {
                    let at = map.ptr.as_ptr().add(self.len);
                    std::ptr::copy_nonoverlapping(body.as_ptr(), at, body.len());
                    // The newline last: a copy cut short never ends a line.
                    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
                    at.add(body.len()).write(newline[0]);
                }
            }
            None => {
                let written = self
                    .file
                    .write_all_at(line, self.len as u64)
                    .and_then(|()| if sync { self.file.sync_data() } else { Ok(()) });
                if let Err(e) = written {
                    // Not acknowledged, so it must not come back on replay.
                    let _ = self.file.set_len(self.len as u64);
                    return Err(e);
                }
            }
        }
        self.len = end;
        Ok(())
    }

    /// Reserves and maps room for at least `end` bytes; a file system that
    /// cannot reserve blocks is written with `write(2)` from then on.
    fn grow(&mut self, end: usize) -> std::io::Result<()> {
        let cap = end.next_power_of_two().max(MIN_MAP);
        // SAFETY: a plain call on our open descriptor.
        let reserved = unsafe { libc::posix_fallocate(self.file.as_raw_fd(), 0, cap as i64) };
        match reserved {
            0 => {}
            libc::EOPNOTSUPP | libc::EINVAL => {
                tracing::info!(
                    "{}: the file system cannot reserve blocks; the journal is written with write(2)",
                    self.path.display()
                );
                self.mapping = false;
                self.map = None;
                return Ok(());
            }
            e => return Err(std::io::Error::from_raw_os_error(e)),
        }
        self.map = None;
        self.map = Some(Map::new(&self.file, cap)?);
        Ok(())
    }

    /// Empties the file: its records are all applied.
    pub fn empty(&mut self) -> std::io::Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        match &self.map {
            Some(map) => {
                // From the last record to the first, a page at a time.
                let mut end = self.len;
                while end > 0 {
                    let start = end.saturating_sub(4096);
                    // SAFETY: `start..end` lies within the mapping.
                    unsafe { std::ptr::write_bytes(map.ptr.as_ptr().add(start), 0, end - start) };
                    end = start;
                }
            }
            None => self.file.set_len(0)?,
        }
        self.len = 0;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's path and another descriptor of it, to sync without the
    /// journal's lock (a sync reports a write-back error to each open
    /// file once: the journal's syncs are the only ones).
    pub fn descriptor(&self) -> Result<(PathBuf, File)> {
        let dup = self
            .file
            .try_clone()
            .map_err(|e| io_error("open", &self.path, e))?;
        Ok((self.path.clone(), dup))
    }
}

impl Drop for JournalFile {
    /// An empty file closes empty (not as its mapping's reserved zeros).
    fn drop(&mut self) {
        if self.len == 0 && self.map.take().is_some() {
            let _ = self.file.set_len(0);
        }
    }
}

/// A shared, writable mapping of the first `cap` bytes of a file.
struct Map {
    ptr: NonNull<u8>,
    cap: usize,
}

// SAFETY: the mapping is plain memory owned by one `JournalFile`, used
// under the journal's lock.
unsafe impl Send for Map {}

impl Map {
    fn new(file: &File, cap: usize) -> std::io::Result<Map> {
        // SAFETY: a fresh mapping of a file we hold open, `cap` bytes of
        // which are reserved on disk.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                cap,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let ptr = NonNull::new(ptr.cast()).ok_or_else(std::io::Error::last_os_error)?;
        Ok(Map { ptr, cap })
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.cap) };
    }
}

/// Reads the whole records of a journal file into `out`; returns the bytes
/// they take (where the next record goes). A line that does not end — a
/// record cut short, or the zeros after a mapped file's records — ends it.
fn read_records(path: &Path, file: &File, out: &mut Vec<Record>) -> Result<usize> {
    let mut reader = std::io::BufReader::new(file);
    let mut line = Vec::new();
    let mut damaged = false;
    let mut len = 0;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| io_error("read", path, e))?;
        if n == 0 || line.last() != Some(&b'\n') {
            break;
        }
        len += n;
        if line[0] == 0 {
            // The tail of a record zeroed by an emptying a crash cut short:
            // applied, and gone.
            continue;
        }
        match serde_json::from_slice::<Record>(&line) {
            Ok(r) => out.push(r),
            Err(e) => {
                tracing::error!("{}: a damaged record was skipped: {e}", path.display());
                damaged = true;
            }
        }
    }
    if damaged {
        let aside = path.with_extension(format!("damaged-{}", std::process::id()));
        if let Err(e) = std::fs::copy(path, &aside) {
            tracing::error!("{}", io_error("copy", &aside, e));
        }
    }
    Ok(len)
}

pub(super) fn io_error(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::Internal(format!("cannot {what} the journal {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(seq: i64, content: &str) -> Vec<u8> {
        let record = serde_json::json!({"seq": seq, "entry": {
            "pad": "p", "author": "a", "kind": "note", "content": content, "now": 1}});
        let mut l = serde_json::to_vec(&record).unwrap();
        l.push(b'\n');
        l
    }

    fn reopen(path: &Path) -> (JournalFile, Vec<String>) {
        let mut records = Vec::new();
        let f = JournalFile::open(path, false, &mut records).unwrap();
        (f, records.into_iter().map(|r| r.entry.content).collect())
    }

    fn size(path: &Path) -> u64 {
        std::fs::metadata(path).unwrap().len()
    }

    /// Mapped: the file holds reserved zeros past its records; a record cut
    /// short is dropped on opening (the file cut back to its last whole
    /// record) and the next append goes where it was.
    #[test]
    fn a_mapped_file_reads_back_its_whole_records_and_drops_a_cut_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let (mut f, read) = reopen(&path);
        assert!(read.is_empty());
        f.append(&line(1, "one"), false).unwrap();
        f.append(&line(2, "two"), false).unwrap();
        assert_eq!(size(&path), MIN_MAP as u64, "room reserved");
        // Killed mid-copy: the third record's body is there, not its newline.
        let cut = line(3, "three");
        let at = f.len();
        let map = f.map.as_ref().unwrap();
        // SAFETY: within the mapping.
        unsafe {
            std::ptr::copy_nonoverlapping(cut.as_ptr(), map.ptr.as_ptr().add(at), cut.len() - 1)
        };
        std::mem::forget(f);

        let (mut f, read) = reopen(&path);
        assert_eq!(read, ["one", "two"]);
        let whole = line(1, "one").len() + line(2, "two").len();
        assert_eq!(f.len(), whole);
        f.append(&line(4, "four"), false).unwrap();
        drop(f);
        assert_eq!(reopen(&path).1, ["one", "two", "four"]);
    }

    /// Emptied, a mapped file holds no record; closed empty it is empty on
    /// disk. An emptying cut short leaves the front's whole records, read as
    /// usual, and a zeroed head that is no damage.
    #[test]
    fn emptying_leaves_no_record_and_one_cut_short_no_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let (mut f, _) = reopen(&path);
        for i in 0..3 {
            f.append(&line(i, &format!("n{i}")), false).unwrap();
        }
        f.empty().unwrap();
        assert_eq!(f.len(), 0);
        assert!(std::fs::read(&path).unwrap().iter().all(|&b| b == 0));
        drop(f);
        assert_eq!(size(&path), 0, "closed empty");

        // Zeroing from the end, killed within the second record's page.
        let (mut f, _) = reopen(&path);
        let lines: Vec<Vec<u8>> = (0..3).map(|i| line(i, &format!("n{i}"))).collect();
        for l in &lines {
            f.append(l, false).unwrap();
        }
        let second = lines[0].len();
        let map = f.map.as_ref().unwrap();
        // SAFETY: within the mapping.
        unsafe {
            std::ptr::write_bytes(
                map.ptr.as_ptr().add(second + lines[1].len()),
                0,
                lines[2].len(),
            );
            std::ptr::write_bytes(map.ptr.as_ptr().add(second), 0, 10);
        }
        std::mem::forget(f);
        let (_, read) = reopen(&path);
        assert_eq!(read, ["n0"]);
        let aside = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(aside, 1, "nothing copied aside as damaged");
    }

    /// With `full` durability records are written (and synced), not mapped.
    #[test]
    fn full_durability_writes_records_without_a_mapping() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let mut records = Vec::new();
        let mut f = JournalFile::open(&path, true, &mut records).unwrap();
        f.append(&line(1, "synced"), true).unwrap();
        assert!(f.map.is_none());
        assert_eq!(size(&path), line(1, "synced").len() as u64);
        f.empty().unwrap();
        assert_eq!(size(&path), 0);
    }
}
