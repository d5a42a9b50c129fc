//! A fake Proxmox VE 8 node for tests (FLEET-3): `pct` and `qm` scripts that print the
//! outputs in `fixtures/proxmox/` for `list` and `config ID`, and a `pct exec VMID --
//! CMD...` that runs the command on the test host itself, after writing the argument
//! it received after `/bin/sh -c` to `pct-exec.VMID` next to the script, so a test can see
//! exactly what arrived. Inside, `PVE_GUEST` is the container's id, so a `$PVE_GUEST`
//! expanded there (and not by the node's shell) shows which container ran it.
//!
//! SAFE-1: `snapshot`, `listsnapshot`, `delsnapshot` and `rollback` (of `pct` and `qm`)
//! append their arguments to `pve-calls` next to the script ([`calls`]) and keep the
//! snapshots in `pve-snapshots` (one `VMID NAME DATE TIME` line each, [`seed_snapshot`]);
//! `listsnapshot` prints them as Proxmox VE 8 does, and a snapshot fails with the text of
//! `pve-snapshot-fails` when that file exists ([`fail_snapshots`]).

// Test helpers: a fixture file that cannot be written is the test's failure.
#![allow(clippy::expect_used)]

use std::path::Path;

use crate::fleet::HostSpec;

const PCT_LIST: &str = include_str!("../../../fixtures/proxmox/pct-list.txt");
const QM_LIST: &str = include_str!("../../../fixtures/proxmox/qm-list.txt");
const PCT_CONFIGS: [(u32, &str); 3] = [
    (
        100,
        include_str!("../../../fixtures/proxmox/pct-config-100.txt"),
    ),
    (
        101,
        include_str!("../../../fixtures/proxmox/pct-config-101.txt"),
    ),
    (
        102,
        include_str!("../../../fixtures/proxmox/pct-config-102.txt"),
    ),
];
const QM_CONFIGS: [(u32, &str); 2] = [
    (
        200,
        include_str!("../../../fixtures/proxmox/qm-config-200.txt"),
    ),
    (
        201,
        include_str!("../../../fixtures/proxmox/qm-config-201.txt"),
    ),
];

/// The fixture node's containers: `(vmid, name, status, static addresses)`.
pub const CONTAINERS: [(u32, &str, &str, &[&str]); 3] = [
    (100, "nextcloud", "running", &["10.0.0.5"]),
    (101, "media", "stopped", &[]),
    (102, "pihole", "running", &["10.0.0.7"]),
];

/// The fixture node's VMs: `(vmid, name, status, static addresses)`.
pub const VMS: [(u32, &str, &str, &[&str]); 2] = [
    (200, "debian-vm", "running", &["10.0.0.60"]),
    (201, "win11", "stopped", &[]),
];

/// A reachable test host `slug` that is a Proxmox node: `proxmox = true` in the
/// inventory, the fake `pct` and `qm` first on its `PATH`.
pub fn node(slug: &str, tags: &[&str]) -> HostSpec {
    HostSpec::up(slug, tags)
        .program("pct", &pct_script())
        .program("qm", &qm_script())
        .inventory("proxmox = true")
}

/// The fake `pct`.
pub fn pct_script() -> String {
    format!(
        "case \"$1\" in\n\
         list) cat <<'PVE'\n{PCT_LIST}PVE\n;;\n\
         config) case \"$2\" in\n{configs}\
         *) echo \"Configuration file 'nodes/pve/lxc/$2.conf' does not exist\" >&2; exit 2;;\n\
         esac;;\n\
{snapshots}\
         exec)\n\
           vmid=$2\n\
           [ \"$3\" = \"--\" ] || {{ echo 'pct exec: expected -- after the vmid' >&2; exit 2; }}\n\
           shift 3\n\
           prev=\n\
           for arg; do [ \"$prev\" = -c ] && printf %s \"$arg\" > \"$(dirname \"$0\")/pct-exec.$vmid\"; prev=$arg; done\n\
           PVE_GUEST=$vmid; export PVE_GUEST\n\
           exec \"$@\";;\n\
         *) echo \"pct: unknown command '$1'\" >&2; exit 255;;\n\
         esac",
        configs = cases(&PCT_CONFIGS),
        snapshots = snapshot_cases("pct"),
    )
}

/// The fake `qm`.
pub fn qm_script() -> String {
    format!(
        "case \"$1\" in\n\
         list) cat <<'PVE'\n{QM_LIST}PVE\n;;\n\
         config) case \"$2\" in\n{configs}\
         *) echo \"Configuration file 'nodes/pve/qemu-server/$2.conf' does not exist\" >&2; exit 2;;\n\
         esac;;\n\
{snapshots}\
         *) echo \"qm: unknown command '$1'\" >&2; exit 255;;\n\
         esac",
        configs = cases(&QM_CONFIGS),
        snapshots = snapshot_cases("qm"),
    )
}

/// The snapshot verbs of the fake `pct` / `qm` (SAFE-1).
fn snapshot_cases(tool: &str) -> String {
    format!(
        "snapshot|listsnapshot|delsnapshot|rollback)\n\
           d=$(dirname \"$0\"); touch \"$d/pve-snapshots\"\n\
           echo \"{tool} $*\" >> \"$d/pve-calls\"\n\
           case \"$1\" in\n\
           snapshot)\n\
             if [ -e \"$d/pve-snapshot-fails\" ]; then cat \"$d/pve-snapshot-fails\" >&2; exit 255; fi\n\
             echo \"$2 $3 $(date '+%Y-%m-%d %H:%M:%S')\" >> \"$d/pve-snapshots\";;\n\
           listsnapshot)\n\
             pad=''\n\
             while read -r id name day time; do\n\
               [ \"$id\" = \"$2\" ] || continue\n\
               printf '%s`-> %-24s %s %s     no-description\\n' \"$pad\" \"$name\" \"$day\" \"$time\"\n\
               pad=\"$pad \"\n\
             done < \"$d/pve-snapshots\"\n\
             printf '%s`-> current                                         You are here!\\n' \"$pad\";;\n\
           delsnapshot)\n\
             grep -q \"^$2 $3 \" \"$d/pve-snapshots\" || {{ echo \"snapshot '$3' does not exist\" >&2; exit 255; }}\n\
             grep -v \"^$2 $3 \" \"$d/pve-snapshots\" > \"$d/pve-snapshots.new\"\n\
             mv \"$d/pve-snapshots.new\" \"$d/pve-snapshots\";;\n\
           rollback)\n\
             grep -q \"^$2 $3 \" \"$d/pve-snapshots\" || {{ echo \"snapshot '$3' does not exist\" >&2; exit 255; }};;\n\
           esac;;\n"
    )
}

/// SAFE-1: every snapshot verb the fake `pct` and `qm` in `bin` received, in order, as
/// `pct snapshot 100 NAME`.
pub fn calls(bin: &Path) -> Vec<String> {
    std::fs::read_to_string(bin.join("pve-calls"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// SAFE-1: the snapshots the fake node holds, as `VMID NAME`.
pub fn snapshots(bin: &Path) -> Vec<String> {
    std::fs::read_to_string(bin.join("pve-snapshots"))
        .unwrap_or_default()
        .lines()
        .map(|line| {
            line.split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// SAFE-1: adds a snapshot `name` of `vmid` taken at `taken` (`YYYY-MM-DD HH:MM:SS`).
pub fn seed_snapshot(bin: &Path, vmid: u32, name: &str, taken: &str) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(bin.join("pve-snapshots"))
        .expect("the fake node's snapshot list");
    writeln!(file, "{vmid} {name} {taken}").expect("write a snapshot line");
}

/// SAFE-1: every snapshot on the fake node fails from now on, printing `message`.
pub fn fail_snapshots(bin: &Path, message: &str) {
    std::fs::write(bin.join("pve-snapshot-fails"), message).expect("write the failure");
}

fn cases(configs: &[(u32, &str)]) -> String {
    configs
        .iter()
        .map(|(vmid, text)| format!("{vmid}) cat <<'PVE'\n{text}PVE\n;;\n"))
        .collect()
}
