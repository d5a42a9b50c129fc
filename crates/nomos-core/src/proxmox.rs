//! Proxmox VE guests: reading `pct list`, `qm list`, `pct config ID` and `qm config ID`
//! (the formats of Proxmox VE 8), and the fixed transport that reaches a container
//! without an SSH address of its own through its node (`pct exec VMID -- /bin/sh -c '...'`).
//!
//! Parsing is pure and total: a line it cannot read is skipped, never guessed at.
//! A discovery (FLEET-3) runs [`PCT_LIST`] and [`QM_LIST`] on a node, then
//! [`config_command`] for each guest they list, each through the gate like any `run`,
//! and [`Guest::from_listing`] joins what they said; the guest becomes an entity
//! ([`Guest::entity`]) that [`Guest::runs_on`] the node, and a host the executor
//! reaches ([`crate::ports::exec::Executor::set_guests`]).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::classify::Shell;
use crate::record::{Entity, Relationship};
use crate::time::Timestamp;

/// Lists a node's containers.
pub const PCT_LIST: &str = "pct list";

/// Lists a node's VMs.
pub const QM_LIST: &str = "qm list";

/// The relationship kind from a guest to its node.
pub const RUNS_ON: &str = "runs_on";

/// A container or a VM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GuestKind {
    /// An LXC container (`pct`).
    Lxc,
    /// A QEMU VM (`qm`).
    Vm,
}

impl GuestKind {
    /// The entity kind and slug prefix: `lxc` or `vm`.
    pub fn as_str(&self) -> &'static str {
        match self {
            GuestKind::Lxc => "lxc",
            GuestKind::Vm => "vm",
        }
    }
}

impl fmt::Display for GuestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One guest as a list shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedGuest {
    /// Container or VM.
    pub kind: GuestKind,
    /// Its id on the cluster.
    pub vmid: u32,
    /// Its name (`hostname` of a container, `name` of a VM).
    pub name: String,
    /// `running`, `stopped`, ...
    pub status: String,
}

/// What a guest's config says about its network.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GuestConfig {
    /// `hostname:` (containers) or `name:` (VMs).
    pub name: Option<String>,
    /// Static addresses from `netN: ...ip=` (containers) or `ipconfigN: ip=` (VMs),
    /// without their prefix length; `dhcp`, `manual` and `auto` are not addresses.
    pub ips: Vec<String>,
}

/// Reads `pct list`: a header `VMID Status Lock Name`, then one container per line.
/// `Lock` is often empty and may be wider than its column (`snapshot-delete`), so a
/// line of three words has a name only when its third word starts in the `Name`
/// column; with four, the last is the name (hostnames hold no spaces).
pub fn parse_pct_list(text: &str) -> Vec<ListedGuest> {
    let mut lines = text.lines();
    let Some(name_at) = lines.next().and_then(|header| header.find("Name")) else {
        return Vec::new();
    };
    lines
        .filter_map(|line| {
            let words: Vec<(usize, &str)> = words_at(line).collect();
            let vmid = words.first()?.1.parse().ok()?;
            let status = words.get(1)?.1.to_owned();
            let name = match words.as_slice() {
                [_, _, (at, name)] if *at >= name_at => *name,
                [_, _, _, (_, name)] => *name,
                _ => return None,
            };
            Some(ListedGuest {
                kind: GuestKind::Lxc,
                vmid,
                name: name.to_owned(),
                status,
            })
        })
        .collect()
}

/// The whitespace-separated words of `line` with their byte offsets.
fn words_at(line: &str) -> impl Iterator<Item = (usize, &str)> {
    line.split_whitespace()
        .map(move |word| (word.as_ptr() as usize - line.as_ptr() as usize, word))
}

/// Reads `qm list`: a header `VMID NAME STATUS MEM(MB) BOOTDISK(GB) PID`, then one VM
/// per line (VM names hold no spaces).
pub fn parse_qm_list(text: &str) -> Vec<ListedGuest> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let vmid = words.next()?.parse().ok()?;
            let name = words.next()?.to_owned();
            let status = words.next()?.to_owned();
            Some(ListedGuest {
                kind: GuestKind::Vm,
                vmid,
                name,
                status,
            })
        })
        .collect()
}

/// Reads `pct config ID` or `qm config ID` (`key: value` lines; a snapshot section
/// `[name]` and everything after it is not the current config).
pub fn parse_config(kind: GuestKind, text: &str) -> GuestConfig {
    let mut config = GuestConfig::default();
    for line in text.lines() {
        if line.starts_with('[') {
            break;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match (kind, key) {
            (GuestKind::Lxc, "hostname") | (GuestKind::Vm, "name") => {
                config.name = Some(value.to_owned());
            }
            (GuestKind::Lxc, k) if is_indexed(k, "net") => push_ips(&mut config.ips, value),
            (GuestKind::Vm, k) if is_indexed(k, "ipconfig") => push_ips(&mut config.ips, value),
            _ => {}
        }
    }
    config
}

/// The read-only command that prints guest `vmid`'s config: `pct config ID` or
/// `qm config ID`.
pub fn config_command(kind: GuestKind, vmid: u32) -> String {
    match kind {
        GuestKind::Lxc => format!("pct config {vmid}"),
        GuestKind::Vm => format!("qm config {vmid}"),
    }
}

/// A guest a discovery found: what its list line and its config said, and its node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Guest {
    /// Container or VM.
    pub kind: GuestKind,
    /// Its id on the cluster.
    pub vmid: u32,
    /// Its name (the config's, else the list's).
    pub name: String,
    /// `running`, `stopped`, ...
    pub status: String,
    /// Static addresses from its config.
    pub ips: Vec<String>,
    /// The slug of the node it runs on.
    pub node: String,
}

impl Guest {
    /// Joins a list line with the guest's config (`None` when it could not be read).
    pub fn from_listing(node: &str, listed: ListedGuest, config: Option<GuestConfig>) -> Guest {
        let config = config.unwrap_or_default();
        let name = config
            .name
            .filter(|name| is_slug_name(name))
            .unwrap_or(listed.name);
        Guest {
            kind: listed.kind,
            vmid: listed.vmid,
            name,
            status: listed.status,
            ips: config.ips,
            node: node.to_owned(),
        }
    }

    /// Its host and entity slug: `lxc:NAME` or `vm:NAME`.
    pub fn slug(&self) -> String {
        format!("{}:{}", self.kind, self.name)
    }

    /// What the knowledge graph records about it.
    pub fn attributes(&self) -> serde_json::Value {
        json!({
            "vmid": self.vmid,
            "status": self.status,
            "ips": self.ips,
            "node": self.node,
            "source": "proxmox",
        })
    }

    /// Its entity (`kind = lxc|vm`).
    pub fn entity(&self, now: Timestamp) -> Entity {
        Entity {
            slug: self.slug(),
            kind: self.kind.as_str().to_owned(),
            name: self.name.clone(),
            attributes: self.attributes(),
            updated_at: now,
        }
    }

    /// `GUEST runs_on NODE`.
    pub fn runs_on(&self, now: Timestamp) -> Relationship {
        Relationship {
            from: self.slug(),
            kind: RUNS_ON.to_owned(),
            to: self.node.clone(),
            created_at: now,
        }
    }
}

/// Whether `name` can be the name part of a slug (not empty, no whitespace or controls).
pub fn is_slug_name(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// The command a container's node runs to run `inner` inside container `vmid`: the
/// transport is fixed code; `inner` is passed as one single-quoted word, so the shell in
/// the container receives exactly `inner` (EXEC-7 holds for the inner string). The
/// container's `/bin/sh` is started as every pinned shell is, with the pinned environment
/// ([`Shell::wrap`], CLASSIFY-8).
pub fn pct_exec(vmid: u32, inner: &str) -> String {
    format!("pct exec {vmid} -- {}", Shell::Sh.wrap(inner))
}

/// `text` as one POSIX shell word in single quotes (`'` written as `'\''`).
pub fn single_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn is_indexed(key: &str, prefix: &str) -> bool {
    key.strip_prefix(prefix)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn push_ips(ips: &mut Vec<String>, value: &str) {
    for part in value.split(',') {
        let Some((key, address)) = part.split_once('=') else {
            continue;
        };
        if key != "ip" && key != "ip6" {
            continue;
        }
        if matches!(address, "dhcp" | "manual" | "auto") {
            continue;
        }
        let address = address.split('/').next().unwrap_or(address);
        if !address.is_empty() && !ips.iter().any(|ip| ip == address) {
            ips.push(address.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PCT_LIST: &str = "\
VMID       Status     Lock         Name                
100        running                 nextcloud           
101        stopped    backup       media               
102        running                 dns-resolver        
";

    const QM_LIST: &str =
        "      VMID NAME                 STATUS     MEM(MB)    BOOTDISK(GB) PID       
       200 debian-vm            running    2048              32.00 12345     
       201 win11                stopped    8192              64.00 0         
";

    const PCT_CONFIG: &str = "\
arch: amd64
cores: 2
features: nesting=1
hostname: nextcloud
memory: 2048
net0: name=eth0,bridge=vmbr0,firewall=1,gw=192.168.1.1,hwaddr=BC:24:11:AA:BB:CC,ip=192.168.1.50/24,ip6=fd00::50/64,type=veth
net1: name=eth1,bridge=vmbr1,hwaddr=BC:24:11:AA:BB:CD,ip=dhcp,type=veth
ostype: debian
rootfs: local-lvm:vm-100-disk-0,size=8G
swap: 512

[before-upgrade]
hostname: nextcloud-old
net0: name=eth0,bridge=vmbr0,ip=10.9.9.9/24,type=veth
";

    const QM_CONFIG: &str = "\
boot: order=scsi0;net0
cores: 2
ipconfig0: ip=192.168.1.60/24,gw=192.168.1.1
memory: 2048
name: debian-vm
net0: virtio=BC:24:11:DD:EE:FF,bridge=vmbr0
scsi0: local-lvm:vm-200-disk-0,size=32G
";

    // rule: FLEET-3
    #[test]
    fn pct_list_reads_each_container_with_an_empty_lock_column() {
        let guests = parse_pct_list(PCT_LIST);
        let seen: Vec<_> = guests
            .iter()
            .map(|g| (g.vmid, g.name.as_str(), g.status.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                (100, "nextcloud", "running"),
                (101, "media", "stopped"),
                (102, "dns-resolver", "running")
            ]
        );
        assert!(guests.iter().all(|g| g.kind == GuestKind::Lxc));
    }

    #[test]
    fn qm_list_reads_each_vm() {
        let guests = parse_qm_list(QM_LIST);
        let seen: Vec<_> = guests
            .iter()
            .map(|g| (g.vmid, g.name.as_str(), g.status.as_str()))
            .collect();
        assert_eq!(
            seen,
            [(200, "debian-vm", "running"), (201, "win11", "stopped")]
        );
    }

    #[test]
    fn a_config_gives_the_name_and_static_addresses_of_the_current_config() {
        let lxc = parse_config(GuestKind::Lxc, PCT_CONFIG);
        assert_eq!(lxc.name.as_deref(), Some("nextcloud"));
        assert_eq!(
            lxc.ips,
            ["192.168.1.50", "fd00::50"],
            "dhcp is no address; snapshots are not current"
        );
        let vm = parse_config(GuestKind::Vm, QM_CONFIG);
        assert_eq!(vm.name.as_deref(), Some("debian-vm"));
        assert_eq!(vm.ips, ["192.168.1.60"]);
    }

    // rule: FLEET-3
    #[test]
    fn a_lock_wider_than_its_column_or_a_missing_name_is_read_by_words() {
        let text = "\
VMID       Status     Lock         Name                
103        stopped    snapshot-delete ci-runner           
104        stopped    backup      
105        running                 grafana
";
        let seen: Vec<_> = parse_pct_list(text)
            .into_iter()
            .map(|g| (g.vmid, g.name))
            .collect();
        assert_eq!(
            seen,
            [(103, "ci-runner".to_owned()), (105, "grafana".to_owned())],
            "a lock is not a name"
        );
    }

    // rule: FLEET-3
    #[test]
    fn a_guest_joins_its_list_line_and_config_into_an_entity_that_runs_on_its_node() {
        let listed = parse_pct_list(PCT_LIST).remove(0);
        let config = parse_config(GuestKind::Lxc, PCT_CONFIG);
        let guest = Guest::from_listing("host:pve", listed, Some(config));
        assert_eq!(guest.slug(), "lxc:nextcloud");
        let now = Timestamp::from_millis(5);
        let entity = guest.entity(now);
        assert_eq!(entity.kind, "lxc");
        assert_eq!(entity.attributes["vmid"], 100);
        assert_eq!(entity.attributes["status"], "running");
        assert_eq!(entity.attributes["node"], "host:pve");
        assert_eq!(entity.attributes["ips"][0], "192.168.1.50");
        let rel = guest.runs_on(now);
        assert_eq!(
            (rel.from.as_str(), rel.kind.as_str(), rel.to.as_str()),
            ("lxc:nextcloud", "runs_on", "host:pve")
        );
        let vm = parse_qm_list(QM_LIST).remove(1);
        let bare = Guest::from_listing("host:pve", vm, None);
        assert_eq!((bare.slug().as_str(), bare.ips.len()), ("vm:win11", 0));
        assert_eq!(config_command(GuestKind::Vm, 201), "qm config 201");
        assert_eq!(config_command(GuestKind::Lxc, 100), "pct config 100");
    }

    #[test]
    fn unreadable_lists_give_no_guests() {
        assert!(parse_pct_list("").is_empty());
        assert!(parse_pct_list("permission denied").is_empty());
        assert!(parse_qm_list("VMID NAME\nnot-a-number x y").is_empty());
    }

    // rule: FLEET-3
    // rule: CLASSIFY-8
    #[test]
    fn pct_exec_passes_the_inner_command_as_one_quoted_word() {
        assert_eq!(
            pct_exec(100, "uptime"),
            "pct exec 100 -- /usr/bin/env GIT_OPTIONAL_LOCKS=0 /bin/sh -c 'uptime'"
        );
        let inner = "echo 'it''s' \"$HOME\" `id` $(date); ls | wc -l";
        let wrapped = pct_exec(101, inner);
        assert_eq!(
            wrapped,
            r#"pct exec 101 -- /usr/bin/env GIT_OPTIONAL_LOCKS=0 /bin/sh -c 'echo '\''it'\'''\''s'\'' "$HOME" `id` $(date); ls | wc -l'"#
        );
        // A real shell reads the quoted word back as exactly the inner command.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {}", single_quote(inner)))
            .output()
            .unwrap_or_else(|e| panic!("sh: {e}"));
        assert_eq!(String::from_utf8_lossy(&out.stdout), inner);
    }

    /// What a real `sh` hands to `pct` as the argument after `/bin/sh -c` when it reads
    /// the wrapper: a `pct` function prints its eighth argument (`exec VMID --
    /// /usr/bin/env GIT_OPTIONAL_LOCKS=0 /bin/sh -c INNER`).
    fn inner_as_pct_receives_it(wrapper: &str) -> String {
        let script = format!("pct() {{ shift 7; printf %s \"$1\"; }}; {wrapper}");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .output()
            .unwrap_or_else(|e| panic!("sh: {e}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        // rule: FLEET-3
        // rule: EXEC-7
        #[test]
        fn for_any_inner_command_pct_exec_receives_exactly_it(
            inner in "[ -~\t\n'\"\\\\$`]{0,40}|\\PC{0,20}",
            vmid in 100u32..1_000_000,
        ) {
            let wrapper = pct_exec(vmid, &inner);
            let prefix = format!("pct exec {vmid} -- /usr/bin/env GIT_OPTIONAL_LOCKS=0 /bin/sh -c '");
            proptest::prop_assert!(wrapper.starts_with(&prefix));
            proptest::prop_assert_eq!(inner_as_pct_receives_it(&wrapper), inner);
        }
    }
}
