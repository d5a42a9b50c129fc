//! The changes that can cut the operator off from a host: sshd's configuration and
//! service, the firewall, interfaces, routes and DNS. A dead man's switch is meant to
//! guard such a change (SAFE-3); this module only says which changes they are.
//!
//! One table, [`CUT_OFF`], lists them: programs with the subcommands that change state
//! (`iptables` with any rule option, `nft` other than `list`, `ip route add`, ...), the
//! services whose restart or reload matters, and the files whose writes matter (read with
//! [`crate::write_targets`]). Every simple command is visited (lists, pipelines, compound
//! commands, `$(...)`), `sudo` in front looked through.

use serde::{Deserialize, Serialize};

use crate::ast::{Command, Compound, Expansion, List, Pipeline, Script, SimpleCommand, Word};
use crate::writes::write_targets;

/// What a change can cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutOff {
    /// sshd's configuration or service.
    Sshd,
    /// The packet filter (`iptables`, `nft`, `ufw`).
    Firewall,
    /// Network interfaces (`ip link`/`ip addr`, `ifdown`, `netplan`, `nmcli`, their files).
    Interfaces,
    /// Routes (`ip route`, `route`).
    Routes,
    /// Name resolution (`resolv.conf`, `resolvectl`, systemd-resolved).
    Dns,
}

/// How a row of [`CUT_OFF`] matches a simple command.
#[derive(Clone, Copy, Debug)]
pub enum Match {
    /// The program, whatever its arguments, except when its first operand is one of these
    /// read-only subcommands or options.
    Program(&'static str, &'static [&'static str]),
    /// The program with one of these subcommands as its first operand (after options).
    Subcommand(&'static str, &'static [&'static str]),
    /// `ip OBJECT VERB`: the object and the verbs that change state.
    Ip(&'static [&'static str], &'static [&'static str]),
    /// `systemctl VERB UNIT` (or `service UNIT VERB`) for these units.
    Service(&'static [&'static str]),
    /// A write to a file whose path starts with one of these.
    File(&'static [&'static str]),
}

/// The one table of changes that can cut the operator off.
pub const CUT_OFF: &[(CutOff, Match)] = &[
    (
        CutOff::Sshd,
        Match::File(&["/etc/ssh/sshd_config", "/etc/ssh/sshd_config.d/"]),
    ),
    (CutOff::Sshd, Match::Service(&["ssh", "sshd", "ssh.socket"])),
    (
        CutOff::Firewall,
        Match::Program("iptables", &["-L", "-S", "--list", "--list-rules", "-h"]),
    ),
    (
        CutOff::Firewall,
        Match::Program("ip6tables", &["-L", "-S", "--list", "--list-rules", "-h"]),
    ),
    (CutOff::Firewall, Match::Program("iptables-restore", &[])),
    (CutOff::Firewall, Match::Program("ip6tables-restore", &[])),
    (
        CutOff::Firewall,
        Match::Program("nft", &["list", "-h", "--help", "-v"]),
    ),
    (
        CutOff::Firewall,
        Match::Program("ufw", &["status", "show", "app", "version", "--version"]),
    ),
    (
        CutOff::Firewall,
        Match::File(&[
            "/etc/iptables/",
            "/etc/nftables.conf",
            "/etc/nftables.d/",
            "/etc/ufw/",
            "/etc/default/ufw",
        ]),
    ),
    (
        CutOff::Firewall,
        Match::Service(&["nftables", "netfilter-persistent", "ufw", "firewalld"]),
    ),
    (
        CutOff::Interfaces,
        Match::Ip(
            &["link", "l", "addr", "address", "a"],
            &["add", "del", "delete", "set", "change", "replace", "flush"],
        ),
    ),
    (CutOff::Interfaces, Match::Program("ifdown", &[])),
    (CutOff::Interfaces, Match::Program("ifup", &[])),
    (
        CutOff::Interfaces,
        Match::Subcommand("netplan", &["apply", "try", "set"]),
    ),
    (
        CutOff::Interfaces,
        Match::Program("nmcli", &["-t", "general", "g"]),
    ),
    (
        CutOff::Interfaces,
        Match::File(&[
            "/etc/network/interfaces",
            "/etc/netplan/",
            "/etc/systemd/network/",
            "/etc/NetworkManager/",
        ]),
    ),
    (
        CutOff::Interfaces,
        Match::Service(&["networking", "NetworkManager", "systemd-networkd"]),
    ),
    (
        CutOff::Routes,
        Match::Ip(
            &["route", "r", "ro", "rule"],
            &[
                "add", "del", "delete", "change", "replace", "flush", "append",
            ],
        ),
    ),
    (CutOff::Routes, Match::Subcommand("route", &["add", "del"])),
    (
        CutOff::Dns,
        Match::File(&["/etc/resolv.conf", "/etc/systemd/resolved.conf"]),
    ),
    (CutOff::Dns, Match::Service(&["systemd-resolved"])),
    (
        CutOff::Dns,
        Match::Subcommand("resolvectl", &["dns", "domain", "revert", "default-route"]),
    ),
];

/// What `command` can cut, each once, in the table's order of kinds. A command that does
/// not parse names nothing here (the gate already treats it as destructive).
pub fn cuts_off(command: &str) -> Vec<CutOff> {
    let mut found = Vec::new();
    let mut add = |what: CutOff| {
        if !found.contains(&what) {
            found.push(what);
        }
    };
    let written = write_targets(command);
    let mut simple = Vec::new();
    if let Ok(script) = Script::parse(command) {
        list(&script.body, &mut simple);
    }
    for (what, rule) in CUT_OFF {
        let hit = match rule {
            Match::File(prefixes) => written
                .named
                .iter()
                .any(|t| prefixes.iter().any(|p| t.path.starts_with(p))),
            _ => simple.iter().any(|words| matches(rule, words)),
        };
        if hit {
            add(*what);
        }
    }
    found.sort();
    found
}

fn matches(rule: &Match, words: &[String]) -> bool {
    let Some((program, args)) = words.split_first() else {
        return false;
    };
    let program = program.rsplit('/').next().unwrap_or(program);
    let first = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str);
    match rule {
        Match::Program(name, reads) => {
            // A program with no read-only form changes state however it is called; the
            // others only read when called bare or with a read-only first word.
            let reads_only = |a: &String| reads.contains(&a.as_str());
            program == *name
                && (reads.is_empty()
                    || (!args.is_empty()
                        && !args.first().is_some_and(reads_only)
                        && !first.is_some_and(|f| reads.contains(&f))))
        }
        Match::Subcommand(name, verbs) => {
            program == *name && first.is_some_and(|f| verbs.contains(&f))
        }
        Match::Ip(objects, verbs) => {
            let operands: Vec<&str> = args
                .iter()
                .filter(|a| !a.starts_with('-'))
                .map(String::as_str)
                .collect();
            program == "ip"
                && operands.first().is_some_and(|o| objects.contains(o))
                && operands.get(1).is_some_and(|v| verbs.contains(v))
        }
        Match::Service(units) => {
            let unit = |u: &str| {
                let u = u.strip_suffix(".service").unwrap_or(u);
                units.contains(&u)
            };
            let changes = |verb: &str| {
                matches!(
                    verb,
                    "restart"
                        | "reload"
                        | "stop"
                        | "start"
                        | "try-restart"
                        | "reload-or-restart"
                        | "disable"
                        | "mask"
                        | "kill"
                )
            };
            match program {
                "systemctl" => {
                    let operands: Vec<&str> = args
                        .iter()
                        .filter(|a| !a.starts_with('-'))
                        .map(String::as_str)
                        .collect();
                    operands.first().is_some_and(|v| changes(v))
                        && operands[1..].iter().any(|u| unit(u))
                }
                "service" => {
                    args.first().is_some_and(|u| unit(u)) && args.get(1).is_some_and(|v| changes(v))
                }
                _ => false,
            }
        }
        Match::File(_) => false,
    }
}

fn list(list_: &List, out: &mut Vec<Vec<String>>) {
    for item in &list_.items {
        pipeline(&item.and_or.first, out);
        for (_, next) in &item.and_or.rest {
            pipeline(next, out);
        }
    }
}

fn pipeline(pipeline: &Pipeline, out: &mut Vec<Vec<String>>) {
    for command in &pipeline.commands {
        match command {
            Command::Simple(simple) => simple_command(simple, out),
            Command::Compound(compound_, _) => compound(compound_, out),
            Command::FunctionDef(_) => {}
        }
    }
}

fn compound(compound_: &Compound, out: &mut Vec<Vec<String>>) {
    for body in compound_.lists() {
        list(body, out);
    }
}

fn simple_command(simple: &SimpleCommand, out: &mut Vec<Vec<String>>) {
    for word in simple.words.iter().chain(&simple.assignments) {
        for expansion in &word.expansions {
            match expansion {
                Expansion::Command(body) | Expansion::Process(body) => list(body, out),
                Expansion::Backtick(script) => list(&script.body, out),
                Expansion::Parameter | Expansion::Arithmetic => {}
            }
        }
    }
    let mut words: &[Word] = &simple.words;
    if words.first().and_then(Word::literal) == Some("sudo") {
        let skip = words[1..]
            .iter()
            .take_while(|w| w.text.starts_with('-'))
            .count();
        words = &words[1 + skip..];
    }
    // A word known only at run time is kept as its text: the program's name still counts.
    out.push(
        words
            .iter()
            .map(|w| w.literal().unwrap_or(&w.text).to_owned())
            .collect(),
    );
}

#[cfg(test)]
mod tests {
    use super::CutOff::*;
    use super::*;

    fn check(command: &str, expected: &[CutOff]) {
        assert_eq!(cuts_off(command), expected, "{command}");
    }

    #[test]
    fn sshd_config_and_service_can_cut_the_operator_off() {
        check(
            "sed -i 's/^#Port 22/Port 2222/' /etc/ssh/sshd_config",
            &[Sshd],
        );
        check(
            "echo 'AllowUsers ops' > /etc/ssh/sshd_config.d/10-nomos.conf && systemctl reload ssh",
            &[Sshd],
        );
        check("sudo systemctl restart sshd.service", &[Sshd]);
        check("service ssh restart", &[Sshd]);
        check("systemctl status ssh", &[]);
        check("cat /etc/ssh/sshd_config", &[]);
    }

    #[test]
    fn firewall_changes_are_marked_and_listings_are_not() {
        check("iptables -A INPUT -p tcp --dport 22 -j DROP", &[Firewall]);
        check("nft add rule inet filter input drop", &[Firewall]);
        check("ufw deny 22", &[Firewall]);
        check("iptables-restore < /etc/iptables/rules.v4", &[Firewall]);
        check("iptables -L -n", &[]);
        check("nft list ruleset", &[]);
        check("ufw status verbose", &[]);
    }

    #[test]
    fn interfaces_routes_and_dns_are_marked() {
        check("ip link set eth0 down", &[Interfaces]);
        check("ip addr add 10.0.0.9/24 dev eth0", &[Interfaces]);
        check("ip route replace default via 10.0.0.254", &[Routes]);
        check("route del default", &[Routes]);
        check("netplan apply", &[Interfaces]);
        check("nmcli connection down eth0", &[Interfaces]);
        check("ifdown eth0 && ifup eth0", &[Interfaces]);
        check("echo 'nameserver 10.0.0.1' > /etc/resolv.conf", &[Dns]);
        check("resolvectl dns eth0 10.0.0.1", &[Dns]);
        check("ip addr show", &[]);
        check("ip route get 1.1.1.1", &[]);
        check("netplan get", &[]);
    }

    #[test]
    fn a_change_elsewhere_is_not_marked_and_a_mix_names_each_kind_once() {
        check("systemctl restart nginx", &[]);
        check("sed -i s/a/b/ /etc/app.conf", &[]);
        check(
            "iptables -F; ip route flush table main; iptables -X",
            &[Firewall, Routes],
        );
        check("if true; then ufw enable; fi", &[Firewall]);
    }
}
