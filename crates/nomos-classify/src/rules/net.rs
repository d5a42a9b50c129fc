//! Networking: `ip`, `ss`, `ethtool`, firewalls (`iptables`, `nft`, `ufw`, `firewall-cmd`),
//! `curl`, `wget`, `nmcli`, `resolvectl`, `tc`, `tcpdump`, `wg`.

use super::super::opts::{Opt, Opts, Spec};
use super::super::walk::{Arg, Cx, Subject};
use super::paths;
use crate::class::CommandClass;

/// Handles network programs; `false` when `args[0]` is none of them.
pub(crate) fn run(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) -> bool {
    let program = args[0].text;
    match program {
        "ip" => ip(cx, args),
        "ss" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "fAFD",
                    long_values: &["family", "query", "socket", "filter", "diag"],
                },
            );
            if opts.either('K', "kill") || opts.either('D', "diag") {
                cx.mutation(program, "kills sockets or writes a dump");
            } else {
                cx.read_only(program, "only lists sockets");
            }
        }
        "ethtool" => {
            const READS: [&str; 13] = [
                "-i",
                "-S",
                "-k",
                "-g",
                "-a",
                "-c",
                "-l",
                "-m",
                "-P",
                "-T",
                "-d",
                "-e",
                "--version",
            ];
            match args.get(1).map(|arg| arg.text) {
                Some(flag)
                    if flag.starts_with('-')
                        && !READS.contains(&flag)
                        && !flag.starts_with("--show")
                        && !matches!(
                            flag,
                            "-h" | "--help"
                                | "--json"
                                | "--driver"
                                | "--statistics"
                                | "--module-info"
                        ) =>
                {
                    cx.mutation(program, "changes interface settings");
                }
                _ => cx.read_only(program, "only reads interface settings"),
            }
        }
        "iptables" | "ip6tables" | "iptables-legacy" | "ip6tables-legacy" | "iptables-nft"
        | "ip6tables-nft" | "ebtables" | "arptables" => iptables(cx, args),
        "iptables-save" | "ip6tables-save" | "nft-save" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "Mtf",
                    long_values: &["modprobe", "table", "file"],
                },
            );
            if opts.either('f', "file") {
                cx.mutation(program, "writes the rules to a file");
            } else {
                cx.read_only(program, "only prints the rules");
            }
        }
        "iptables-restore" | "ip6tables-restore" | "ipset" | "conntrack" => {
            cx.mutation(program, "changes firewall state")
        }
        "nft" => nft(cx, args),
        "ufw" => match args.get(1).map(|arg| arg.text) {
            Some("status" | "show" | "version" | "--version" | "help") | None => {
                cx.read_only(program, "only reads")
            }
            Some(_) => cx.mutation(program, "changes the firewall"),
        },
        "firewall-cmd" => {
            let reads = args[1..].iter().all(|arg| {
                [
                    "--list-",
                    "--get-",
                    "--query-",
                    "--info-",
                    "--zone",
                    "--permanent",
                    "--state",
                    "--version",
                    "--help",
                ]
                .iter()
                .any(|prefix| arg.text.starts_with(prefix))
            });
            if reads {
                cx.read_only(program, "only reads the firewall");
            } else {
                cx.mutation(program, "changes the firewall");
            }
        }
        "curl" => curl(cx, args),
        "wget" => wget(cx, args),
        "tc" | "bridge" | "brctl" => {
            let positionals: Vec<&str> = args[1..]
                .iter()
                .filter(|arg| !arg.text.starts_with('-'))
                .map(|arg| arg.text)
                .collect();
            let reads =
                positionals.len() <= 1 || matches!(positionals[1], "show" | "list" | "ls" | "s");
            if reads {
                cx.read_only(program, "only reads");
            } else {
                cx.mutation(program, "changes network settings");
            }
        }
        "wg" => match args.get(1).map(|arg| arg.text) {
            None
            | Some("show" | "showconf" | "genkey" | "genpsk" | "pubkey" | "--help" | "--version") => {
                cx.read_only(program, "only reads")
            }
            Some(_) => cx.mutation(program, "changes a WireGuard interface"),
        },
        "wg-quick" | "ifup" | "ifdown" | "ifconfig-set" | "dhclient" | "netplan" | "ifreload" => {
            if program == "netplan"
                && args
                    .get(1)
                    .is_some_and(|arg| matches!(arg.text, "get" | "status" | "info"))
            {
                cx.read_only(program, "only reads");
            } else {
                cx.mutation(program, "changes network interfaces");
            }
        }
        "ifconfig" => {
            if args.len() <= 2 || args[1].text == "-a" && args.len() == 2 {
                cx.read_only(program, "only lists interfaces");
            } else {
                cx.mutation(program, "changes an interface");
            }
        }
        "tcpdump" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "iwrcsCGWEFMTVyBjz",
                    long_values: &["interface"],
                },
            );
            if opts.short('w') || opts.short('z') {
                cx.mutation(program, "writes a capture file");
            } else {
                cx.read_only(program, "only prints packets");
            }
        }
        "route" => {
            let changes = ["add", "del", "delete", "flush", "change"];
            if args[1..].iter().any(|arg| changes.contains(&arg.text)) {
                cx.mutation(program, "changes the routing table");
            } else {
                cx.read_only(program, "only shows routes");
            }
        }
        "arp" => {
            let spec = Spec {
                short_values: "iHAt",
                long_values: &["device", "hw-type"],
            };
            let opts = Opts::parse(&args[1..], &spec);
            if opts.either('s', "set") || opts.either('d', "delete") || opts.either('f', "file") {
                cx.mutation(program, "changes the ARP table");
            } else {
                cx.read_only(program, "only shows the ARP table");
            }
        }
        "iwconfig" => {
            if args.len() <= 2 {
                cx.read_only(program, "only shows wireless settings");
            } else {
                cx.mutation(program, "changes wireless settings");
            }
        }
        "nmap" => {
            let writes = args[1..].iter().any(|arg| {
                ["-o", "--resume", "--append-output"]
                    .iter()
                    .any(|flag| arg.text.starts_with(flag))
            });
            if writes {
                cx.mutation(program, "writes scan results to a file");
            } else {
                cx.read_only(program, "only scans and prints");
            }
        }
        _ => return false,
    }
    true
}

/// `ip [opts] OBJECT [VERB ...]`: shows unless the verb adds, deletes, sets or flushes.
fn ip(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    // iproute2 options are whole words (`-br` is `-brief`, `-b` is `-batch`).
    let mut idx = 1;
    while let Some(arg) = args.get(idx).filter(|arg| arg.text.starts_with('-')) {
        let name = arg.text.trim_start_matches('-');
        if name == "b" || name.starts_with("bat") {
            cx.mutation(program, "runs commands from a batch file");
            return;
        }
        idx += if matches!(
            name,
            "f" | "family" | "n" | "netns" | "rc" | "rcvbuf" | "l" | "loops"
        ) {
            2
        } else {
            1
        };
    }
    let at = idx - 1;
    let object = args.get(at + 1).map(|arg| arg.text);
    let verb = args.get(at + 2).map(|arg| arg.text);
    // iproute2 matches objects and verbs by prefix: `ip net e NAME cmd` is `ip netns exec`.
    let prefix = |word: Option<&str>, full: &str, least: usize| {
        word.is_some_and(|word| word.len() >= least && full.starts_with(word))
    };
    let netns = prefix(object, "netns", 3);
    if (netns || prefix(object, "vrf", 1)) && prefix(verb, "exec", 1) {
        // CLASSIFY-8: the command runs with the namespace's own `/etc/netns` files mounted
        // over the host's (or bound to a VRF); never `read_only`, and the command itself is
        // classified too. `ip -all netns exec cmd` names no namespace.
        let all = args[1..idx]
            .iter()
            .any(|arg| matches!(arg.text.trim_start_matches('-'), "a" | "all"));
        let (what, place) = if netns {
            ("netns exec", "runs a program in another network namespace")
        } else {
            ("vrf exec", "runs a program bound to another routing table")
        };
        cx.report(
            CommandClass::ConfigMutation,
            Subject::Command(program, what),
            place,
        );
        let start = if netns && all { at + 3 } else { at + 4 };
        if args.len() > start {
            cx.run(&args[start..]);
        }
        return;
    }
    let Some(object) = object else {
        cx.read_only(program, "prints its usage");
        return;
    };
    match verb {
        None
        | Some("show" | "list" | "ls" | "lst" | "sh" | "s" | "l" | "get" | "help" | "monitor") => {
            cx.report(
                CommandClass::ReadOnly,
                Subject::Command(program, object),
                "only shows",
            );
        }
        Some(verb) if verb.starts_with('-') || verb == "dev" || verb == "to" || verb == "table" => {
            cx.report(
                CommandClass::ReadOnly,
                Subject::Command(program, object),
                "only shows",
            );
        }
        Some(verb) => {
            let predicate = format!("changes the network configuration (`{verb}`)");
            cx.report(
                CommandClass::ConfigMutation,
                Subject::Command(program, object),
                &predicate,
            );
        }
    }
}

fn iptables(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "t",
        long_values: &["table"],
    };
    let opts = Opts::parse(&args[1..], &spec);
    let lists = opts.either('L', "list")
        || opts.either('S', "list-rules")
        || opts.either('C', "check")
        || opts.long("version")
        || opts.either('h', "help");
    let changes = ['A', 'I', 'D', 'R', 'N', 'X', 'P', 'E', 'F', 'Z']
        .iter()
        .any(|flag| opts.short(*flag))
        || [
            "append",
            "insert",
            "delete",
            "replace",
            "new-chain",
            "delete-chain",
            "policy",
            "rename-chain",
            "flush",
            "zero",
        ]
        .iter()
        .any(|flag| opts.long(flag));
    if lists && !changes {
        cx.read_only(program, "only lists rules");
    } else {
        cx.mutation(program, "changes firewall rules");
    }
}

fn nft(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "fIT",
        long_values: &["file", "includepath"],
    };
    let opts = Opts::parse(&args[1..], &spec);
    if opts.either('c', "check") {
        cx.read_only(program, "only checks the rules (-c)");
        return;
    }
    if opts.either('f', "file") {
        cx.mutation(program, "loads rules from a file");
        return;
    }
    match opts.first_positional() {
        None | Some("list" | "describe" | "monitor" | "-v" | "help") => {
            cx.read_only(program, "only lists rules")
        }
        Some(verb) => cx.report(
            CommandClass::ConfigMutation,
            Subject::Command(program, verb),
            "changes firewall rules",
        ),
    }
}

/// `curl`: a GET to stdout only reads; writing files, uploading or another method changes state.
fn curl(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "oDcKTdFXHuAerwmUEbCYyztPQx",
        long_values: &[
            "output",
            "dump-header",
            "cookie-jar",
            "config",
            "upload-file",
            "data",
            "data-raw",
            "data-binary",
            "data-urlencode",
            "form",
            "form-string",
            "request",
            "header",
            "user",
            "user-agent",
            "referer",
            "write-out",
            "max-time",
            "proxy",
            "cert",
            "key",
            "cacert",
            "cookie",
            "range",
            "trace",
            "trace-ascii",
            "libcurl",
            "etag-save",
            "hsts",
            "alt-svc",
            "stderr",
            "json",
            "connect-timeout",
            "retry",
            "resolve",
            "output-dir",
            "url",
            "variable",
            "aws-sigv4",
            "netrc-file",
        ],
    };
    let opts = Opts::parse(&args[1..], &spec);
    for item in &opts.items {
        let (class, predicate) = match item {
            Opt::Short('o', Some(file)) | Opt::Long("output", Some(file)) => {
                match paths::write_target(Arg::literal(file)) {
                    (CommandClass::ReadOnly, _) => continue,
                    found => found,
                }
            }
            Opt::Short('O', _) | Opt::Long("remote-name" | "remote-name-all" | "output-dir", _) => {
                (CommandClass::ConfigMutation, "downloads to a file")
            }
            Opt::Short('D' | 'c', Some(file))
            | Opt::Long(
                "dump-header" | "cookie-jar" | "trace" | "trace-ascii" | "libcurl" | "etag-save"
                | "stderr" | "hsts" | "alt-svc",
                Some(file),
            ) => {
                if *file == "-" || paths::is_harmless_sink(file) {
                    continue;
                }
                (CommandClass::ConfigMutation, "writes a file")
            }
            Opt::Short('K', _) | Opt::Long("config", _) => (
                CommandClass::ConfigMutation,
                "reads options from a file the classifier cannot see",
            ),
            Opt::Short('T' | 'd' | 'F', _)
            | Opt::Long(
                "upload-file" | "data" | "data-raw" | "data-binary" | "data-urlencode" | "form"
                | "form-string" | "json" | "post301" | "post302",
                _,
            ) => (CommandClass::ConfigMutation, "sends data (POST or upload)"),
            Opt::Short('X', Some(method)) | Opt::Long("request", Some(method)) => {
                if matches!(
                    method.to_ascii_uppercase().as_str(),
                    "GET" | "HEAD" | "OPTIONS"
                ) {
                    continue;
                }
                (
                    CommandClass::ConfigMutation,
                    "sends a request that changes state (-X)",
                )
            }
            _ => continue,
        };
        cx.report(class, Subject::Word(program), predicate);
        return;
    }
    cx.read_only(program, "only fetches to its output");
}

/// `wget`: downloads to a file unless told to write to its output (`-O -`) or only check.
fn wget(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "OoaPeUTtwiQlAR",
        long_values: &[
            "output-document",
            "output-file",
            "append-output",
            "directory-prefix",
            "execute",
            "user-agent",
            "timeout",
            "tries",
            "wait",
            "input-file",
            "quota",
            "level",
            "accept",
            "reject",
            "post-data",
            "post-file",
            "method",
            "body-data",
            "body-file",
            "header",
            "user",
            "password",
        ],
    };
    let opts = Opts::parse(&args[1..], &spec);
    if opts.long("post-data")
        || opts.long("post-file")
        || opts.long("body-data")
        || opts.long("body-file")
        || opts
            .long_value("method")
            .is_some_and(|method| !method.eq_ignore_ascii_case("GET"))
    {
        cx.mutation(program, "sends data");
        return;
    }
    if opts.either('o', "output-file") || opts.either('a', "append-output") {
        cx.mutation(program, "writes a log file");
        return;
    }
    // Every `-O` counts: wget writes to each one it is given (`-qO- -O 1` writes `1`).
    let targets: Vec<&str> = opts
        .items
        .iter()
        .filter_map(|item| match item {
            Opt::Short('O', value) | Opt::Long("output-document", value) => *value,
            _ => None,
        })
        .collect();
    let to_stdout = !targets.is_empty()
        && targets
            .iter()
            .all(|target| *target == "-" || paths::is_harmless_sink(target));
    if to_stdout || opts.long("spider") {
        cx.read_only(program, "only fetches to its output");
    } else {
        cx.mutation(program, "downloads to a file");
    }
}
