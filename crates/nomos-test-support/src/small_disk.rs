//! A small tmpfs mounted on a temporary directory, for tests of what happens when the
//! disk fills up (EXEC-9) and of writes once space is freed again.
//!
//! Mounting needs root (or a user namespace that may mount). When the mount fails the
//! helper panics with the reason: a fault test never passes silently without its fault.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A mounted tmpfs; unmounted (lazily) and removed on drop.
#[derive(Debug)]
pub struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// Mounts a tmpfs of `megabytes` MiB on a fresh temporary directory.
    ///
    /// # Panics
    /// When the tmpfs cannot be mounted; the message gives `mount`'s own error.
    pub fn mount(megabytes: u32) -> SmallDisk {
        let dir = tempfile::tempdir().expect("cannot make a temporary directory");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o"])
            .arg(format!("size={megabytes}m,mode=0755"))
            .arg("nomos-small-disk")
            .arg(dir.path())
            .output()
            .unwrap_or_else(|e| panic!("cannot run mount: {e}"));
        if !out.status.success() {
            panic!(
                "cannot mount a {megabytes} MiB tmpfs on {} (the disk-full tests need root): {}",
                dir.path().display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        SmallDisk { dir }
    }

    /// Where the tmpfs is mounted.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file of zeros until the disk is full; returns its path. The write that
    /// fails is the proof the disk is full.
    ///
    /// # Panics
    /// When the disk does not fill (the file could be written in full).
    pub fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.path().join("ballast");
        let mut file = std::fs::File::create(&path).expect("cannot create the ballast file");
        let chunk = vec![0u8; 64 * 1024];
        for _ in 0..(1024 * 1024 * 1024 / chunk.len()) {
            if let Err(error) = file.write_all(&chunk).and_then(|()| file.sync_all()) {
                assert_eq!(
                    error.raw_os_error(),
                    Some(28),
                    "filling the disk failed with something else than ENOSPC: {error}"
                );
                return path;
            }
        }
        panic!("1 GiB written and the disk is still not full");
    }

    /// Frees the space [`SmallDisk::fill`] took.
    pub fn free(&self) {
        std::fs::remove_file(self.path().join("ballast")).expect("cannot remove the ballast");
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}
