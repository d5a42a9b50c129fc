//! SAFE-3: the dead man's switch. Before a change that can cut the operator off
//! ([`crate::classify::cuts_off`]), the core hands the shell one arm script to run on the
//! change's host. It saves what the revert will need that no backup holds (the firewall's
//! rules, the main routing table), writes the revert to `<root>/<execution id>.sh` and
//! schedules it `window` seconds ahead, with the first of these the host has:
//! `systemd-run --on-active` (when systemd runs), `at` (when `atd` runs), else a detached
//! `nohup setsid sh -c 'sleep ...'` whose pid goes to `<root>/<id>.pid`. It prints one
//! line, `armed <mechanism> <handle> <window>`, read here ([`Armed::parse`]).
//!
//! The revert, when it fires, claims `<root>/<id>.claim` (a `mkdir`, so the revert and a
//! disarm can never both win), puts back SAFE-2's copies ([`crate::safety::restore_script`]),
//! then reloads what the change's cut-off kinds name, and logs each step to `<root>/<id>.log`
//! ([`RevertLog::parse`]):
//!
//! * sshd: `systemctl reload ssh || systemctl reload sshd || kill -HUP "$(cat /run/sshd.pid)"`;
//! * the firewall: the rules saved at arming, with `iptables-restore`, `ip6tables-restore`
//!   and `nft -f` (the saved ruleset starts with `flush ruleset`);
//! * routes: the main table saved at arming, flushed and restored with `ip route restore`;
//! * interfaces: `netplan apply` where netplan is, else a `try-restart` of `networking`,
//!   `systemd-networkd` and `NetworkManager` (their restored files are read again);
//! * DNS: a `try-restart` of `systemd-resolved` (a restored `resolv.conf` needs nothing more).
//!
//! A disarm ([`disarm_script`]) claims the same directory first: when it wins, it cancels the
//! scheduled job and prints `disarmed`; when the revert already claimed it, it prints
//! `fired` and exits 3.

use serde::{Deserialize, Serialize};

use crate::classify::CutOff;
use crate::classify::preview::quote_always;
use crate::id::ExecutionId;
use crate::safety::{BackupManifest, restore_script};
use crate::time::Span;

/// The reason prefix of an arm net's execution.
pub const ARM_REASON: &str = "SAFE-3: revert armed";

/// Whether cut-off changes are armed (SAFE-3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RevertMode {
    /// Every change that can cut the operator off (the default).
    BeforeCutOff,
    /// Never: for simulated hosts that answer only scripted commands (the golden evals).
    Off,
}

/// How the dead man's switch is configured (SAFE-3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RevertConfig {
    /// Whether it arms at all.
    pub mode: RevertMode,
    /// How long the operator has to Confirm (`[agent] revert_window`, 120 s).
    pub window: Span,
    /// The directory on each host holding the revert scripts, saved state and logs.
    pub root: String,
    /// What the new SSH connection runs after the change (`true`).
    pub check_command: String,
}

impl RevertConfig {
    /// 120 s, `/var/lib/nomos/revert`, check `true`.
    pub fn spec_defaults() -> RevertConfig {
        RevertConfig {
            mode: RevertMode::BeforeCutOff,
            window: Span::from_secs(120),
            root: "/var/lib/nomos/revert".to_owned(),
            check_command: "true".to_owned(),
        }
    }

    /// The window in whole seconds, at least 1.
    pub fn window_secs(&self) -> i64 {
        (self.window.as_millis() / 1000).max(1)
    }
}

/// How a revert was scheduled on the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    /// A transient systemd timer (`systemd-run --on-active`).
    Systemd,
    /// An `at` job.
    At,
    /// A detached `sleep` under `nohup setsid`.
    Nohup,
}

impl Mechanism {
    /// The spelling the arm script prints.
    pub fn as_str(&self) -> &'static str {
        match self {
            Mechanism::Systemd => "systemd",
            Mechanism::At => "at",
            Mechanism::Nohup => "nohup",
        }
    }

    fn parse(text: &str) -> Option<Mechanism> {
        [Mechanism::Systemd, Mechanism::At, Mechanism::Nohup]
            .into_iter()
            .find(|m| m.as_str() == text)
    }
}

/// What an arm script reported: how it scheduled the revert and the handle to disarm it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Armed {
    /// How.
    pub mechanism: Mechanism,
    /// The timer unit, the `at` job number or the pid.
    pub handle: String,
    /// Seconds from arming to the revert.
    pub window_secs: i64,
}

impl Armed {
    /// Reads the script's `armed` line; `None` when it printed none.
    pub fn parse(stdout: &str) -> Option<Armed> {
        stdout.lines().find_map(
            |line| match line.split('\t').collect::<Vec<_>>().as_slice() {
                ["armed", mechanism, handle, secs] => Some(Armed {
                    mechanism: Mechanism::parse(mechanism)?,
                    handle: (*handle).to_owned(),
                    window_secs: secs.parse().ok()?,
                }),
                _ => None,
            },
        )
    }
}

/// What a revert did, from its log.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevertLog {
    /// The files it put back.
    pub restored: Vec<String>,
    /// What it reloaded (`sshd`, `firewall`, `routes`, `interfaces`, `dns`).
    pub reloaded: Vec<String>,
    /// Steps that failed.
    pub failed: Vec<String>,
    /// Whether it ran to its end.
    pub done: bool,
}

impl RevertLog {
    /// Reads the log; lines it does not know (the tools' own output) are ignored.
    pub fn parse(log: &str) -> RevertLog {
        let mut parsed = RevertLog::default();
        for line in log.lines() {
            match line.split('\t').collect::<Vec<_>>().as_slice() {
                ["restored", path] => parsed.restored.push((*path).to_owned()),
                ["reloaded", what] => parsed.reloaded.push((*what).to_owned()),
                ["failed", what] => parsed.failed.push((*what).to_owned()),
                ["done"] => parsed.done = true,
                _ => {}
            }
        }
        parsed
    }

    /// One sentence for the execution's row.
    pub fn summary(&self) -> String {
        let list = |items: &[String]| {
            if items.is_empty() {
                "nothing".to_owned()
            } else {
                items.join(", ")
            }
        };
        let mut text = format!(
            "reverted by its dead man's switch: restored {}; reloaded {}",
            list(&self.restored),
            list(&self.reloaded)
        );
        if !self.failed.is_empty() {
            text.push_str(&format!("; failed: {}", self.failed.join(", ")));
        }
        if !self.done {
            text.push_str("; the revert did not reach its end");
        }
        text
    }
}

fn base(config: &RevertConfig, id: ExecutionId) -> String {
    format!("{}/{id}", config.root.trim_end_matches('/'))
}

/// Where the revert of `id` logs what it did.
pub fn log_path(config: &RevertConfig, id: ExecutionId) -> String {
    format!("{}.log", base(config, id))
}

/// A step of the revert, logged as `reloaded WHAT` or `failed WHAT`.
fn step(what: &str, body: &str) -> String {
    format!(
        "if {{ {body}; }}; then printf 'reloaded\\t{what}\\n'; else printf 'failed\\t{what}\\n'; fi"
    )
}

/// The revert the arm script schedules: claim, restore the copies, reload, log.
pub fn revert_script(
    config: &RevertConfig,
    id: ExecutionId,
    kinds: &[CutOff],
    manifest: &BackupManifest,
) -> String {
    let b = quote_always(&base(config, id));
    let mut lines = vec![
        format!("b={b}"),
        "mkdir \"$b.claim\" 2>/dev/null || exit 0".to_owned(),
        "exec >>\"$b.log\" 2>&1".to_owned(),
        "printf 'started\\t%s\\n' \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"".to_owned(),
    ];
    if !manifest.files.is_empty() {
        lines.push(format!(
            "( {} ) || printf 'failed\\trestore\\n'",
            restore_script(manifest)
        ));
    }
    for kind in kinds {
        lines.push(match kind {
            CutOff::Sshd => step(
                "sshd",
                "systemctl reload ssh || systemctl reload sshd || kill -HUP \"$(cat /run/sshd.pid)\"",
            ),
            CutOff::Firewall => step(
                "firewall",
                "r=0; if [ -f \"$b.iptables\" ]; then iptables-restore < \"$b.iptables\" || r=1; fi; \
if [ -f \"$b.ip6tables\" ]; then ip6tables-restore < \"$b.ip6tables\" || r=1; fi; \
if [ -f \"$b.nft\" ]; then nft -f \"$b.nft\" || r=1; fi; [ \"$r\" = 0 ]",
            ),
            CutOff::Routes => step(
                "routes",
                "[ -f \"$b.routes\" ] && ip route flush table main && ip route restore < \"$b.routes\"",
            ),
            CutOff::Interfaces => step(
                "interfaces",
                "if command -v netplan >/dev/null 2>&1 && [ -d /etc/netplan ]; then netplan apply; \
else systemctl try-restart networking systemd-networkd NetworkManager; fi",
            ),
            CutOff::Dns => step("dns", "systemctl try-restart systemd-resolved || :"),
        });
    }
    lines.push("printf 'done\\n'".to_owned());
    lines.join("\n") + "\n"
}

/// The arm script: save what the revert needs, write it, schedule it, print `armed ...`.
/// It exits non-zero (and prints why) when the revert cannot be scheduled.
pub fn arm_script(
    config: &RevertConfig,
    id: ExecutionId,
    kinds: &[CutOff],
    manifest: &BackupManifest,
) -> String {
    let r = quote_always(config.root.trim_end_matches('/'));
    let b = quote_always(&base(config, id));
    let w = config.window_secs();
    let unit = format!("nomos-revert-{id}");
    let mut script = format!("set -u; umask 077; r={r}; b={b}; mkdir -p \"$r\" || exit 1; ");
    if kinds.contains(&CutOff::Firewall) {
        script.push_str(
            "if command -v iptables-save >/dev/null 2>&1; then iptables-save > \"$b.iptables\" || exit 1; fi; \
if command -v ip6tables-save >/dev/null 2>&1; then ip6tables-save > \"$b.ip6tables\" || exit 1; fi; \
if command -v nft >/dev/null 2>&1; then { echo 'flush ruleset'; nft list ruleset; } > \"$b.nft\" || exit 1; fi; ",
        );
    }
    if kinds.contains(&CutOff::Routes) {
        script.push_str("ip route save table main > \"$b.routes\" || exit 1; ");
    }
    script.push_str(&format!(
        "printf '%s' {revert} > \"$b.sh\" || exit 1; \
if [ -d /run/systemd/system ] && command -v systemd-run >/dev/null 2>&1; then \
systemd-run --quiet --on-active={w}s --unit {unit} /bin/sh \"$b.sh\" >&2 || exit 1; \
printf 'armed\\tsystemd\\t%s\\t%s\\n' {timer} {w}; \
elif command -v at >/dev/null 2>&1 && pgrep -x atd >/dev/null 2>&1; then \
j=$(echo \"sleep {w}; /bin/sh $b.sh\" | at now 2>&1 | sed -n 's/^job \\([0-9]*\\) .*/\\1/p'); [ -n \"$j\" ] || exit 1; \
printf 'armed\\tat\\t%s\\t%s\\n' \"$j\" {w}; \
else nohup setsid /bin/sh -c \"sleep {w}; /bin/sh $b.sh\" </dev/null >/dev/null 2>&1 & p=$!; \
echo \"$p\" > \"$b.pid\" || exit 1; printf 'armed\\tnohup\\t%s\\t%s\\n' \"$p\" {w}; fi",
        revert = quote_always(&revert_script(config, id, kinds, manifest)),
        timer = quote_always(&format!("{unit}.timer")),
    ));
    script
}

/// The disarm script: claim the revert before it fires, then cancel its job; `fired` and
/// exit 3 when the revert claimed it first.
pub fn disarm_script(config: &RevertConfig, id: ExecutionId, armed: &Armed) -> String {
    let b = quote_always(&base(config, id));
    let handle = quote_always(&armed.handle);
    let cancel = match armed.mechanism {
        Mechanism::Systemd => format!("systemctl stop {handle} >/dev/null 2>&1 || :"),
        Mechanism::At => format!("atrm {handle} >/dev/null 2>&1 || :"),
        Mechanism::Nohup => format!("kill {handle} >/dev/null 2>&1 || :"),
    };
    format!(
        "b={b}; if mkdir \"$b.claim\" 2>/dev/null; then {cancel}; printf 'disarmed\\n'; \
else printf 'fired\\n'; exit 3; fi"
    )
}

/// Whether a disarm's output says the revert had already fired.
pub fn disarm_found_fired(stdout: &str) -> bool {
    stdout.lines().any(|l| l.trim() == "fired")
}

/// The read of a revert's log after the window (`cat`, which fails when there is none).
pub fn read_log_command(config: &RevertConfig, id: ExecutionId) -> String {
    format!("cat -- {}", quote_always(&log_path(config, id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{CommandClass, classify, cuts_off};

    fn id() -> ExecutionId {
        crate::id::SessionId::from(uuid::Uuid::nil()).execution_id(1)
    }

    // rule: SAFE-3
    #[test]
    fn the_armed_line_names_mechanism_handle_and_window() {
        let armed = Armed::parse("noise\narmed\tnohup\t4242\t5\n").unwrap();
        assert_eq!(armed.mechanism, Mechanism::Nohup);
        assert_eq!(armed.handle, "4242");
        assert_eq!(armed.window_secs, 5);
        assert_eq!(Armed::parse("armed\tcron\t1\t5\n"), None);
    }

    // rule: SAFE-3
    #[test]
    fn the_log_says_what_was_restored_and_reloaded() {
        let log = RevertLog::parse(
            "started\tx\nrestored\t/etc/ssh/sshd_config\nkill: noise\nreloaded\tsshd\ndone\n",
        );
        assert_eq!(log.restored, ["/etc/ssh/sshd_config"]);
        assert_eq!(log.reloaded, ["sshd"]);
        assert!(log.done);
        assert!(log.summary().contains("restored /etc/ssh/sshd_config"));
    }

    // rule: SAFE-3
    #[test]
    fn the_revert_claims_restores_and_reloads_what_the_kinds_name() {
        let config = RevertConfig::spec_defaults();
        let manifest =
            BackupManifest::parse("file\t/etc/ssh/sshd_config\t/b/x/1\t0\t0\t644\t12\tabc\n");
        let kinds = cuts_off("iptables -A INPUT -j DROP; sed -i s/a/b/ /etc/ssh/sshd_config");
        let script = revert_script(&config, id(), &kinds, &manifest);
        assert!(
            script.contains(".claim\" 2>/dev/null || exit 0"),
            "{script}"
        );
        assert!(
            script.contains("cat -- '/b/x/1' > '/etc/ssh/sshd_config'"),
            "{script}"
        );
        assert!(script.contains("kill -HUP"), "{script}");
        assert!(script.contains("iptables-restore"), "{script}");
        let arm = arm_script(&config, id(), &kinds, &manifest);
        assert!(arm.contains("iptables-save"), "{arm}");
        assert!(arm.contains("--on-active=120s"), "{arm}");
        assert!(arm.contains("nohup setsid"), "{arm}");
    }

    // rule: SAFE-3
    #[test]
    fn the_log_read_only_reads() {
        let config = RevertConfig::spec_defaults();
        assert_eq!(
            classify(&read_log_command(&config, id())).class,
            CommandClass::ReadOnly
        );
    }
}
