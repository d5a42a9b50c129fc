//! A throwaway OpenSSH `sshd` on loopback, with its own config, keys and known_hosts.
//!
//! [`Sshd::start`] generates an ed25519 host key and an ed25519 client key in a fresh
//! temporary directory, authorizes the client key, picks a free port, starts
//! `/usr/sbin/sshd` with `StrictModes no` and waits until the port accepts
//! connections. Like Debian's stock config it accepts `LANG` and `LC_*` from
//! clients, and it allows TCP forwarding (said explicitly: jump hosts need it). `Drop` stops the server and every process it started (its
//! per-connection children and their commands), then removes the directory.
//!
//! PID 1 on the test machines is not a normal init, so a killed daemon can linger as
//! a zombie: liveness is judged by the listening port, never by `kill -0`.
//!
//! [`Sshd::shared_or_start`] reuses a server started by `scripts/sshd-up.sh`
//! (`NOMOS_TEST_SSHD_PORT`, `NOMOS_TEST_SSHD_DIR`) for read-only tests; tests that
//! restart or reconfigure the server must call [`Sshd::start`].

use std::collections::BTreeSet;
use std::fs;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

use tempfile::TempDir;

const SSHD: &str = "/usr/sbin/sshd";

/// A running throwaway sshd.
#[derive(Debug)]
pub struct Sshd {
    /// The address it listens on (`127.0.0.1`, or the namespace's address).
    pub address: String,
    /// The port it listens on.
    pub port: u16,
    /// The directory holding its config, keys, pid file and log.
    pub dir: PathBuf,
    /// The private key of the authorized client (ed25519, no passphrase).
    pub client_key_path: PathBuf,
    /// A known_hosts file holding the server's host key under `[ADDRESS]:PORT`
    /// (`ADDRESS` alone for port 22).
    pub known_hosts_path: PathBuf,
    network: Network,
    ownership: Ownership,
}

/// Where the server listens.
#[derive(Debug, Clone)]
enum Network {
    /// 127.0.0.1 in this process's network namespace.
    Loopback,
    /// Its own network namespace, joined to this one by a veth pair.
    Namespace {
        /// The namespace's name (`ip netns`).
        name: String,
    },
}

/// Serialises namespace allocation within this process.
static NAMESPACES: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Every port [`free_port`] has handed out in this process.
static HANDED_OUT: std::sync::Mutex<BTreeSet<u16>> = std::sync::Mutex::new(BTreeSet::new());

/// How many ports a server that finds its port taken tries before giving up.
const PORT_ATTEMPTS: usize = 5;

#[derive(Debug)]
enum Ownership {
    /// Started by this process: stopped and removed on drop.
    Owned(#[allow(dead_code)] TempDir),
    /// Started by `scripts/sshd-up.sh`: left alone on drop.
    Shared,
}

impl Sshd {
    /// The environment that points a `nomos-server` at this sshd: an inventory written to
    /// `dir` with `local` and `host:loopback` (this server, logged in as root with the client
    /// key) and the known_hosts file that trusts it.
    pub fn server_env(&self, dir: &std::path::Path) -> Vec<(&'static str, String)> {
        let inventory = dir.join("inventory.toml");
        std::fs::write(
            &inventory,
            format!(
                "[[host]]\nslug = \"local\"\n\n[[host]]\nslug = \"host:loopback\"\naddress = \"127.0.0.1\"\nport = {}\nuser = \"root\"\nkey_file = \"{}\"\n",
                self.port,
                self.client_key_path.display()
            ),
        )
        .unwrap_or_else(|e| panic!("sshd: could not write {}: {e}", inventory.display()));
        vec![
            ("NOMOS_INVENTORY", inventory.display().to_string()),
            (
                "NOMOS_KNOWN_HOSTS",
                self.known_hosts_path.display().to_string(),
            ),
        ]
    }

    /// Starts a fresh server on a free port.
    ///
    /// # Panics
    /// When openssh-server cannot be installed, a key cannot be generated or the
    /// server does not come up; the message says which step failed.
    pub fn start() -> Sshd {
        Sshd::start_with_config("")
    }

    /// Starts a fresh server whose config gets `extra` appended (for example
    /// `MaxSessions 20`).
    ///
    /// # Panics
    /// As [`Sshd::start`].
    pub fn start_with_config(extra: &str) -> Sshd {
        Sshd::start_on(Network::Loopback, "127.0.0.1".into(), None, "", extra)
    }

    /// Starts a fresh server whose sessions also get `env` (`NAME=VALUE` words, as
    /// `SetEnv` takes them: the first `SetEnv` line is the only one sshd reads), on
    /// `port` when given. A test fleet gives each host its own `PATH` this way.
    ///
    /// # Panics
    /// As [`Sshd::start`].
    pub fn start_with_env(env: &str, port: Option<u16>) -> Sshd {
        Sshd::start_on(Network::Loopback, "127.0.0.1".into(), port, env, "")
    }

    /// Starts a server in a network namespace of its own, reachable from here at
    /// `10.231.N.2` port 22 through a veth pair (`10.231.N.1` on this side). Needs
    /// root and `ip netns`; the namespace is deleted on drop.
    ///
    /// # Panics
    /// As [`Sshd::start`], and when the namespace cannot be made.
    pub fn start_in_namespace() -> Sshd {
        let (name, index) = {
            let _guard = NAMESPACES.lock().unwrap_or_else(|e| e.into_inner());
            let listed = run_ok("ip", &["netns", "list"]);
            let taken: Vec<&str> = listed
                .lines()
                .filter_map(|line| line.split_whitespace().next())
                .collect();
            let Some(index) =
                (10u8..250).find(|i| !taken.contains(&format!("nomos-t{i}").as_str()))
            else {
                panic!("sshd: no free namespace index");
            };
            let name = format!("nomos-t{index}");
            run_ok("ip", &["netns", "add", &name]);
            (name, index)
        };
        let (host_if, ns_if) = (format!("vh-nt{index}"), format!("vn-nt{index}"));
        let near = format!("10.231.{index}.1/24");
        let far = format!("10.231.{index}.2/24");
        run_ok(
            "ip",
            &["netns", "exec", &name, "ip", "link", "set", "lo", "up"],
        );
        run_ok(
            "ip",
            &[
                "link", "add", &host_if, "type", "veth", "peer", "name", &ns_if, "netns", &name,
            ],
        );
        run_ok("ip", &["addr", "add", &near, "dev", &host_if]);
        run_ok("ip", &["link", "set", &host_if, "up"]);
        run_ok(
            "ip",
            &[
                "netns", "exec", &name, "ip", "addr", "add", &far, "dev", &ns_if,
            ],
        );
        run_ok(
            "ip",
            &["netns", "exec", &name, "ip", "link", "set", &ns_if, "up"],
        );
        Sshd::start_on(
            Network::Namespace { name },
            format!("10.231.{index}.2"),
            Some(22),
            "",
            "",
        )
    }

    /// Starts a server on `port`, or on a free port of its own (another one when a process
    /// outside this one took it first).
    fn start_on(
        network: Network,
        address: String,
        port: Option<u16>,
        env: &str,
        extra: &str,
    ) -> Sshd {
        let mut attempt = 1;
        loop {
            let sshd = Sshd::prepare(
                network.clone(),
                address.clone(),
                port.unwrap_or_else(free_port),
                env,
                extra,
            );
            match sshd.try_launch() {
                Ok(()) => return sshd,
                Err(taken) if port.is_none() && attempt < PORT_ATTEMPTS => {
                    eprintln!("sshd: {taken}; trying another port");
                    attempt += 1;
                }
                Err(taken) => panic!("sshd: {taken}"),
            }
        }
    }

    /// The server's directory, keys and config, not started.
    fn prepare(network: Network, address: String, port: u16, env: &str, extra: &str) -> Sshd {
        ensure_openssh_server();
        let tmp = tempfile::Builder::new()
            .prefix("nomos-sshd.")
            .tempdir()
            .unwrap_or_else(|e| panic!("sshd: could not create a temporary directory: {e}"));
        let dir = tmp.path().to_path_buf();
        keygen(&dir.join("host_ed25519"), "nomos-test-host");
        keygen(&dir.join("client_ed25519"), "nomos-test-client");
        copy(
            &dir.join("client_ed25519.pub"),
            &dir.join("authorized_keys"),
        );
        // Sessions get a home of their own, so the shell sshd starts does not run this
        // machine's login files (`~/.bashrc`): they are not what the tests are about, and
        // they can be slow or wait on locks a killed session left behind.
        std::fs::create_dir_all(dir.join("home"))
            .unwrap_or_else(|e| panic!("sshd: could not create the session home: {e}"));
        let config = format!(
            "Port {port}\n\
             ListenAddress {address}\n\
             HostKey {dir}/host_ed25519\n\
             PidFile {dir}/sshd.pid\n\
             AuthorizedKeysFile {dir}/authorized_keys\n\
             PubkeyAuthentication yes\n\
             PasswordAuthentication no\n\
             KbdInteractiveAuthentication no\n\
             PermitRootLogin prohibit-password\n\
             UsePAM no\n\
             StrictModes no\n\
             LogLevel VERBOSE\n\
             AcceptEnv LANG LC_*\n\
             AllowTcpForwarding yes\n\
             SetEnv HOME={dir}/home{env}\n\
             {extra}\n",
            dir = dir.display(),
            env = if env.is_empty() {
                String::new()
            } else {
                format!(" {env}")
            },
        );
        write(&dir.join("sshd_config"), &config);
        let sshd = Sshd {
            address,
            port,
            client_key_path: dir.join("client_ed25519"),
            known_hosts_path: dir.join("known_hosts"),
            dir,
            network,
            ownership: Ownership::Owned(tmp),
        };
        sshd.write_known_hosts();
        sshd
    }

    /// Reuses the server named by `NOMOS_TEST_SSHD_PORT` and `NOMOS_TEST_SSHD_DIR`
    /// when both are set (as `scripts/sshd-up.sh` exports them), else starts one.
    /// Use it only for tests that neither restart nor reconfigure the server.
    pub fn shared_or_start() -> Sshd {
        let port = std::env::var("NOMOS_TEST_SSHD_PORT").ok();
        let dir = std::env::var("NOMOS_TEST_SSHD_DIR").ok();
        let (Some(port), Some(dir)) = (port, dir) else {
            return Sshd::start();
        };
        let port: u16 = port
            .parse()
            .unwrap_or_else(|e| panic!("sshd: NOMOS_TEST_SSHD_PORT={port:?} is not a port: {e}"));
        let dir = PathBuf::from(dir);
        let sshd = Sshd {
            address: "127.0.0.1".into(),
            port,
            client_key_path: dir.join("client_ed25519"),
            known_hosts_path: dir.join("known_hosts"),
            dir,
            network: Network::Loopback,
            ownership: Ownership::Shared,
        };
        assert!(
            sshd.is_listening(),
            "sshd: NOMOS_TEST_SSHD_PORT={port} does not accept connections"
        );
        sshd
    }

    /// The host key's public half (OpenSSH one-line form).
    pub fn host_public_key_path(&self) -> PathBuf {
        self.dir.join("host_ed25519.pub")
    }

    /// The authorized_keys file the server reads.
    pub fn authorized_keys_path(&self) -> PathBuf {
        self.dir.join("authorized_keys")
    }

    /// The server's log (`-E`).
    pub fn log_path(&self) -> PathBuf {
        self.dir.join("sshd.log")
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        let ip: IpAddr = self
            .address
            .parse()
            .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
        SocketAddr::new(ip, self.port)
    }

    /// The host key's SHA256 fingerprint as OpenSSH prints it (`SHA256:...`).
    pub fn host_key_fingerprint(&self) -> String {
        fingerprint(&self.host_public_key_path())
    }

    /// How many public-key logins the server has accepted so far (from its log).
    pub fn accepted_logins(&self) -> usize {
        fs::read_to_string(self.log_path())
            .map(|log| log.matches("Accepted publickey").count())
            .unwrap_or(0)
    }

    /// Generates a new ed25519 key pair in the server's directory and returns the
    /// private key's path. The key is not authorized.
    pub fn generate_client_key(&self, name: &str) -> PathBuf {
        let path = self.dir.join(name);
        keygen(&path, name);
        path
    }

    /// Replaces the server's host key with a new one (the server is restarted; the
    /// known_hosts file is left as it was, so it now holds the old key).
    pub fn rotate_host_key(&mut self) {
        self.stop();
        let key = self.dir.join("host_ed25519");
        let _ = fs::remove_file(&key);
        let _ = fs::remove_file(self.dir.join("host_ed25519.pub"));
        keygen(&key, "nomos-test-host-rotated");
        self.launch();
    }

    /// Stops the server (and every connection it serves) and starts it again on the
    /// same port with the same config.
    pub fn restart(&mut self) {
        self.stop();
        self.launch();
    }

    /// Stops the server and every process it started; waits until the port is free.
    pub fn stop(&mut self) {
        let Some(pid) = self.pid() else {
            // Never started, or it could not listen: nothing of it holds the port.
            return;
        };
        kill_tree(pid);
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.is_listening() && Instant::now() < deadline {
            sleep(Duration::from_millis(20));
        }
        let _ = fs::remove_file(self.dir.join("sshd.pid"));
    }

    /// The listener's pid, from its pid file.
    pub fn pid(&self) -> Option<u32> {
        fs::read_to_string(self.dir.join("sshd.pid"))
            .ok()
            .and_then(|text| text.trim().parse().ok())
    }

    /// Whether a socket listens on the address and port (read from
    /// `/proc/net/tcp` of the server's namespace, so checking makes no connection
    /// for the server to serve).
    pub fn is_listening(&self) -> bool {
        let IpAddr::V4(ip) = self.addr().ip() else {
            return false;
        };
        let [a, b, c, d] = ip.octets();
        let wanted = format!("{d:02X}{c:02X}{b:02X}{a:02X}:{:04X}", self.port);
        let table = match &self.network {
            Network::Loopback => fs::read_to_string("/proc/net/tcp").unwrap_or_default(),
            Network::Namespace { name } => Command::new("ip")
                .args(["netns", "exec", name, "cat", "/proc/net/tcp"])
                .output()
                .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
                .unwrap_or_default(),
        };
        table.lines().skip(1).any(|line| {
            let mut fields = line.split_whitespace();
            let local = fields.nth(1);
            let state = fields.nth(1);
            local == Some(wanted.as_str()) && state == Some("0A")
        })
    }

    fn write_known_hosts(&self) {
        let public = fs::read_to_string(self.host_public_key_path())
            .unwrap_or_else(|e| panic!("sshd: could not read the host key: {e}"));
        let mut fields = public.split_whitespace();
        let (Some(algorithm), Some(key)) = (fields.next(), fields.next()) else {
            panic!("sshd: host public key is malformed: {public:?}");
        };
        let host = if self.port == 22 {
            self.address.clone()
        } else {
            format!("[{}]:{}", self.address, self.port)
        };
        write(
            &self.known_hosts_path,
            &format!("{host} {algorithm} {key}\n"),
        );
    }

    fn launch(&self) {
        if let Err(taken) = self.try_launch() {
            panic!("sshd: {taken}");
        }
    }

    /// Starts the server and waits until it listens; `Err` when another process holds
    /// its port (the daemon logs that it could bind no address and exits, and whatever
    /// holds the port would answer in its place).
    fn try_launch(&self) -> Result<(), PortTaken> {
        let config = self.dir.join("sshd_config");
        let _ = fs::create_dir_all("/run/sshd");
        let mut command = match &self.network {
            Network::Loopback => Command::new(SSHD),
            Network::Namespace { name } => {
                let mut command = Command::new("ip");
                command.args(["netns", "exec", name, SSHD]);
                command
            }
        };
        let output = command
            .arg("-f")
            .arg(&config)
            .arg("-E")
            .arg(self.log_path())
            .output()
            .unwrap_or_else(|e| panic!("sshd: could not run {SSHD}: {e}"));
        assert!(
            output.status.success(),
            "sshd: {SSHD} -f {} failed: {}",
            config.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        // The daemon writes its pid file once it listens: a port that is open without it
        // belongs to someone else.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !(self.pid().is_some() && self.is_listening()) {
            let log = fs::read_to_string(self.log_path()).unwrap_or_default();
            if log.contains("Cannot bind any address") {
                return Err(PortTaken {
                    port: self.port,
                    log,
                });
            }
            assert!(
                Instant::now() < deadline,
                "sshd: port {} did not open within 10 s; log: {log}",
                self.port,
            );
            sleep(Duration::from_millis(20));
        }
        Ok(())
    }
}

/// A server could not listen: another process holds its port.
#[derive(Debug)]
struct PortTaken {
    port: u16,
    log: String,
}

impl std::fmt::Display for PortTaken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "port {} is held by another process; log: {}",
            self.port,
            self.log.trim()
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        if matches!(self.ownership, Ownership::Owned(_)) {
            self.stop();
            if let Network::Namespace { name } = &self.network {
                // Deleting the namespace removes both ends of the veth pair.
                let _ = Command::new("ip").args(["netns", "del", name]).output();
            }
        }
    }
}

/// Pids of the live processes whose command line contains `needle` (reads `/proc`).
pub fn processes_matching(needle: &str) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(raw) = fs::read(format!("/proc/{pid}/cmdline")) else {
                return false;
            };
            let cmdline = String::from_utf8_lossy(&raw).replace('\0', " ");
            cmdline.contains(needle) && !is_zombie(*pid)
        })
        .collect()
}

fn is_zombie(pid: u32) -> bool {
    stat_fields(pid).is_some_and(|(state, _)| state == 'Z')
}

/// The state letter and parent pid of `pid`, from `/proc/PID/stat`.
fn stat_fields(pid: u32) -> Option<(char, u32)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: parse after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    Some((state, parent))
}

/// Kills `root` and all its descendants with SIGKILL.
fn kill_tree(root: u32) {
    let mut pids = vec![root];
    let mut index = 0;
    while index < pids.len() {
        let parent = pids[index];
        if let Ok(entries) = fs::read_dir("/proc") {
            for pid in entries.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok()) {
                if stat_fields(pid).is_some_and(|(_, ppid)| ppid == parent) && !pids.contains(&pid)
                {
                    pids.push(pid);
                }
            }
        }
        index += 1;
    }
    for pid in pids {
        let _ = Command::new("kill")
            .arg("-KILL")
            .arg(pid.to_string())
            .output();
    }
}

fn ensure_openssh_server() {
    if Path::new(SSHD).exists() {
        return;
    }
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "-q", "openssh-server"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
            .is_ok_and(|out| out.status.success())
    };
    if !install() {
        let _ = Command::new("apt-get").args(["update", "-q"]).output();
        assert!(
            install(),
            "sshd: {SSHD} is missing and `apt-get install openssh-server` failed"
        );
    }
}

/// Runs a setup command that must succeed; returns its stdout.
fn run_ok(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("sshd: could not run {program}: {e}"));
    assert!(
        output.status.success(),
        "sshd: `{program} {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn keygen(path: &Path, comment: &str) {
    let output = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f"])
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("sshd: could not run ssh-keygen: {e}"));
    assert!(
        output.status.success(),
        "sshd: ssh-keygen -f {} failed: {}",
        path.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The SHA256 fingerprint of a public key file, as `ssh-keygen -l` prints it.
pub fn fingerprint(public_key: &Path) -> String {
    let output = Command::new("ssh-keygen")
        .args(["-l", "-E", "sha256", "-f"])
        .arg(public_key)
        .output()
        .unwrap_or_else(|e| panic!("sshd: could not run ssh-keygen -l: {e}"));
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace()
        .nth(1)
        .unwrap_or_else(|| panic!("sshd: no fingerprint in {text:?}"))
        .to_string()
}

/// A port on 127.0.0.1 nothing listens on right now.
pub fn free_port() -> u16 {
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let listener = TcpListener::bind("127.0.0.1:0")
            .unwrap_or_else(|e| panic!("sshd: could not bind a free port: {e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("sshd: no local address: {e}"))
            .port();
        // The kernel may hand a released port out again; servers started in parallel
        // (a test fleet) must not be given the same one.
        if handed_out.insert(port) {
            return port;
        }
    }
}

fn copy(from: &Path, to: &Path) {
    fs::copy(from, to).unwrap_or_else(|e| {
        panic!(
            "sshd: could not copy {} to {}: {e}",
            from.display(),
            to.display()
        )
    });
}

fn write(path: &Path, text: &str) {
    fs::write(path, text)
        .unwrap_or_else(|e| panic!("sshd: could not write {}: {e}", path.display()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_are_never_handed_out_twice() {
        let ports: Vec<u16> = (0..500).map(|_| free_port()).collect();
        let distinct: BTreeSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len());
    }

    #[test]
    fn a_server_whose_port_another_holds_says_so_instead_of_passing_for_it() {
        let first = Sshd::start();
        let second = Sshd::prepare(Network::Loopback, "127.0.0.1".into(), first.port, "", "");
        let taken = second.try_launch().unwrap_err();
        assert_eq!(taken.port, first.port);
        assert!(
            taken.to_string().contains("held by another process"),
            "{taken}"
        );
        assert!(first.is_listening());
    }
}
