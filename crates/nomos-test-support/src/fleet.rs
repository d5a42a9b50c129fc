//! A fleet of real test hosts: one throwaway sshd per host on its own loopback port,
//! each with its own `PATH` directory for programs the test puts there, one client key
//! authorized on all of them and one known_hosts file for the lot.
//!
//! A host can be down (a port nothing listens on) or present a host key other than the
//! one known_hosts holds for it. [`TestFleet::inventory_toml`] writes the inventory the
//! SSH executor reads.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::sshd::{Sshd, free_port};

/// How a test host behaves at the SSH level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// An sshd that answers with the key known_hosts holds.
    Up,
    /// Nothing listens on its port.
    Down,
    /// An sshd whose host key is not the one known_hosts holds for it.
    WrongHostKey,
}

/// One host to start.
#[derive(Clone, Debug)]
pub struct HostSpec {
    /// Inventory slug (`lxc:web01`).
    pub slug: String,
    /// Inventory tags.
    pub tags: Vec<String>,
    /// How it is reached.
    pub reach: Reach,
    /// Programs put first on its `PATH`: `(name, /bin/sh script body)`.
    pub programs: Vec<(String, String)>,
    /// Extra inventory lines for the host (`proxmox = true`).
    pub inventory_extra: String,
}

impl HostSpec {
    /// A reachable host with these tags and no programs of its own.
    pub fn up(slug: &str, tags: &[&str]) -> HostSpec {
        HostSpec {
            slug: slug.to_owned(),
            tags: tags.iter().map(|t| (*t).to_owned()).collect(),
            reach: Reach::Up,
            programs: Vec::new(),
            inventory_extra: String::new(),
        }
    }

    /// The same host, reached as `reach`.
    pub fn reach(mut self, reach: Reach) -> HostSpec {
        self.reach = reach;
        self
    }

    /// The same host with a program `name` (a `/bin/sh` script) first on its `PATH`.
    pub fn program(mut self, name: &str, script: &str) -> HostSpec {
        self.programs.push((name.to_owned(), script.to_owned()));
        self
    }

    /// The same host with extra inventory lines.
    pub fn inventory(mut self, lines: &str) -> HostSpec {
        self.inventory_extra = lines.to_owned();
        self
    }
}

/// One started host.
#[derive(Debug)]
pub struct FleetHost {
    /// Inventory slug.
    pub slug: String,
    /// Its loopback port.
    pub port: u16,
    /// Its spec.
    pub spec: HostSpec,
    /// The directory first on its `PATH`.
    pub bin: PathBuf,
    sshd: Option<Sshd>,
}

/// Several real hosts; dropping it stops every sshd.
#[derive(Debug)]
pub struct TestFleet {
    /// The hosts, in the order given.
    pub hosts: Vec<FleetHost>,
    /// A known_hosts file for every host (the wrong key for a `WrongHostKey` host).
    pub known_hosts_path: PathBuf,
    /// The client key authorized on every host.
    pub client_key_path: PathBuf,
    dir: TempDir,
}

impl TestFleet {
    /// Starts every host (in parallel), authorizes one client key on all of them and
    /// writes the known_hosts file.
    ///
    /// # Panics
    /// When a server does not come up, or a file cannot be written.
    pub fn start(specs: Vec<HostSpec>) -> TestFleet {
        let dir = tempfile::Builder::new()
            .prefix("nomos-fleet.")
            .tempdir()
            .unwrap_or_else(|e| panic!("fleet: could not create a temporary directory: {e}"));
        let mut prepared = Vec::with_capacity(specs.len());
        for (i, spec) in specs.into_iter().enumerate() {
            let bin = dir.path().join(format!("host{i:03}")).join("bin");
            fs::create_dir_all(&bin)
                .unwrap_or_else(|e| panic!("fleet: could not create {}: {e}", bin.display()));
            for (name, script) in &spec.programs {
                let path = bin.join(name);
                fs::write(&path, format!("#!/bin/sh\n{script}\n"))
                    .unwrap_or_else(|e| panic!("fleet: could not write {}: {e}", path.display()));
                fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
                    .unwrap_or_else(|e| panic!("fleet: could not chmod {}: {e}", path.display()));
            }
            prepared.push((spec, bin));
        }
        let started: Vec<(HostSpec, PathBuf, u16, Option<Sshd>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = prepared
                .into_iter()
                .map(|(spec, bin)| {
                    scope.spawn(move || {
                        if spec.reach == Reach::Down {
                            return (spec, bin, free_port(), None);
                        }
                        let env = format!(
                            "PATH={}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                            bin.display()
                        );
                        let sshd = Sshd::start_with_env(&env, None);
                        let port = sshd.port;
                        (spec, bin, port, Some(sshd))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| panic!("fleet: a host did not start"))
                })
                .collect()
        });
        let client = started
            .iter()
            .find_map(|(_, _, _, sshd)| sshd.as_ref())
            .unwrap_or_else(|| panic!("fleet: at least one host must be up"));
        let client_key_path = dir.path().join("client_ed25519");
        fs::copy(&client.client_key_path, &client_key_path)
            .unwrap_or_else(|e| panic!("fleet: could not copy the client key: {e}"));
        let public = fs::read_to_string(client.client_key_path.with_extension("pub"))
            .unwrap_or_else(|e| panic!("fleet: could not read the client key: {e}"));
        let mut known_hosts = String::new();
        let keys: Vec<String> = started
            .iter()
            .filter_map(|(_, _, _, sshd)| sshd.as_ref())
            .map(|s| host_key(&s.host_public_key_path()))
            .collect();
        let mut hosts = Vec::with_capacity(started.len());
        for (spec, bin, port, sshd) in started {
            if let Some(sshd) = &sshd {
                fs::write(sshd.authorized_keys_path(), &public)
                    .unwrap_or_else(|e| panic!("fleet: could not authorize the client key: {e}"));
                let own = host_key(&sshd.host_public_key_path());
                let key = match spec.reach {
                    // Another host's key: the server presents one known_hosts does not hold.
                    Reach::WrongHostKey => keys
                        .iter()
                        .find(|k| **k != own)
                        .cloned()
                        .unwrap_or_else(|| panic!("fleet: a wrong host key needs two hosts up")),
                    _ => own,
                };
                known_hosts.push_str(&format!("[127.0.0.1]:{port} {key}\n"));
            }
            hosts.push(FleetHost {
                slug: spec.slug.clone(),
                port,
                spec,
                bin,
                sshd,
            });
        }
        let known_hosts_path = dir.path().join("known_hosts");
        fs::write(&known_hosts_path, known_hosts)
            .unwrap_or_else(|e| panic!("fleet: could not write known_hosts: {e}"));
        TestFleet {
            hosts,
            known_hosts_path,
            client_key_path,
            dir,
        }
    }

    /// The inventory (TOML) of every host, logging in as root with the fleet's key.
    pub fn inventory_toml(&self) -> String {
        let mut text = format!(
            "[defaults]\nuser = \"root\"\nkey_file = \"{}\"\n",
            self.client_key_path.display()
        );
        for host in &self.hosts {
            let tags: Vec<String> = host.spec.tags.iter().map(|t| format!("{t:?}")).collect();
            text.push_str(&format!(
                "\n[[host]]\nslug = \"{}\"\naddress = \"127.0.0.1\"\nport = {}\ntags = [{}]\n{}\n",
                host.slug,
                host.port,
                tags.join(", "),
                host.spec.inventory_extra
            ));
        }
        text
    }

    /// The fleet's scratch directory (removed on drop).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The host with this slug.
    ///
    /// # Panics
    /// When no host has it.
    pub fn host(&self, slug: &str) -> &FleetHost {
        self.hosts
            .iter()
            .find(|h| h.slug == slug)
            .unwrap_or_else(|| panic!("fleet: no host {slug}"))
    }
}

impl FleetHost {
    /// Whether its sshd is running.
    pub fn is_up(&self) -> bool {
        self.sshd.is_some()
    }
}

/// `ALGORITHM KEY` of a public key file.
fn host_key(path: &Path) -> String {
    let text = fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("fleet: could not read {}: {e}", path.display()));
    text.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}
