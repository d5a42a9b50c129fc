//! FLEET-6: the previews of a fan-out's hosts, grouped by what they say, so the card shows
//! "18 hosts: 3 packages upgraded" once and the two hosts that differ stand out first.

use serde::{Deserialize, Serialize};

use super::{PackageAction, PackageChange, Preview, PreviewOutcome, PreviewRun};

/// Hosts of a fan-out whose previews read the same (every field but the executions that
/// recorded them).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PreviewGroup {
    /// The hosts, in the fan-out's order.
    pub hosts: Vec<String>,
    /// One line for the card: how many hosts, and what their preview says.
    pub summary: String,
    /// Whether it could be shown.
    pub outcome: PreviewOutcome,
    /// The first host's runs (the others read the same).
    pub runs: Vec<PreviewRun>,
    /// The packages an apt simulation says would change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<PackageChange>,
    /// For `sed -i`: the diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// FLEET-6: one preview for a fan-out's request from each host's: the groups of hosts
/// whose previews read the same, the smallest first (outliers stand out), ties in the
/// fan-out's order; the preview's own fields are the first group's. `None` for no host.
pub fn group_previews(per_host: Vec<(String, Preview)>) -> Option<Preview> {
    let mut groups: Vec<(String, Vec<String>, Preview)> = Vec::new();
    for (host, preview) in per_host {
        let key = reading(&preview);
        match groups.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, hosts, _)) => hosts.push(host),
            None => groups.push((key, vec![host], preview)),
        }
    }
    // A stable sort keeps the fan-out's order among groups of one size.
    groups.sort_by_key(|(_, hosts, _)| hosts.len());
    let mut top = groups.first()?.2.clone();
    top.groups = groups
        .into_iter()
        .map(|(_, hosts, preview)| PreviewGroup {
            summary: summary(hosts.len(), &preview),
            hosts,
            outcome: preview.outcome,
            runs: preview.runs,
            packages: preview.packages,
            diff: preview.diff,
        })
        .collect();
    Some(top)
}

/// What a preview says, without the executions that recorded it.
fn reading(preview: &Preview) -> String {
    let mut bare = preview.clone();
    bare.groups.clear();
    for run in &mut bare.runs {
        run.execution_id = None;
    }
    serde_json::to_string(&bare).unwrap_or_default()
}

/// "18 hosts: 3 packages upgraded, 1 removed (libfoo)".
fn summary(hosts: usize, preview: &Preview) -> String {
    let who = if hosts == 1 {
        "1 host".to_owned()
    } else {
        format!("{hosts} hosts")
    };
    let what = if preview.outcome == PreviewOutcome::Failed {
        let why = preview
            .runs
            .iter()
            .find_map(|r| r.error.clone())
            .unwrap_or_else(|| "it could not run".to_owned());
        format!("the preview failed: {why}")
    } else if !preview.packages.is_empty() {
        packages_line(&preview.packages)
    } else if let Some(diff) = &preview.diff {
        let changed = diff
            .lines()
            .filter(|l| {
                (l.starts_with('+') || l.starts_with('-'))
                    && !l.starts_with("+++")
                    && !l.starts_with("---")
            })
            .count();
        let file = preview.file.as_deref().unwrap_or("the file");
        if changed == 0 {
            format!("no change to {file}")
        } else {
            format!("{changed} changed line(s) in {file}")
        }
    } else {
        preview
            .runs
            .iter()
            .flat_map(|r| r.stdout.lines())
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map_or_else(|| "no output".to_owned(), |l| l.chars().take(120).collect())
    };
    format!("{who}: {what}")
}

fn packages_line(packages: &[PackageChange]) -> String {
    let count = |action: PackageAction| packages.iter().filter(|p| p.action == action).count();
    let mut parts = Vec::new();
    for (action, word) in [
        (PackageAction::Upgrade, "upgraded"),
        (PackageAction::Install, "installed"),
    ] {
        let n = count(action);
        if n > 0 {
            parts.push(format!("{n} package(s) {word}"));
        }
    }
    // What goes away is named: it is what an operator looks for in the outliers.
    for (action, word) in [
        (PackageAction::Remove, "removed"),
        (PackageAction::Purge, "purged"),
    ] {
        let names: Vec<&str> = packages
            .iter()
            .filter(|p| p.action == action)
            .map(|p| p.name.as_str())
            .collect();
        if !names.is_empty() {
            parts.push(format!("{} {word} ({})", names.len(), names.join(", ")));
        }
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::preview::PreviewParser;
    use crate::id::ExecutionId;
    use crate::preview::PreviewRunStatus;

    fn raw(stdout: &str, n: u128) -> Preview {
        Preview {
            parser: PreviewParser::Raw,
            outcome: PreviewOutcome::Shown,
            runs: vec![PreviewRun {
                command: "systemctl status nginx".to_owned(),
                status: PreviewRunStatus::Ran,
                // Each host's run is its own execution; the reading ignores it.
                execution_id: Some(ExecutionId(uuid::Uuid::from_u128(n))),
                exit_code: Some(0),
                stdout: stdout.to_owned(),
                stderr: String::new(),
                cut: 0,
                error: None,
            }],
            packages: Vec::new(),
            diff: None,
            file: None,
            groups: Vec::new(),
        }
    }

    // rule: FLEET-6
    #[test]
    fn hosts_group_by_what_their_previews_say_smallest_group_first_ties_in_order() {
        let per_host = vec![
            ("a".to_owned(), raw("Active: active (running)", 1)),
            ("b".to_owned(), raw("Active: failed", 2)),
            ("c".to_owned(), raw("Active: active (running)", 3)),
            ("d".to_owned(), raw("Active: inactive (dead)", 4)),
            ("e".to_owned(), raw("Active: active (running)", 5)),
        ];
        let preview = group_previews(per_host).unwrap();
        let hosts: Vec<&[String]> = preview.groups.iter().map(|g| g.hosts.as_slice()).collect();
        assert_eq!(
            hosts,
            [
                &["b".to_owned()][..],
                &["d".to_owned()],
                &["a".to_owned(), "c".to_owned(), "e".to_owned()]
            ]
        );
        assert_eq!(preview.groups[0].summary, "1 host: Active: failed");
        assert_eq!(
            preview.groups[2].summary,
            "3 hosts: Active: active (running)"
        );
        assert_eq!(
            preview.runs[0].stdout, "Active: failed",
            "the top is the first group"
        );
        assert_eq!(group_previews(Vec::new()), None);
    }

    // rule: FLEET-6
    #[test]
    fn a_failed_or_diffing_preview_says_so_in_its_group_line() {
        let mut failed = raw("", 1);
        failed.outcome = PreviewOutcome::Failed;
        failed.runs[0].error = Some("could not connect".to_owned());
        let mut diff = raw("", 2);
        diff.parser = PreviewParser::SedDiff;
        diff.diff = Some("--- a/app.conf\n+++ b/app.conf\n-listen 80;\n+listen 8080;\n".to_owned());
        diff.file = Some("/etc/app.conf".to_owned());
        let preview =
            group_previews(vec![("x".to_owned(), failed), ("y".to_owned(), diff)]).unwrap();
        assert_eq!(
            preview.groups[0].summary,
            "1 host: the preview failed: could not connect"
        );
        assert_eq!(
            preview.groups[1].summary,
            "1 host: 2 changed line(s) in /etc/app.conf"
        );
    }
}
