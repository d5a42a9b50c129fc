//! SAFE-1: Proxmox snapshots before a change, their pruning and the Rollback.
//!
//! A host (or one of its tags) that asks for `snapshot = "before-change"` and is a Proxmox
//! guest gets `pct snapshot VMID nomos-<short execution id>` (`qm snapshot` for a VM), run
//! on its node, before the first approved change of a plan generation, and before every
//! approved change made outside a plan ([`snapshot_due`]). The script also lists the
//! guest's snapshots, so the core can decide from that listing which older Nomos snapshots
//! go ([`snapshots_to_prune`]): only names with the `nomos-` prefix, never another's, the
//! newest `keep` of them kept. Rollback runs `pct rollback VMID NAME` once approved, its
//! preview being `pct listsnapshot VMID`.
//!
//! Everything here is pure: the shell hands in what it knows of the host
//! ([`HostSafety`]), and runs what it is handed.

use std::str::FromStr;

use crate::classify::preview::{PreviewForm, PreviewParser};
use crate::id::ExecutionId;
use crate::proxmox::GuestKind;
use crate::record::{Execution, ExecutionKind};
use crate::status::{CommandClass, ExecutionStatus};

/// The prefix of every snapshot Nomos takes; pruning never touches another name.
pub const SNAPSHOT_PREFIX: &str = "nomos-";

/// The reason prefix of a snapshot net's execution.
pub const SNAPSHOT_REASON: &str = "SAFE-1: snapshot";

/// The reason prefix of a prune net's execution.
pub const PRUNE_REASON: &str = "SAFE-1: prune";

/// Whether a host's changes are preceded by a snapshot (`snapshot = ...` in the inventory).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SnapshotPolicy {
    /// No snapshot (the default).
    #[default]
    Never,
    /// `before-change`: a snapshot before the first approved change of a plan generation
    /// or before a lone approved change.
    BeforeChange,
}

/// A `snapshot` value that is not one Nomos knows.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad snapshot `{0}`: expected \"before-change\" or \"never\"")]
pub struct UnknownSnapshotPolicy(pub String);

impl FromStr for SnapshotPolicy {
    type Err = UnknownSnapshotPolicy;

    fn from_str(text: &str) -> Result<SnapshotPolicy, UnknownSnapshotPolicy> {
        match text {
            "before-change" => Ok(SnapshotPolicy::BeforeChange),
            "never" => Ok(SnapshotPolicy::Never),
            other => Err(UnknownSnapshotPolicy(other.to_owned())),
        }
    }
}

/// A Proxmox guest as a snapshot needs it: where it runs and its id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuestRef {
    /// The slug of its node (the host the snapshot command runs on).
    pub node: String,
    /// Its id on the cluster.
    pub vmid: u32,
    /// Container (`pct`) or VM (`qm`).
    pub kind: GuestKind,
}

/// What the shell knows of a change's host that the safety nets depend on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostSafety {
    /// What the inventory asks for the host (its own entry, a tag, or its node's entry).
    pub snapshot: SnapshotPolicy,
    /// The guest it is, when a discovery found it on a Proxmox node.
    pub guest: Option<GuestRef>,
}

/// How many Nomos snapshots a guest keeps (SAFE-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotConfig {
    /// The newest this many `nomos-` snapshots of a guest are kept; older ones are
    /// deleted after a new one is taken. At least 1 (the one just taken).
    pub keep: usize,
}

impl SnapshotConfig {
    /// Three per guest.
    pub fn spec_defaults() -> SnapshotConfig {
        SnapshotConfig { keep: 3 }
    }
}

/// A snapshot Nomos took, read back from its net's command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TakenSnapshot {
    /// Container or VM.
    pub kind: GuestKind,
    /// The guest's id.
    pub vmid: u32,
    /// The snapshot's name.
    pub name: String,
}

/// `nomos-` and the first twelve hex digits of the execution id.
pub fn snapshot_name(change: ExecutionId) -> String {
    let hex = change.as_uuid().simple().to_string();
    format!("{SNAPSHOT_PREFIX}{}", &hex[..12])
}

/// How a change came to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovedBy {
    /// An approval of its own, decided by id (a lone approved change).
    OwnRequest,
    /// The operator's assent to the plan generation it belongs to.
    PlanAssent,
}

/// SAFE-1's decision: whether `change` must be preceded by a snapshot of its host.
/// `earlier` are the session's executions: the changes an assent to a plan generation
/// lets run are snapshotted once per generation and guest (before the first of them whose
/// snapshot succeeded), a change with an approval of its own (or outside any plan) every
/// time. A read-only command, or a host that is not a Proxmox guest or does not ask for
/// it, gets none.
pub fn snapshot_due(
    host: &HostSafety,
    change: &Execution,
    approved_by: ApprovedBy,
    earlier: &[Execution],
) -> bool {
    if host.snapshot != SnapshotPolicy::BeforeChange
        || host.guest.is_none()
        || change.kind != ExecutionKind::Command
        || change.class == CommandClass::ReadOnly
    {
        return false;
    }
    if change.generation == 0 || approved_by == ApprovedBy::OwnRequest {
        return true;
    }
    let suffix = format!("on {} ", change.host);
    !earlier.iter().any(|e| {
        e.kind == ExecutionKind::Safety
            && succeeded(e)
            && e.generation == change.generation
            && e.reason.starts_with(SNAPSHOT_REASON)
            && e.reason.contains(&suffix)
    })
}

/// Whether a net's run ended with status 0.
pub fn succeeded(execution: &Execution) -> bool {
    execution.status == ExecutionStatus::Completed
        && execution.output.as_ref().and_then(|o| o.exit_code) == Some(0)
}

/// The reason recorded on the snapshot net of `change` on `host` (a guest slug).
pub fn snapshot_reason(name: &str, host: &str, guest: &GuestRef, change: ExecutionId) -> String {
    format!(
        "{SNAPSHOT_REASON} {name} on {host} (vmid {} on {}) before execution {change}",
        guest.vmid, guest.node
    )
}

fn tool(kind: GuestKind) -> &'static str {
    match kind {
        GuestKind::Lxc => "pct",
        GuestKind::Vm => "qm",
    }
}

/// The snapshot net's command, run on the node: take the snapshot, then list the guest's
/// snapshots (the listing the prune is decided from).
pub fn snapshot_command(guest: &GuestRef, name: &str) -> String {
    let (tool, vmid) = (tool(guest.kind), guest.vmid);
    format!("{tool} snapshot {vmid} {name} && {tool} listsnapshot {vmid}")
}

/// Reads back a snapshot net's command (the one [`snapshot_command`] wrote).
pub fn parse_snapshot_command(command: &str) -> Option<TakenSnapshot> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let kind = match *words.first()? {
        "pct" => GuestKind::Lxc,
        "qm" => GuestKind::Vm,
        _ => return None,
    };
    if words.get(1) != Some(&"snapshot") {
        return None;
    }
    let vmid = words.get(2)?.parse().ok()?;
    let name = words.get(3)?;
    if !name.starts_with(SNAPSHOT_PREFIX) {
        return None;
    }
    Some(TakenSnapshot {
        kind,
        vmid,
        name: (*name).to_owned(),
    })
}

/// The snapshots `pct listsnapshot` / `qm listsnapshot` lists, with the time each was
/// taken as printed (`YYYY-MM-DD HH:MM:SS`, empty when absent), in listing order; the
/// `current` marker is left out.
pub fn parse_listsnapshot(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let rest = line.trim_start().trim_start_matches('`').trim_start();
        let Some(rest) = rest.strip_prefix("->") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let Some(name) = words.next() else { continue };
        if name == "current" {
            continue;
        }
        let date = words.next().unwrap_or("");
        let time = words.next().unwrap_or("");
        let taken = if date.len() == 10 && date.as_bytes()[4] == b'-' {
            format!("{date} {time}")
        } else {
            String::new()
        };
        out.push((name.to_owned(), taken));
    }
    out
}

/// SAFE-1's prune: the `nomos-` snapshots of a listing beyond the newest `keep` (by the
/// time each was taken, the listing's order breaking ties), never `taken` (the one just
/// made) and never a name without the prefix. Oldest first.
pub fn snapshots_to_prune(listing: &str, keep: usize, taken: &str) -> Vec<String> {
    let mut ours: Vec<(usize, String, String)> = parse_listsnapshot(listing)
        .into_iter()
        .enumerate()
        .filter(|(_, (name, _))| name.starts_with(SNAPSHOT_PREFIX))
        .map(|(i, (name, at))| (i, at, name))
        .collect();
    ours.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    let keep = keep.max(1);
    let n_prune = ours.len().saturating_sub(keep);
    ours.into_iter()
        .map(|(_, _, name)| name)
        .filter(|name| name != taken)
        .take(n_prune)
        .collect()
}

/// The prune net's command: delete each named snapshot of the guest, in order.
pub fn prune_command(snapshot: &TakenSnapshot, names: &[String]) -> String {
    let (tool, vmid) = (tool(snapshot.kind), snapshot.vmid);
    names
        .iter()
        .map(|name| format!("{tool} delsnapshot {vmid} {name}"))
        .collect::<Vec<_>>()
        .join(" && ")
}

/// The Rollback's command: the guest back to the snapshot.
pub fn rollback_command(snapshot: &TakenSnapshot) -> String {
    format!(
        "{} rollback {} {}",
        tool(snapshot.kind),
        snapshot.vmid,
        snapshot.name
    )
}

/// The Rollback's preview: the guest's snapshots, shown as they are.
pub fn rollback_preview_form(snapshot: &TakenSnapshot) -> PreviewForm {
    PreviewForm {
        commands: vec![format!(
            "{} listsnapshot {}",
            tool(snapshot.kind),
            snapshot.vmid
        )],
        parser: PreviewParser::Raw,
        file: None,
    }
}

#[cfg(test)]
mod tests {
    use super::ApprovedBy::{OwnRequest, PlanAssent};
    use super::*;
    use crate::classify::classify;
    use crate::id::SessionId;
    use crate::time::Timestamp;

    fn guest() -> HostSafety {
        HostSafety {
            snapshot: SnapshotPolicy::BeforeChange,
            guest: Some(GuestRef {
                node: "host:pve".into(),
                vmid: 100,
                kind: GuestKind::Lxc,
            }),
        }
    }

    fn execution(n: usize, kind: ExecutionKind, generation: u32, reason: &str) -> Execution {
        let session = SessionId(uuid::Uuid::from_u128(7));
        Execution {
            id: session.execution_id(n),
            session_id: session,
            tool_call_id: None,
            kind,
            host: "lxc:nextcloud".into(),
            command: "systemctl restart nginx".into(),
            class: CommandClass::ConfigMutation,
            reason: reason.into(),
            generation,
            step_seq: None,
            status: ExecutionStatus::Completed,
            created_at: Timestamp::from_millis(0),
            started_at: None,
            finished_at: None,
            output: Some(crate::record::ExecOutput {
                exit_code: Some(0),
                ..Default::default()
            }),
            error: None,
        }
    }

    fn snapshot_of(n: usize, generation: u32, change: &Execution) -> Execution {
        let host = guest();
        let reason = snapshot_reason(
            &snapshot_name(change.id),
            &change.host,
            host.guest.as_ref().unwrap(),
            change.id,
        );
        execution(n, ExecutionKind::Safety, generation, &reason)
    }

    // rule: SAFE-1
    #[test]
    fn the_first_change_of_a_generation_gets_a_snapshot_and_the_second_does_not() {
        let first = execution(1, ExecutionKind::Command, 2, "");
        assert!(snapshot_due(&guest(), &first, PlanAssent, &[]));
        let taken = snapshot_of(2, 2, &first);
        let second = execution(3, ExecutionKind::Command, 2, "");
        let earlier = [first.clone(), taken.clone()];
        assert!(!snapshot_due(&guest(), &second, PlanAssent, &earlier));
        let next_generation = execution(4, ExecutionKind::Command, 3, "");
        assert!(snapshot_due(
            &guest(),
            &next_generation,
            PlanAssent,
            &earlier
        ));
    }

    // rule: SAFE-1
    #[test]
    fn a_failed_snapshot_does_not_count_for_its_generation() {
        let first = execution(1, ExecutionKind::Command, 2, "");
        let mut failed = snapshot_of(2, 2, &first);
        failed.status = ExecutionStatus::Failed;
        let second = execution(3, ExecutionKind::Command, 2, "");
        assert!(snapshot_due(
            &guest(),
            &second,
            PlanAssent,
            &[first, failed]
        ));
    }

    // rule: SAFE-1
    #[test]
    fn every_lone_approved_change_gets_a_snapshot() {
        let first = execution(1, ExecutionKind::Command, 2, "");
        let taken = snapshot_of(2, 2, &first);
        let second = execution(3, ExecutionKind::Command, 2, "");
        let earlier = [first, taken];
        assert!(snapshot_due(&guest(), &second, OwnRequest, &earlier));
        let outside_a_plan = execution(4, ExecutionKind::Command, 0, "");
        assert!(snapshot_due(
            &guest(),
            &outside_a_plan,
            PlanAssent,
            &earlier
        ));
    }

    // rule: SAFE-1
    #[test]
    fn reads_other_hosts_and_hosts_that_do_not_ask_get_none() {
        let mut read = execution(1, ExecutionKind::Command, 0, "");
        read.class = CommandClass::ReadOnly;
        assert!(!snapshot_due(&guest(), &read, OwnRequest, &[]));
        let change = execution(2, ExecutionKind::Command, 0, "");
        let not_asked = HostSafety {
            snapshot: SnapshotPolicy::Never,
            ..guest()
        };
        assert!(!snapshot_due(&not_asked, &change, OwnRequest, &[]));
        let not_a_guest = HostSafety {
            guest: None,
            ..guest()
        };
        assert!(!snapshot_due(&not_a_guest, &change, OwnRequest, &[]));
    }

    // rule: SAFE-1
    #[test]
    fn the_snapshot_name_carries_the_execution_id_and_the_command_reads_back() {
        let change = execution(1, ExecutionKind::Command, 0, "");
        let name = snapshot_name(change.id);
        assert!(name.starts_with("nomos-") && name.len() == 18, "{name}");
        assert!(
            change
                .id
                .as_uuid()
                .simple()
                .to_string()
                .starts_with(&name[6..])
        );
        let host = guest();
        let command = snapshot_command(host.guest.as_ref().unwrap(), &name);
        assert_eq!(
            command,
            format!("pct snapshot 100 {name} && pct listsnapshot 100")
        );
        let taken = parse_snapshot_command(&command).unwrap();
        assert_eq!((taken.vmid, taken.name.as_str()), (100, name.as_str()));
        assert_eq!(rollback_command(&taken), format!("pct rollback 100 {name}"));
        let vm = GuestRef {
            kind: GuestKind::Vm,
            vmid: 200,
            node: "host:pve".into(),
        };
        assert!(snapshot_command(&vm, &name).starts_with("qm snapshot 200 nomos-"));
    }

    const LISTING: &str = "\
`-> before-upgrade        2026-11-01 10:00:00     by hand
 `-> nomos-aaaaaaaaaaaa   2026-11-02 10:00:00     no-description
  `-> nomos-bbbbbbbbbbbb  2026-11-03 10:00:00     no-description
   `-> weekly             2026-11-04 10:00:00     by cron
    `-> nomos-cccccccccccc 2026-11-05 10:00:00    no-description
     `-> nomos-dddddddddddd 2026-11-06 10:00:00   no-description
      `-> current                                 You are here!
";

    // rule: SAFE-1
    #[test]
    fn pruning_keeps_the_newest_nomos_snapshots_and_never_touches_others() {
        assert_eq!(
            snapshots_to_prune(LISTING, 3, "nomos-dddddddddddd"),
            ["nomos-aaaaaaaaaaaa"]
        );
        assert_eq!(
            snapshots_to_prune(LISTING, 1, "nomos-dddddddddddd"),
            [
                "nomos-aaaaaaaaaaaa",
                "nomos-bbbbbbbbbbbb",
                "nomos-cccccccccccc"
            ]
        );
        assert!(snapshots_to_prune(LISTING, 4, "nomos-dddddddddddd").is_empty());
        // keep = 0 still keeps the snapshot just taken.
        let pruned = snapshots_to_prune(LISTING, 0, "nomos-dddddddddddd");
        assert!(!pruned.contains(&"nomos-dddddddddddd".to_owned()));
        assert!(pruned.iter().all(|n| n.starts_with("nomos-")));
    }

    // rule: SAFE-1
    #[test]
    fn the_rollback_preview_only_reads_and_the_rollback_is_destructive() {
        let taken = TakenSnapshot {
            kind: GuestKind::Lxc,
            vmid: 100,
            name: "nomos-aaaaaaaaaaaa".into(),
        };
        for command in rollback_preview_form(&taken).commands {
            assert_eq!(
                classify(&command).class,
                CommandClass::ReadOnly,
                "{command}"
            );
        }
        assert_eq!(
            classify(&rollback_command(&taken)).class,
            CommandClass::Destructive
        );
        assert_eq!(
            "before-change".parse::<SnapshotPolicy>(),
            Ok(SnapshotPolicy::BeforeChange)
        );
        assert!("before_change".parse::<SnapshotPolicy>().is_err());
    }
}
