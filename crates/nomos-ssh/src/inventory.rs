//! The host inventory: the TOML file that lists the hosts Nomos may run commands on.
//!
//! ```toml
//! [defaults]               # optional; applies to every SSH host
//! user = "root"
//! port = 22
//! key_file = "keys/id_ed25519"
//! passphrase_env = "NOMOS_KEY_PASSPHRASE"   # or passphrase_file = "keys/passphrase"
//!
//! [[host]]
//! slug = "local"           # this machine, through the local executor
//!
//! [[host]]
//! slug = "host:hubris"
//! address = "10.0.0.2"
//! tags = ["proxmox"]
//! proxmox = true           # a Proxmox VE node: its guests can be discovered (FLEET-3)
//! shell = "bash"           # the interpreter commands run under: sh (default), bash, busybox
//! snapshot = "before-change"  # SAFE-1: on a node, its guests are snapshotted before a change
//!
//! [[host]]
//! slug = "lxc:nextcloud"
//! address = "10.0.0.31"
//! jump = "host:hubris"     # reached through an SSH tunnel from host:hubris
//! tags = ["prod"]
//!
//! [tags.prod]
//! snapshot = "before-change"  # SAFE-1: every host tagged `prod` that is a Proxmox guest
//! ```
//!
//! Slugs are `local` or `KIND:NAME` (`lxc:nextcloud`, `vm:db`, `host:hubris`); the
//! kind names the knowledge-graph entity the host seeds. `key_file` paths that are
//! relative are taken relative to the inventory file when it is read with
//! [`Inventory::load`], and a leading `~/` means the home directory. A host with no
//! `key_file` (and none in `[defaults]`) authenticates with the ssh-agent's keys.
//!
//! A key with a passphrase names where the passphrase is, never the passphrase itself:
//! `passphrase_file` (a file holding it, relative paths resolved like `key_file`) or
//! `passphrase_env` (an environment variable holding it), not both.
//!
//! CLASSIFY-8: every command runs under an interpreter Nomos names, never under a host's
//! login shell: `/bin/sh -c` unless the host says `shell = "bash"` (`/bin/bash -c`) or
//! `shell = "busybox"` (`busybox sh -c`), and the gate reads the command in that shell's
//! grammar.
//!
//! `fixtures/inventory.example.toml` shows every field with a comment.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use nomos_core::classify::Shell;
use nomos_core::ports::exec::{ExecError, HostInfo};
use nomos_core::record::Entity;
use nomos_core::snapshot::{SnapshotPolicy, UnknownSnapshotPolicy};
use nomos_core::time::Timestamp;
use serde::Deserialize;

/// The slug of the machine Nomos runs on.
pub const LOCAL_SLUG: &str = "local";

/// The default SSH port.
pub const DEFAULT_PORT: u16 = 22;

/// A parsed, checked inventory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inventory {
    origin: String,
    hosts: Vec<Host>,
    /// SAFE-1: the snapshot policy of each tag that sets one (`[tags.NAME]`).
    tag_snapshots: BTreeMap<String, SnapshotPolicy>,
}

/// One host of the inventory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    /// Unique slug (`local`, `lxc:nextcloud`).
    pub slug: String,
    /// Display name (defaults to the part of the slug after the kind).
    pub name: String,
    /// Free-form tags.
    pub tags: Vec<String>,
    /// FLEET-3: whether it is a Proxmox VE node whose guests can be discovered.
    pub proxmox: bool,
    /// CLASSIFY-8: the interpreter its commands run under (`shell = ...`; `sh` by default).
    pub shell: Shell,
    /// SAFE-1: `snapshot = "before-change"` (for a Proxmox node: its guests reached
    /// through it).
    pub snapshot: SnapshotPolicy,
    /// How commands reach it.
    pub target: Target,
}

/// How commands reach a host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// This machine, through the local executor.
    Local,
    /// A remote machine over SSH.
    Ssh(SshTarget),
}

/// Where and as whom to connect over SSH.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SshTarget {
    /// Host name or IP address.
    pub address: String,
    /// TCP port.
    pub port: u16,
    /// Login user.
    pub user: String,
    /// Private key file (ed25519 or RSA, OpenSSH or PEM format); `None`
    /// authenticates with the identities of the ssh-agent instead.
    pub key_file: Option<PathBuf>,
    /// Where the key file's passphrase is, when it has one.
    pub passphrase: Option<Passphrase>,
    /// Slug of the host to tunnel through, if any.
    pub jump: Option<String>,
}

/// Where the passphrase of a key file is kept (never in the inventory itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Passphrase {
    /// A file holding the passphrase (one trailing newline is dropped).
    File(PathBuf),
    /// An environment variable holding the passphrase.
    Env(String),
}

/// Why an inventory could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    /// The file could not be read.
    #[error("could not read inventory {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The text is not valid TOML or has unknown or mistyped fields.
    #[error("{origin}: invalid inventory: {message}")]
    Syntax {
        /// The file (or other origin) of the text.
        origin: String,
        /// The parser's message, with line and column.
        message: String,
    },
    /// One `[tags.NAME]` table is wrong.
    #[error("{origin}: tag `{tag}`: {problem}")]
    Tag {
        /// The file (or other origin) of the text.
        origin: String,
        /// The tag.
        tag: String,
        /// What is wrong with it.
        problem: UnknownSnapshotPolicy,
    },
    /// One host entry is wrong.
    #[error("{origin}: host `{host}`: {problem}")]
    Host {
        /// The file (or other origin) of the text.
        origin: String,
        /// The host's slug, or `#N` (1-based position) when it has none.
        host: String,
        /// What is wrong with it.
        problem: HostProblem,
    },
}

/// What is wrong with one host entry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostProblem {
    /// The entry has no slug.
    #[error("missing slug")]
    MissingSlug,
    /// `shell` names no interpreter Nomos pins (CLASSIFY-8).
    #[error("{0}")]
    BadShell(#[from] nomos_core::classify::UnknownShell),
    /// `snapshot` is not a policy Nomos knows (SAFE-1).
    #[error("{0}")]
    BadSnapshot(#[from] UnknownSnapshotPolicy),
    /// The slug is not `local` or `KIND:NAME`.
    #[error("bad slug: {reason}")]
    BadSlug {
        /// Why.
        reason: String,
    },
    /// Another entry has the same slug.
    #[error("duplicate slug (first defined as host #{first})")]
    DuplicateSlug {
        /// 1-based position of the first entry with this slug.
        first: usize,
    },
    /// An SSH host has no address.
    #[error("missing address")]
    MissingAddress,
    /// An SSH host has no user, and `[defaults]` gives none.
    #[error("missing user")]
    MissingUser,
    /// The port is outside 1..=65535.
    #[error("bad port {port}: must be between 1 and 65535")]
    BadPort {
        /// The port given.
        port: i64,
    },
    /// The jump host is not in the inventory.
    #[error("unknown jump host `{jump}`")]
    UnknownJump {
        /// The slug given.
        jump: String,
    },
    /// The jump host is `local`, or the chain of jump hosts loops.
    #[error("bad jump host `{jump}`: {reason}")]
    BadJump {
        /// The slug given.
        jump: String,
        /// Why.
        reason: String,
    },
    /// Both `passphrase_file` and `passphrase_env` are set.
    #[error("set passphrase_file or passphrase_env, not both")]
    TwoPassphrases,
    /// A passphrase is named but there is no `key_file` it would unlock.
    #[error("`{field}` is set but there is no key_file (agent keys need no passphrase here)")]
    PassphraseWithoutKey {
        /// The field that is set.
        field: &'static str,
    },
    /// `passphrase_env` is not a plausible environment variable name.
    #[error(
        "bad passphrase_env `{name}`: expected an environment variable name such as NOMOS_KEY_PASSPHRASE"
    )]
    BadPassphraseEnv {
        /// The name given.
        name: String,
    },
    /// The `local` host was given SSH settings.
    #[error("the local host takes no `{field}`")]
    LocalTakesNoSsh {
        /// The field that should not be there.
        field: &'static str,
    },
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInventory {
    #[serde(default)]
    defaults: RawDefaults,
    #[serde(default, rename = "host")]
    hosts: Vec<RawHost>,
    #[serde(default)]
    tags: BTreeMap<String, RawTag>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTag {
    snapshot: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDefaults {
    user: Option<String>,
    port: Option<i64>,
    key_file: Option<PathBuf>,
    passphrase_file: Option<PathBuf>,
    passphrase_env: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHost {
    slug: Option<String>,
    name: Option<String>,
    address: Option<String>,
    port: Option<i64>,
    user: Option<String>,
    key_file: Option<PathBuf>,
    passphrase_file: Option<PathBuf>,
    passphrase_env: Option<String>,
    jump: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    proxmox: bool,
    shell: Option<String>,
    snapshot: Option<String>,
}

impl Inventory {
    /// Parses inventory text; `origin` (usually the file name) prefixes every error.
    pub fn parse(text: &str, origin: &str) -> Result<Inventory, InventoryError> {
        let raw: RawInventory = toml::from_str(text).map_err(|e| InventoryError::Syntax {
            origin: origin.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        let host_error = |host: String, problem: HostProblem| InventoryError::Host {
            origin: origin.to_string(),
            host,
            problem,
        };
        let default_port = match raw.defaults.port {
            Some(port) => check_port(port).map_err(|p| host_error("[defaults]".into(), p))?,
            None => DEFAULT_PORT,
        };

        let mut hosts = Vec::with_capacity(raw.hosts.len());
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (index, entry) in raw.hosts.into_iter().enumerate() {
            let position = index + 1;
            let label = entry.slug.clone().unwrap_or_else(|| format!("#{position}"));
            let host = build_host(entry, &raw.defaults, default_port)
                .map_err(|p| host_error(label.clone(), p))?;
            if let Some(first) = seen.get(&host.slug) {
                return Err(host_error(
                    label,
                    HostProblem::DuplicateSlug { first: *first },
                ));
            }
            seen.insert(host.slug.clone(), position);
            hosts.push(host);
        }

        let mut tag_snapshots = BTreeMap::new();
        for (tag, table) in raw.tags {
            let Some(text) = table.snapshot else { continue };
            let policy = text.parse().map_err(|problem| InventoryError::Tag {
                origin: origin.to_string(),
                tag: tag.clone(),
                problem,
            })?;
            tag_snapshots.insert(tag, policy);
        }
        let inventory = Inventory {
            origin: origin.to_string(),
            hosts,
            tag_snapshots,
        };
        inventory
            .check_jumps()
            .map_err(|(host, p)| host_error(host, p))?;
        Ok(inventory)
    }

    /// Reads and parses an inventory file. Relative `key_file` paths are resolved
    /// against the file's directory.
    pub fn load(path: &Path) -> Result<Inventory, InventoryError> {
        let text = std::fs::read_to_string(path).map_err(|source| InventoryError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let mut inventory = Inventory::parse(&text, &path.display().to_string())?;
        let base = path.parent().unwrap_or(Path::new("."));
        for host in &mut inventory.hosts {
            let Target::Ssh(ssh) = &mut host.target else {
                continue;
            };
            if let Some(key_file) = &mut ssh.key_file {
                resolve_relative(key_file, base);
            }
            if let Some(Passphrase::File(file)) = &mut ssh.passphrase {
                resolve_relative(file, base);
            }
        }
        Ok(inventory)
    }

    /// An inventory built in code (already checked hosts), named `origin`.
    pub fn from_hosts(origin: &str, hosts: Vec<Host>) -> Inventory {
        Inventory {
            origin: origin.to_string(),
            hosts,
            tag_snapshots: BTreeMap::new(),
        }
    }

    /// SAFE-1: the snapshot policy of `slug`: its own `snapshot`, else
    /// `before-change` when one of its tags' `[tags.NAME]` asks for it.
    pub fn snapshot_policy(&self, slug: &str) -> SnapshotPolicy {
        let Some(host) = self.host(slug) else {
            return SnapshotPolicy::Never;
        };
        if host.snapshot == SnapshotPolicy::BeforeChange {
            return host.snapshot;
        }
        let by_tag = host
            .tags
            .iter()
            .any(|tag| self.tag_snapshots.get(tag.as_str()) == Some(&SnapshotPolicy::BeforeChange));
        if by_tag {
            SnapshotPolicy::BeforeChange
        } else {
            host.snapshot
        }
    }

    /// Where the inventory came from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// All hosts, in file order.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// The host with this slug.
    pub fn host(&self, slug: &str) -> Option<&Host> {
        self.hosts.iter().find(|host| host.slug == slug)
    }

    /// The host with this slug, or [`ExecError::UnknownHost`] listing the known slugs.
    pub fn require(&self, slug: &str) -> Result<&Host, ExecError> {
        self.host(slug).ok_or_else(|| ExecError::UnknownHost {
            host: slug.to_string(),
            known: self.slugs(),
        })
    }

    /// Every slug, in file order.
    pub fn slugs(&self) -> Vec<String> {
        self.hosts.iter().map(|host| host.slug.clone()).collect()
    }

    /// The hosts as the executor port describes them.
    pub fn host_infos(&self) -> Vec<HostInfo> {
        self.hosts.iter().map(Host::info).collect()
    }

    /// FLEET-3: the slugs of the hosts marked `proxmox = true`, in file order.
    pub fn proxmox_nodes(&self) -> Vec<String> {
        self.hosts
            .iter()
            .filter(|host| host.proxmox)
            .map(|host| host.slug.clone())
            .collect()
    }

    /// The knowledge-graph entities the inventory seeds: one per host, its kind
    /// taken from the slug prefix (`local` for the local host).
    pub fn entities(&self, now: Timestamp) -> Vec<Entity> {
        self.hosts.iter().map(|host| host.entity(now)).collect()
    }

    fn check_jumps(&self) -> Result<(), (String, HostProblem)> {
        for host in &self.hosts {
            let Target::Ssh(ssh) = &host.target else {
                continue;
            };
            let mut chain = vec![host.slug.as_str()];
            let mut next = ssh.jump.as_deref();
            while let Some(jump) = next {
                let bad = |reason: String| {
                    (
                        host.slug.clone(),
                        HostProblem::BadJump {
                            jump: jump.to_string(),
                            reason,
                        },
                    )
                };
                let Some(target) = self.host(jump) else {
                    return Err((
                        host.slug.clone(),
                        HostProblem::UnknownJump {
                            jump: jump.to_string(),
                        },
                    ));
                };
                if chain.contains(&jump) {
                    chain.push(jump);
                    return Err(bad(format!("jump hosts loop: {}", chain.join(" -> "))));
                }
                chain.push(jump);
                next = match &target.target {
                    Target::Local => {
                        return Err(bad("the local host cannot be a jump host".into()));
                    }
                    Target::Ssh(t) => t.jump.as_deref(),
                };
            }
        }
        Ok(())
    }
}

impl Host {
    /// The entity kind: `local` for the local host, else the slug's prefix.
    pub fn kind(&self) -> &str {
        match self.slug.split_once(':') {
            Some((kind, _)) => kind,
            None => &self.slug,
        }
    }

    /// The address (`local` for the local host).
    pub fn address(&self) -> &str {
        match &self.target {
            Target::Local => LOCAL_SLUG,
            Target::Ssh(ssh) => &ssh.address,
        }
    }

    /// The host as the executor port describes it.
    pub fn info(&self) -> HostInfo {
        HostInfo {
            slug: self.slug.clone(),
            address: self.address().to_string(),
            tags: self.tags.clone(),
            host_keys: Vec::new(),
        }
    }

    /// The knowledge-graph entity this host seeds.
    pub fn entity(&self, now: Timestamp) -> Entity {
        let mut attributes = serde_json::Map::new();
        attributes.insert("address".into(), self.address().into());
        attributes.insert("tags".into(), self.tags.clone().into());
        attributes.insert("source".into(), "inventory".into());
        if self.proxmox {
            attributes.insert("proxmox".into(), true.into());
        }
        if let Target::Ssh(ssh) = &self.target {
            attributes.insert("port".into(), ssh.port.into());
            attributes.insert("user".into(), ssh.user.clone().into());
            if let Some(jump) = &ssh.jump {
                attributes.insert("jump".into(), jump.clone().into());
            }
        }
        Entity {
            slug: self.slug.clone(),
            kind: self.kind().to_string(),
            name: self.name.clone(),
            attributes: serde_json::Value::Object(attributes),
            updated_at: now,
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Target::Local => write!(f, "{} (local)", self.slug),
            Target::Ssh(ssh) => write!(
                f,
                "{} ({}@{}:{})",
                self.slug, ssh.user, ssh.address, ssh.port
            ),
        }
    }
}

fn build_host(
    entry: RawHost,
    defaults: &RawDefaults,
    default_port: u16,
) -> Result<Host, HostProblem> {
    let slug = entry.slug.ok_or(HostProblem::MissingSlug)?;
    check_slug(&slug)?;
    let name = entry.name.unwrap_or_else(|| match slug.split_once(':') {
        Some((_, name)) => name.to_string(),
        None => slug.clone(),
    });
    let shell = match &entry.shell {
        Some(name) => name.parse::<Shell>()?,
        None => Shell::default(),
    };
    let snapshot = match &entry.snapshot {
        Some(text) => text.parse::<SnapshotPolicy>()?,
        None => SnapshotPolicy::default(),
    };
    if slug == LOCAL_SLUG {
        let fields: [(&'static str, bool); 7] = [
            ("address", entry.address.is_some()),
            ("port", entry.port.is_some()),
            ("user", entry.user.is_some()),
            ("key_file", entry.key_file.is_some()),
            ("passphrase_file", entry.passphrase_file.is_some()),
            ("passphrase_env", entry.passphrase_env.is_some()),
            ("jump", entry.jump.is_some()),
        ];
        if let Some((field, _)) = fields.iter().find(|(_, present)| *present) {
            return Err(HostProblem::LocalTakesNoSsh { field });
        }
        return Ok(Host {
            slug,
            name,
            tags: entry.tags,
            proxmox: entry.proxmox,
            shell,
            snapshot,
            target: Target::Local,
        });
    }
    let address = entry
        .address
        .filter(|a| !a.trim().is_empty())
        .ok_or(HostProblem::MissingAddress)?;
    let port = match entry.port {
        Some(port) => check_port(port)?,
        None => default_port,
    };
    let user = entry
        .user
        .or_else(|| defaults.user.clone())
        .filter(|u| !u.is_empty())
        .ok_or(HostProblem::MissingUser)?;
    let key_file = entry.key_file.or_else(|| defaults.key_file.clone());
    let passphrase = passphrase(
        entry.passphrase_file,
        entry.passphrase_env,
        defaults,
        key_file.as_ref(),
    )?;
    Ok(Host {
        slug,
        name,
        tags: entry.tags,
        proxmox: entry.proxmox,
        shell,
        snapshot,
        target: Target::Ssh(SshTarget {
            address,
            port,
            user,
            key_file,
            passphrase,
            jump: entry.jump,
        }),
    })
}

fn resolve_relative(path: &mut PathBuf, base: &Path) {
    if path.is_relative() && !path.starts_with("~") {
        *path = base.join(&*path);
    }
}

/// The passphrase source of a host: its own fields if it sets either, else the
/// defaults'. Only meaningful with a key file.
fn passphrase(
    entry_file: Option<PathBuf>,
    entry_env: Option<String>,
    defaults: &RawDefaults,
    key_file: Option<&PathBuf>,
) -> Result<Option<Passphrase>, HostProblem> {
    let (file, env) = if entry_file.is_some() || entry_env.is_some() {
        (entry_file, entry_env)
    } else {
        (
            defaults.passphrase_file.clone(),
            defaults.passphrase_env.clone(),
        )
    };
    let source = match (file, env) {
        (Some(_), Some(_)) => return Err(HostProblem::TwoPassphrases),
        (Some(file), None) => Passphrase::File(file),
        (None, Some(name)) => {
            let plausible = !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !plausible {
                return Err(HostProblem::BadPassphraseEnv { name });
            }
            Passphrase::Env(name)
        }
        (None, None) => return Ok(None),
    };
    if key_file.is_none() {
        let field = match source {
            Passphrase::File(_) => "passphrase_file",
            Passphrase::Env(_) => "passphrase_env",
        };
        return Err(HostProblem::PassphraseWithoutKey { field });
    }
    Ok(Some(source))
}

fn check_port(port: i64) -> Result<u16, HostProblem> {
    match u16::try_from(port) {
        Ok(valid) if valid > 0 => Ok(valid),
        _ => Err(HostProblem::BadPort { port }),
    }
}

fn check_slug(slug: &str) -> Result<(), HostProblem> {
    if slug == LOCAL_SLUG {
        return Ok(());
    }
    let bad = |reason: &str| HostProblem::BadSlug {
        reason: reason.to_string(),
    };
    let Some((kind, name)) = slug.split_once(':') else {
        return Err(bad(
            "expected `local` or KIND:NAME, such as `lxc:nextcloud`",
        ));
    };
    if kind.is_empty()
        || !kind
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    {
        return Err(bad(
            "the kind before `:` must be lowercase letters, digits, `-` or `_`",
        ));
    }
    if name.is_empty() {
        return Err(bad("the name after `:` is empty"));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("the name contains whitespace or control characters"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLEET: &str = r#"
[defaults]
user = "root"
key_file = "/etc/nomos/id_ed25519"

[[host]]
slug = "local"
tags = ["control"]

[[host]]
slug = "host:hubris"
address = "10.0.0.2"
tags = ["proxmox"]

[[host]]
slug = "lxc:nextcloud"
address = "10.0.0.31"
port = 2222
user = "admin"
jump = "host:hubris"
"#;

    fn problem(text: &str) -> String {
        match Inventory::parse(text, "fleet.toml") {
            Ok(inventory) => panic!("expected an error, got {inventory:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn fleet_parses_with_defaults_applied() {
        let inventory = Inventory::parse(FLEET, "fleet.toml").unwrap();
        assert_eq!(inventory.slugs(), ["local", "host:hubris", "lxc:nextcloud"]);
        let Target::Ssh(hubris) = &inventory.host("host:hubris").unwrap().target else {
            panic!("hubris is an ssh host");
        };
        assert_eq!(hubris.port, 22);
        assert_eq!(hubris.user, "root");
        assert_eq!(
            hubris.key_file,
            Some(PathBuf::from("/etc/nomos/id_ed25519"))
        );
        let Target::Ssh(cloud) = &inventory.host("lxc:nextcloud").unwrap().target else {
            panic!("nextcloud is an ssh host");
        };
        assert_eq!(cloud.port, 2222);
        assert_eq!(cloud.user, "admin");
        assert_eq!(cloud.jump.as_deref(), Some("host:hubris"));
        assert_eq!(inventory.host("local").unwrap().target, Target::Local);
    }

    #[test]
    fn duplicate_slug_names_file_host_and_first_position() {
        let text = "[[host]]\nslug='local'\n[[host]]\nslug='local'\n";
        assert_eq!(
            problem(text),
            "fleet.toml: host `local`: duplicate slug (first defined as host #1)"
        );
    }

    #[test]
    fn missing_address_is_named() {
        let text = "[[host]]\nslug='vm:db'\nuser='u'\nkey_file='k'\n";
        assert_eq!(problem(text), "fleet.toml: host `vm:db`: missing address");
    }

    #[test]
    fn unknown_jump_host_is_named() {
        let text =
            "[[host]]\nslug='vm:db'\naddress='a'\nuser='u'\nkey_file='k'\njump='host:gone'\n";
        assert_eq!(
            problem(text),
            "fleet.toml: host `vm:db`: unknown jump host `host:gone`"
        );
    }

    #[test]
    fn jump_loop_is_refused() {
        let text = "[defaults]\nuser='u'\nkey_file='k'\n\
                    [[host]]\nslug='vm:a'\naddress='a'\njump='vm:b'\n\
                    [[host]]\nslug='vm:b'\naddress='b'\njump='vm:a'\n";
        assert_eq!(
            problem(text),
            "fleet.toml: host `vm:a`: bad jump host `vm:a`: jump hosts loop: vm:a -> vm:b -> vm:a"
        );
    }

    #[test]
    fn bad_ports_are_refused() {
        for port in ["0", "65536", "-1"] {
            let text = format!(
                "[[host]]\nslug='vm:db'\naddress='a'\nuser='u'\nkey_file='k'\nport={port}\n"
            );
            assert_eq!(
                problem(&text),
                format!("fleet.toml: host `vm:db`: bad port {port}: must be between 1 and 65535")
            );
        }
    }

    #[test]
    fn host_without_slug_is_named_by_position() {
        let text = "[[host]]\nslug='local'\n[[host]]\naddress='a'\n";
        assert_eq!(problem(text), "fleet.toml: host `#2`: missing slug");
    }

    #[test]
    fn slug_without_kind_is_refused() {
        let text = "[[host]]\nslug='nextcloud'\naddress='a'\n";
        assert!(problem(text).starts_with("fleet.toml: host `nextcloud`: bad slug: expected"));
    }

    #[test]
    fn local_host_with_an_address_is_refused() {
        let text = "[[host]]\nslug='local'\naddress='127.0.0.1'\n";
        assert_eq!(
            problem(text),
            "fleet.toml: host `local`: the local host takes no `address`"
        );
    }

    #[test]
    fn unknown_field_is_a_syntax_error_with_position() {
        let text = "[[host]]\nslug='local'\nadress='x'\n";
        let message = problem(text);
        assert!(
            message.starts_with("fleet.toml: invalid inventory:"),
            "{message}"
        );
        assert!(message.contains("adress"), "{message}");
        assert!(message.contains("line 3"), "{message}");
    }

    #[test]
    fn unknown_host_error_lists_known_slugs() {
        let inventory = Inventory::parse(FLEET, "fleet.toml").unwrap();
        let error = inventory.require("vm:nope").unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown host `vm:nope`; known hosts: local, host:hubris, lxc:nextcloud"
        );
    }

    #[test]
    fn entities_take_their_kind_from_the_slug_prefix() {
        let inventory = Inventory::parse(FLEET, "fleet.toml").unwrap();
        let now = Timestamp::from_millis(1_000);
        let entities = inventory.entities(now);
        let kinds: Vec<(&str, &str, &str)> = entities
            .iter()
            .map(|e| (e.slug.as_str(), e.kind.as_str(), e.name.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("local", "local", "local"),
                ("host:hubris", "host", "hubris"),
                ("lxc:nextcloud", "lxc", "nextcloud")
            ]
        );
        assert_eq!(entities[2].attributes["address"], "10.0.0.31");
        assert_eq!(entities[2].attributes["jump"], "host:hubris");
        assert_eq!(entities[1].attributes["tags"][0], "proxmox");
        assert!(entities.iter().all(|e| e.updated_at == now));
    }

    #[test]
    fn load_resolves_relative_key_files_against_the_inventory_directory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.toml");
        std::fs::write(
            &path,
            "[[host]]\nslug='vm:db'\naddress='a'\nuser='u'\nkey_file='keys/id'\n",
        )
        .unwrap();
        let inventory = Inventory::load(&path).unwrap();
        let Target::Ssh(db) = &inventory.host("vm:db").unwrap().target else {
            panic!("db is an ssh host");
        };
        assert_eq!(db.key_file, Some(dir.path().join("keys/id")));
    }

    #[test]
    fn a_passphrase_comes_from_a_file_or_an_environment_variable_never_both() {
        let text = "[defaults]\nuser='u'\nkey_file='/k/id'\npassphrase_env='KEY_PASS'\n\
                    [[host]]\nslug='vm:a'\naddress='a'\n\
                    [[host]]\nslug='vm:b'\naddress='b'\npassphrase_file='/k/pass'\n";
        let inventory = Inventory::parse(text, "fleet.toml").unwrap();
        let passphrase = |slug: &str| match &inventory.host(slug).unwrap().target {
            Target::Ssh(ssh) => ssh.passphrase.clone(),
            Target::Local => None,
        };
        assert_eq!(passphrase("vm:a"), Some(Passphrase::Env("KEY_PASS".into())));
        assert_eq!(
            passphrase("vm:b"),
            Some(Passphrase::File(PathBuf::from("/k/pass")))
        );
        let both = "[[host]]\nslug='vm:a'\naddress='a'\nuser='u'\nkey_file='k'\n\
                    passphrase_file='p'\npassphrase_env='P'\n";
        assert_eq!(
            problem(both),
            "fleet.toml: host `vm:a`: set passphrase_file or passphrase_env, not both"
        );
    }

    #[test]
    fn a_passphrase_without_a_key_file_or_with_a_bad_variable_name_is_refused() {
        let keyless = "[[host]]\nslug='vm:a'\naddress='a'\nuser='u'\npassphrase_env='P'\n";
        assert!(
            problem(keyless).starts_with(
                "fleet.toml: host `vm:a`: `passphrase_env` is set but there is no key_file"
            ),
            "{}",
            problem(keyless)
        );
        let secret = "[[host]]\nslug='vm:a'\naddress='a'\nuser='u'\nkey_file='k'\n\
                      passphrase_env='hunter 2'\n";
        assert!(
            problem(secret).starts_with("fleet.toml: host `vm:a`: bad passphrase_env `hunter 2`"),
            "{}",
            problem(secret)
        );
    }

    #[test]
    fn load_resolves_a_relative_passphrase_file_like_the_key_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.toml");
        std::fs::write(
            &path,
            "[[host]]\nslug='vm:db'\naddress='a'\nuser='u'\nkey_file='keys/id'\n\
             passphrase_file='keys/pass'\n",
        )
        .unwrap();
        let inventory = Inventory::load(&path).unwrap();
        let Target::Ssh(db) = &inventory.host("vm:db").unwrap().target else {
            panic!("db is an ssh host");
        };
        assert_eq!(
            db.passphrase,
            Some(Passphrase::File(dir.path().join("keys/pass")))
        );
    }

    #[test]
    fn the_example_inventory_parses_and_shows_every_field() {
        let text = include_str!("../../../fixtures/inventory.example.toml");
        let inventory = Inventory::parse(text, "inventory.example.toml").unwrap();
        assert_eq!(inventory.slugs(), ["local", "host:bastion", "vm:db"]);
        let fields = [
            "user",
            "port",
            "key_file",
            "passphrase_file",
            "passphrase_env",
            "slug",
            "name",
            "tags",
            "address",
            "jump",
            "proxmox",
            "shell",
            "snapshot",
        ];
        for field in fields {
            let shown = text.lines().any(|line| {
                line.trim_start_matches(['#', ' '])
                    .starts_with(&format!("{field} ="))
            });
            assert!(shown, "the example does not show `{field}`");
        }
    }

    // rule: SAFE-1
    #[test]
    fn snapshot_comes_from_the_host_or_a_tag_and_a_bad_value_is_named_with_its_file() {
        let text = "[defaults]\nuser='root'\n[[host]]\nslug='host:pve'\naddress='10.0.0.2'\n\
                    snapshot='before-change'\n[[host]]\nslug='vm:db'\naddress='10.0.0.3'\n\
                    tags=['prod']\n[[host]]\nslug='vm:web'\naddress='10.0.0.4'\n\
                    [tags.prod]\nsnapshot='before-change'\n";
        let inventory = Inventory::parse(text, "fleet.toml").unwrap();
        assert_eq!(
            inventory.snapshot_policy("host:pve"),
            SnapshotPolicy::BeforeChange
        );
        assert_eq!(
            inventory.snapshot_policy("vm:db"),
            SnapshotPolicy::BeforeChange
        );
        assert_eq!(inventory.snapshot_policy("vm:web"), SnapshotPolicy::Never);
        let bad_host = "[[host]]\nslug='host:pve'\naddress='a'\nuser='u'\nsnapshot='always'\n";
        let message = problem(bad_host);
        assert!(
            message.starts_with("fleet.toml: host `host:pve`: bad snapshot `always`"),
            "{message}"
        );
        let bad_tag = "[tags.prod]\nsnapshot='before_change'\n";
        let message = problem(bad_tag);
        assert!(
            message.starts_with("fleet.toml: tag `prod`: bad snapshot `before_change`"),
            "{message}"
        );
        let unknown = "[tags.prod]\nsnapshots='before-change'\n";
        assert!(problem(unknown).contains("snapshots"));
    }

    // rule: FLEET-3
    #[test]
    fn proxmox_marks_a_node_and_a_mistyped_flag_is_named_with_its_line() {
        let text = "[defaults]\nuser='root'\n[[host]]\nslug='host:pve'\naddress='10.0.0.2'\n\
                    proxmox=true\n[[host]]\nslug='host:nas'\naddress='10.0.0.3'\n";
        let inventory = Inventory::parse(text, "fleet.toml").unwrap();
        assert_eq!(inventory.proxmox_nodes(), ["host:pve"]);
        let entities = inventory.entities(Timestamp::from_millis(1));
        assert_eq!(entities[0].attributes["proxmox"], true);
        assert!(entities[1].attributes.get("proxmox").is_none());
        let mistyped = "[[host]]\nslug='host:pve'\naddress='a'\nuser='u'\nproxmox='yes'\n";
        let message = problem(mistyped);
        assert!(
            message.starts_with("fleet.toml: invalid inventory:"),
            "{message}"
        );
        assert!(message.contains("line 5"), "{message}");
        assert!(message.contains("proxmox"), "{message}");
    }

    #[test]
    fn missing_file_error_names_the_path() {
        let error = Inventory::load(Path::new("/nonexistent/fleet.toml")).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("could not read inventory /nonexistent/fleet.toml:"),
            "{error}"
        );
    }
}
