//! What a path names, for writes: a harmless sink, a block device, a system root, a file.

use super::super::walk::Arg;
use crate::class::CommandClass;

/// The class of writing to `target` (a redirection, `tee`, `dd of=`, a copy destination).
pub(crate) fn write_target(target: Arg<'_>) -> (CommandClass, &'static str) {
    if target.dynamic {
        return (
            CommandClass::ConfigMutation,
            "writes to a file named only at run time",
        );
    }
    let path = target.text;
    if is_harmless_sink(path) {
        return (CommandClass::ReadOnly, "discards or shows the output");
    }
    if is_block_device(path) {
        return (CommandClass::Destructive, "overwrites a block device");
    }
    if path.starts_with("/dev/") {
        return (CommandClass::ConfigMutation, "writes to a device");
    }
    (CommandClass::ConfigMutation, "writes to a file")
}

/// `/dev/null`, the standard streams and the other devices writing to which changes nothing.
pub(crate) fn is_harmless_sink(path: &str) -> bool {
    matches!(
        path,
        "/dev/null"
            | "/dev/stdout"
            | "/dev/stderr"
            | "/dev/tty"
            | "/dev/zero"
            | "/dev/full"
            | "/dev/random"
            | "/dev/urandom"
    ) || path
        .strip_prefix("/dev/fd/")
        .is_some_and(|fd| fd.bytes().all(|b| b.is_ascii_digit()))
}

/// Disks, partitions, volumes and raw memory: writing to them destroys data.
pub(crate) fn is_block_device(path: &str) -> bool {
    let Some(name) = path.strip_prefix("/dev/") else {
        return false;
    };
    const PREFIXES: [&str; 22] = [
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "md", "dm-", "loop", "nbd", "rbd", "zd", "sr",
        "mapper/", "disk/", "zvol/", "mem", "kmem", "port", "pve/", "bcache", "drbd",
    ];
    // `/dev/VG/LV`: a logical volume.
    PREFIXES.iter().any(|prefix| name.starts_with(prefix)) || name.contains('/')
}

/// `/` and the top-level system directories, where a recursive change breaks the host.
pub(crate) fn is_system_root(path: &str) -> bool {
    let trimmed = path.trim_end_matches('/');
    let trimmed = trimmed
        .strip_suffix("/*")
        .unwrap_or(trimmed)
        .trim_end_matches('/');
    matches!(
        trimmed,
        "" | "/."
            | "/.."
            | "/*"
            | "/etc"
            | "/usr"
            | "/var"
            | "/bin"
            | "/sbin"
            | "/lib"
            | "/lib64"
            | "/boot"
            | "/root"
            | "/home"
            | "/opt"
            | "/srv"
            | "/dev"
            | "/proc"
            | "/sys"
            | "/run"
    ) && path.starts_with('/')
}

/// The system directories whose programs are read as their basename (CLASSIFY-7).
const SYSTEM_DIRS: &[&str] = &[
    "/bin",
    "/sbin",
    "/usr/bin",
    "/usr/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
];

/// The program a path names when it is a plain name in a system directory: `/usr/bin/rm`
/// is `rm`; `/usr/bin/../../tmp/rm`, `/usr/bin//rm` and `./rm` are not.
pub(crate) fn system_program(path: &str) -> Option<&str> {
    let (dir, name) = path.rsplit_once('/')?;
    let plain = !name.is_empty() && name != "." && name != "..";
    (plain && SYSTEM_DIRS.contains(&dir)).then_some(name)
}
