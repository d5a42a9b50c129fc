//! A fake Proxmox VE 8 node for tests (FLEET-3): `pct` and `qm` scripts that print the
//! outputs in `fixtures/proxmox/` for `list` and `config ID`, and a `pct exec VMID --
//! CMD...` that runs the command on the test host itself, after writing the argument
//! it received after `/bin/sh -c` to `pct-exec.VMID` next to the script, so a test can see
//! exactly what arrived. Inside, `PVE_GUEST` is the container's id, so a `$PVE_GUEST`
//! expanded there (and not by the node's shell) shows which container ran it.

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
         *) echo \"qm: unknown command '$1'\" >&2; exit 255;;\n\
         esac",
        configs = cases(&QM_CONFIGS),
    )
}

fn cases(configs: &[(u32, &str)]) -> String {
    configs
        .iter()
        .map(|(vmid, text)| format!("{vmid}) cat <<'PVE'\n{text}PVE\n;;\n"))
        .collect()
}
