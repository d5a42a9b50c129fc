//! SAFE-2: backups of the files a change writes, and their restore.
//!
//! Before a change whose write targets the classifier can name
//! ([`crate::classify::write_targets`]), the core hands the shell one backup script to run
//! on the change's host: it prunes the host's old backups (by age, then by total size), then
//! copies each named file that exists to `<root>/<execution id>/<n>` with `cp -p` and prints
//! one manifest line per file (path, copy, owner, mode, size, SHA-256). The script is built
//! here, its output read here ([`BackupManifest::parse`]); the shell only runs it.
//!
//! A restore puts back the exact bytes, mode and owner of every copy of one backup
//! ([`restore_script`]), checking each copy's checksum first; its preview is a `diff -u` of
//! each current file against its copy ([`restore_preview_commands`]).

use serde::{Deserialize, Serialize};

use crate::classify::preview::{PreviewForm, PreviewParser, quote_always};
use crate::classify::{WriteKind, WriteTargets};
use crate::id::ExecutionId;

/// The reason prefix of a backup net's execution.
pub const BACKUP_REASON: &str = "SAFE-2: backup";

/// What the safety nets around a change are configured with (SAFE-1, SAFE-2, SAFE-3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetsConfig {
    /// SAFE-2's backups.
    pub backup: BackupConfig,
    /// SAFE-1's snapshots.
    pub snapshot: crate::snapshot::SnapshotConfig,
    /// SAFE-3's dead man's switch.
    pub revert: crate::revert::RevertConfig,
}

impl NetsConfig {
    /// The defaults of both.
    pub fn spec_defaults() -> NetsConfig {
        NetsConfig {
            backup: BackupConfig::spec_defaults(),
            snapshot: crate::snapshot::SnapshotConfig::spec_defaults(),
            revert: crate::revert::RevertConfig::spec_defaults(),
        }
    }
}

/// Whether changes are backed up (SAFE-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackupMode {
    /// Before every change whose files the classifier names (the default).
    BeforeChange,
    /// Never: for a fleet whose hosts cannot hold copies, and for simulated hosts that
    /// answer only scripted commands (the golden evals).
    Off,
}

/// Where backups go and how much of them a host keeps (SAFE-2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackupConfig {
    /// Whether changes are backed up at all.
    pub mode: BackupMode,
    /// The directory on each host under which a backup per execution is kept.
    pub root: String,
    /// The most a host keeps in `root`, in KiB; older backups go first past it.
    pub max_kib: u64,
    /// Backups older than this many days are removed.
    pub max_age_days: u32,
}

impl BackupConfig {
    /// `/var/lib/nomos/backup`, 512 MiB and 30 days per host.
    pub fn spec_defaults() -> BackupConfig {
        BackupConfig {
            mode: BackupMode::BeforeChange,
            root: "/var/lib/nomos/backup".to_owned(),
            max_kib: 512 * 1024,
            max_age_days: 30,
        }
    }
}

/// One file a backup copied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackedUpFile {
    /// The file's path on the host.
    pub path: String,
    /// Where its copy is.
    pub copy: String,
    /// Owner uid.
    pub uid: u32,
    /// Owner gid.
    pub gid: u32,
    /// Mode, in octal as `stat` prints it (`644`).
    pub mode: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 of the content, hex.
    pub sha256: String,
}

/// What one backup run did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackupManifest {
    /// The files copied.
    pub files: Vec<BackedUpFile>,
    /// Named files that did not exist (nothing to keep).
    pub absent: Vec<String>,
    /// Older backups removed to keep the host under its caps.
    pub pruned: Vec<String>,
}

impl BackupManifest {
    /// Reads the script's standard output; lines it does not know are ignored.
    pub fn parse(stdout: &str) -> BackupManifest {
        let mut manifest = BackupManifest::default();
        for line in stdout.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            match fields.as_slice() {
                ["file", path, copy, uid, gid, mode, size, sha256] => {
                    let (Ok(uid), Ok(gid), Ok(size)) = (uid.parse(), gid.parse(), size.parse())
                    else {
                        continue;
                    };
                    manifest.files.push(BackedUpFile {
                        path: (*path).to_owned(),
                        copy: (*copy).to_owned(),
                        uid,
                        gid,
                        mode: (*mode).to_owned(),
                        size,
                        sha256: (*sha256).to_owned(),
                    });
                }
                ["absent", path] => manifest.absent.push((*path).to_owned()),
                ["pruned", name] => manifest.pruned.push((*name).to_owned()),
                _ => {}
            }
        }
        manifest
    }
}

/// The paths a backup looks at for these write targets: each named path, and for a copy
/// destination also `DEST/<source name>` (a directory destination receives that name).
pub fn backup_candidates(targets: &WriteTargets) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    let mut add = |path: String| {
        if !paths.contains(&path) {
            paths.push(path);
        }
    };
    for target in &targets.named {
        add(target.path.clone());
        if target.kind == WriteKind::CopyDestination {
            for source in &target.sources {
                let name = source
                    .trim_end_matches('/')
                    .rsplit('/')
                    .next()
                    .unwrap_or("");
                if !name.is_empty() {
                    add(format!("{}/{name}", target.path.trim_end_matches('/')));
                }
            }
        }
    }
    paths
}

/// The directory one execution's backup goes to.
pub fn backup_dir(config: &BackupConfig, execution_id: ExecutionId) -> String {
    format!("{}/{execution_id}", config.root.trim_end_matches('/'))
}

/// The POSIX sh script that prunes old backups, then copies each existing regular file of
/// `paths` into the execution's backup directory and prints the manifest.
pub fn backup_script(config: &BackupConfig, execution_id: ExecutionId, paths: &[String]) -> String {
    let root = quote_always(config.root.trim_end_matches('/'));
    let dir = quote_always(&backup_dir(config, execution_id));
    let list: Vec<String> = paths.iter().map(|p| quote_always(p)).collect();
    format!(
        "set -u; umask 077; r={root}; d={dir}; mkdir -p \"$r\" || exit 1; \
find \"$r\" -mindepth 1 -maxdepth 1 -type d -mtime +{age} | while read -r o; do rm -rf -- \"$o\" && printf 'pruned\\t%s\\n' \"${{o##*/}}\"; done; \
while [ \"$(du -sk \"$r\" | cut -f1)\" -gt {kib} ]; do o=$(ls -1tr \"$r\" | head -n 1); [ -n \"$o\" ] || break; rm -rf -- \"$r/$o\"; printf 'pruned\\t%s\\n' \"$o\"; done; \
mkdir -p \"$d\" || exit 1; n=0; \
for p in {list}; do \
if [ -f \"$p\" ]; then n=$((n+1)); c=\"$d/$n\"; cp -p -- \"$p\" \"$c\" || exit 1; \
printf 'file\\t%s\\t%s\\t%s\\t%s\\n' \"$p\" \"$c\" \"$(stat -c '%u\t%g\t%a\t%s' -- \"$p\")\" \"$(sha256sum < \"$p\" | cut -d ' ' -f 1)\"; \
else printf 'absent\\t%s\\n' \"$p\"; fi; done",
        age = config.max_age_days,
        kib = config.max_kib,
        list = list.join(" "),
    )
}

/// The script that puts back every file of a backup: each copy's checksum is checked
/// first (a copy that changed restores nothing), then the bytes, the owner and the mode.
pub fn restore_script(manifest: &BackupManifest) -> String {
    let mut script = String::from("set -eu");
    for file in &manifest.files {
        let (copy, path) = (quote_always(&file.copy), quote_always(&file.path));
        script.push_str(&format!(
            "; [ \"$(sha256sum < {copy} | cut -d ' ' -f 1)\" = {sum} ] || {{ echo {bad} >&2; exit 1; }}",
            sum = quote_always(&file.sha256),
            bad = quote_always(&format!("the copy of {} changed", file.path)),
        ));
        script.push_str(&format!(
            "; cat -- {copy} > {path}; chown {uid}:{gid} -- {path}; chmod {mode} -- {path}; printf 'restored\\t%s\\n' {path}",
            uid = file.uid,
            gid = file.gid,
            mode = quote_always(&file.mode),
        ));
    }
    script
}

/// The read-only preview of a restore: each current file against its copy (`diff` exits 1
/// when they differ, which is the answer, not a failure).
pub fn restore_preview_commands(manifest: &BackupManifest) -> Vec<String> {
    manifest
        .files
        .iter()
        .map(|file| {
            format!(
                "diff -u {} {} || :",
                quote_always(&file.path),
                quote_always(&file.copy)
            )
        })
        .collect()
}

/// The preview form of a restore, shown as it is.
pub fn restore_preview_form(manifest: &BackupManifest) -> PreviewForm {
    PreviewForm {
        commands: restore_preview_commands(manifest),
        parser: PreviewParser::Raw,
        file: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{CommandClass, classify, write_targets};

    // rule: SAFE-2
    #[test]
    fn the_manifest_reads_files_absent_paths_and_pruned_backups() {
        let manifest = BackupManifest::parse(
            "pruned\told\nfile\t/etc/a\t/b/x/1\t0\t0\t644\t12\tabc\nabsent\t/etc/b\nnoise\n",
        );
        assert_eq!(manifest.files.len(), 1);
        assert_eq!(manifest.files[0].mode, "644");
        assert_eq!(manifest.files[0].size, 12);
        assert_eq!(manifest.absent, ["/etc/b"]);
        assert_eq!(manifest.pruned, ["old"]);
    }

    // rule: SAFE-2
    #[test]
    fn a_copy_destination_also_names_the_file_a_directory_receives() {
        let targets = write_targets("cp /tmp/new.conf /etc/app");
        assert_eq!(
            backup_candidates(&targets),
            ["/etc/app", "/etc/app/new.conf"]
        );
    }

    // rule: SAFE-2
    #[test]
    fn the_restore_preview_only_reads() {
        let manifest = BackupManifest::parse("file\t/etc/a b\t/b/x/1\t0\t0\t644\t12\tabc\n");
        for command in restore_preview_commands(&manifest) {
            assert_eq!(
                classify(&command).class,
                CommandClass::ReadOnly,
                "{command}"
            );
        }
    }
}
