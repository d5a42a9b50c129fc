//! Proxmox VE guests: reading `pct list`, `qm list`, `pct config ID` and `qm config ID`
//! (the formats of Proxmox VE 8), and the fixed transport that reaches a container
//! without an SSH address of its own through its node (`pct exec VMID -- sh -c '...'`).
//!
//! Parsing is pure and total: a line it cannot read is skipped, never guessed at.

use std::fmt;

/// A container or a VM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// Reads `pct list`: a header `VMID Status Lock Name`, then one container per line;
/// `Lock` may be empty, so the columns are taken at the header's positions.
pub fn parse_pct_list(text: &str) -> Vec<ListedGuest> {
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let (Some(status_at), Some(name_at)) = (header.find("Status"), header.find("Name")) else {
        return Vec::new();
    };
    lines
        .filter_map(|line| {
            let vmid = line.split_whitespace().next()?.parse().ok()?;
            let status = line.get(status_at..)?.split_whitespace().next()?.to_owned();
            let name = line.get(name_at..)?.trim().to_owned();
            (!name.is_empty()).then_some(ListedGuest {
                kind: GuestKind::Lxc,
                vmid,
                name,
                status,
            })
        })
        .collect()
}

/// Reads `qm list`: a header `VMID NAME STATUS MEM(MB) BOOTDISK(GB) PID`, then one VM
/// per line (VM names hold no spaces).
pub fn parse_qm_list(text: &str) -> Vec<ListedGuest> {
    text.lines()
        .skip(1)
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

/// The command a container's node runs to run `inner` inside container `vmid`: the
/// transport is fixed code; `inner` is passed as one single-quoted word, so the shell in
/// the container receives exactly `inner` (EXEC-7 holds for the inner string).
pub fn pct_exec(vmid: u32, inner: &str) -> String {
    format!("pct exec {vmid} -- sh -c {}", single_quote(inner))
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

    #[test]
    fn unreadable_lists_give_no_guests() {
        assert!(parse_pct_list("").is_empty());
        assert!(parse_pct_list("permission denied").is_empty());
        assert!(parse_qm_list("VMID NAME\nnot-a-number x y").is_empty());
    }

    #[test]
    fn pct_exec_passes_the_inner_command_as_one_quoted_word() {
        assert_eq!(pct_exec(100, "uptime"), "pct exec 100 -- sh -c 'uptime'");
        let inner = "echo 'it''s' \"$HOME\" `id` $(date); ls | wc -l";
        let wrapped = pct_exec(101, inner);
        assert_eq!(
            wrapped,
            r#"pct exec 101 -- sh -c 'echo '\''it'\'''\''s'\'' "$HOME" `id` $(date); ls | wc -l'"#
        );
        // A real shell reads the quoted word back as exactly the inner command.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {}", single_quote(inner)))
            .output()
            .unwrap_or_else(|e| panic!("sh: {e}"));
        assert_eq!(String::from_utf8_lossy(&out.stdout), inner);
    }
}
