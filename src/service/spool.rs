//! The spool: a local, append-only, fsync'd file of every write the measuring produced,
//! kept until the store holds it.
//!
//! Each write is appended (one JSON line with a sequence number) and synced to disk before
//! it is handed on, so a wake once measured survives the store being down, a SIGTERM whose
//! grace ran out, and a SIGKILL. The writer reads the file back in order and stores what it
//! finds; once everything appended is stored the file is cut back to empty, so in a healthy
//! service it holds a few lines at most. At start the lines a previous process left are
//! replayed first: every store write is idempotent (a wake is keyed by revision UID and
//! start second; a change to the wakes underway replaces all of its revision's rows), so a
//! line stored twice changes nothing.
//!
//! Writes the store refuses for good go to `<spool>.rejected`, with the reason, where an
//! operator can read them; they never block the writes behind them.
//!
//! The file is locked for the life of the process: two services sharing one spool would
//! replay each other's lines.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ServiceError;
use crate::measure::wake::OpenChange;
use scaling_facts_api::WakeRecord;

/// One write for the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Write {
    /// A finished wake.
    Wake(Box<WakeRecord>),
    /// A wake began or ended (the store's list of wakes underway).
    Open(OpenChange),
    /// Every wake underway, replacing what the store holds: a new writer's own view.
    Opens(Vec<crate::measure::wake::OpenWake>),
    /// Revisions' last rests, each replacing what the store holds for its revision.
    Rests(Vec<crate::measure::wake::Rest>),
    /// The service first synced then, as far as this process knows: the store keeps the
    /// earliest it is told.
    WatchingSince(chrono::DateTime<chrono::Utc>),
    /// A stored wake turned out to be a second record of another: delete it.
    Retract {
        revision_uid: String,
        start_second: i64,
    },
}

#[derive(Serialize, Deserialize)]
struct Line {
    seq: u64,
    write: Write,
}

/// The spool file, open for appending.
#[derive(Debug)]
pub struct Spool {
    path: PathBuf,
    file: File,
    /// The sequence number of the last line appended.
    last_seq: u64,
    /// The file's length: everything before it is a whole, synced line.
    len: u64,
}

impl Spool {
    /// Opens (or creates) the spool and returns the lines a previous process left, oldest
    /// first. A last line cut short by a crash is dropped (it was never synced, so nothing
    /// was handed on from it); a damaged line elsewhere is set aside in the rejected file.
    pub fn open(path: &Path) -> Result<(Self, Vec<(u64, Write)>), ServiceError> {
        let err = |source| ServiceError::Spool {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(err)?;
        file.try_lock().map_err(|e| match e {
            std::fs::TryLockError::WouldBlock => ServiceError::SpoolInUse {
                path: path.to_owned(),
            },
            std::fs::TryLockError::Error(e) => err(e),
        })?;
        let mut left = Vec::new();
        let mut good_len = 0u64;
        let mut damaged = Vec::new();
        file.seek(SeekFrom::Start(0)).map_err(err)?;
        let mut reader = BufReader::new(&file);
        let mut buf = String::new();
        loop {
            buf.clear();
            let n = reader.read_line(&mut buf).map_err(err)?;
            if n == 0 {
                break;
            }
            if !buf.ends_with('\n') {
                tracing::warn!(path = %path.display(), bytes = n, "spool: dropping a last line cut short by a crash");
                break;
            }
            good_len += n as u64;
            match serde_json::from_str::<Line>(buf.trim_end()) {
                Ok(line) => left.push((line.seq, line.write)),
                Err(e) => damaged.push((buf.trim_end().to_owned(), e.to_string())),
            }
        }
        drop(reader);
        if file.metadata().map_err(err)?.len() != good_len {
            file.set_len(good_len).map_err(err)?;
            file.sync_all().map_err(err)?;
        }
        let last_seq = left.iter().map(|(s, _)| *s).max().unwrap_or(0);
        let spool = Self {
            path: path.to_owned(),
            file,
            last_seq,
            len: good_len,
        };
        for (raw, why) in damaged {
            tracing::error!(path = %path.display(), line = %raw, error = %why, "spool: a damaged line is set aside");
            spool.reject_raw(&raw, &why)?;
        }
        if !left.is_empty() {
            tracing::info!(path = %path.display(), writes = left.len(), "spool: writes a previous process did not store will be replayed");
        }
        Ok((spool, left))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends writes and syncs them to disk; returns the sequence number of the first.
    pub fn append(&mut self, writes: &[Write]) -> Result<u64, ServiceError> {
        let first = self.last_seq + 1;
        let mut text = String::new();
        for (i, write) in writes.iter().enumerate() {
            let line = LineRef {
                seq: first + i as u64,
                write,
            };
            text.push_str(&serde_json::to_string(&line).expect("writes serialize"));
            text.push('\n');
        }
        let done = self
            .file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.sync_data());
        if let Err(e) = done {
            // Whatever part of the text reached the file is cut off again, so the file
            // stays whole lines; the caller keeps these writes in memory instead.
            let _ = self.file.set_len(self.len);
            return Err(ServiceError::Spool {
                path: self.path.clone(),
                source: e,
            });
        }
        self.len += text.len() as u64;
        self.last_seq += writes.len() as u64;
        Ok(first)
    }

    /// The file's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads up to `max` lines starting at byte `offset`; returns them and the offset
    /// after the last one read.
    pub fn read_from(
        &self,
        offset: u64,
        max: usize,
    ) -> Result<(Vec<(u64, Write)>, u64), ServiceError> {
        let err = |source| ServiceError::Spool {
            path: self.path.clone(),
            source,
        };
        let mut file = File::open(&self.path).map_err(err)?;
        file.seek(SeekFrom::Start(offset)).map_err(err)?;
        let mut reader = BufReader::new(file);
        let (mut out, mut at, mut buf) = (Vec::new(), offset, String::new());
        while out.len() < max && at < self.len {
            buf.clear();
            let n = reader.read_line(&mut buf).map_err(err)?;
            if n == 0 || !buf.ends_with('\n') {
                break;
            }
            at += n as u64;
            match serde_json::from_str::<Line>(buf.trim_end()) {
                Ok(line) => out.push((line.seq, line.write)),
                // Written by this process a moment ago, so this cannot happen short of
                // the disk failing; set aside rather than retried forever.
                Err(e) => self.reject_raw(buf.trim_end(), &e.to_string())?,
            }
        }
        Ok((out, at))
    }

    /// Cuts the file back to empty once everything in it is stored. Sequence numbers
    /// go on from where they were.
    pub fn clear(&mut self) -> Result<(), ServiceError> {
        self.file
            .set_len(0)
            .and_then(|()| self.file.sync_all())
            .map_err(|source| ServiceError::Spool {
                path: self.path.clone(),
                source,
            })?;
        self.len = 0;
        Ok(())
    }

    /// The file where refused writes are set aside.
    pub fn rejected_path(&self) -> PathBuf {
        let mut name = self.path.as_os_str().to_owned();
        name.push(".rejected");
        PathBuf::from(name)
    }

    /// Sets aside a write the store refuses for good, with the reason.
    pub fn reject(&self, write: &Write, why: &str) -> Result<(), ServiceError> {
        let raw = serde_json::to_string(write).expect("writes serialize");
        self.reject_raw(&raw, why)
    }

    fn reject_raw(&self, raw: &str, why: &str) -> Result<(), ServiceError> {
        let path = self.rejected_path();
        let line = serde_json::json!({
            "rejected_at": chrono::Utc::now().to_rfc3339(),
            "error": why,
            "write": serde_json::from_str::<serde_json::Value>(raw)
                .unwrap_or_else(|_| serde_json::Value::String(raw.to_owned())),
        });
        OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .and_then(|mut f| {
                f.write_all(format!("{line}\n").as_bytes())?;
                f.sync_data()
            })
            .map_err(|source| ServiceError::Spool { path, source })
    }
}

#[derive(Serialize)]
struct LineRef<'a> {
    seq: u64,
    write: &'a Write,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::wake::OpenChange;

    fn closed(uid: &str) -> Write {
        Write::Open(OpenChange::Closed {
            revision_uid: uid.into(),
        })
    }

    #[test]
    fn appends_read_back_in_order_and_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.spool");
        let (mut spool, left) = Spool::open(&path).unwrap();
        assert!(left.is_empty() && spool.is_empty());
        assert_eq!(spool.append(&[closed("a"), closed("b")]).unwrap(), 1);
        assert_eq!(spool.append(&[closed("c")]).unwrap(), 3);
        let (first, at) = spool.read_from(0, 2).unwrap();
        assert_eq!(first.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [1, 2]);
        let (rest, end) = spool.read_from(at, 10).unwrap();
        assert_eq!(rest, vec![(3, closed("c"))]);
        assert_eq!(end, spool.len());
        drop(spool);
        // What a killed process left is handed back, and numbering goes on after it.
        let (mut spool, left) = Spool::open(&path).unwrap();
        assert_eq!(left.len(), 3);
        assert_eq!(spool.append(&[closed("d")]).unwrap(), 4);
        spool.clear().unwrap();
        assert!(spool.is_empty());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    }

    #[test]
    fn a_torn_last_line_is_dropped_and_a_damaged_one_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.spool");
        let good = serde_json::to_string(&LineRef {
            seq: 1,
            write: &closed("a"),
        })
        .unwrap();
        std::fs::write(&path, format!("{good}\nnot json\n{{\"seq\":3,\"wri")).unwrap();
        let (spool, left) = Spool::open(&path).unwrap();
        assert_eq!(left, vec![(1, closed("a"))]);
        // The torn tail is cut off; the damaged line is kept aside with its reason.
        assert_eq!(spool.len(), (good.len() + 1 + "not json\n".len()) as u64);
        let rejected = std::fs::read_to_string(spool.rejected_path()).unwrap();
        assert!(rejected.contains("not json"), "{rejected}");
    }

    #[test]
    fn one_process_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.spool");
        let (_held, _) = Spool::open(&path).unwrap();
        assert!(matches!(
            Spool::open(&path),
            Err(ServiceError::SpoolInUse { .. })
        ));
    }
}
