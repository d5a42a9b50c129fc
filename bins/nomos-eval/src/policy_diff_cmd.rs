//! `nomos-eval policy-diff` (AUDIT-3): reclassifies every stored execution under a new
//! policy file with the current classifier and reports what would change class.
//!
//! The database is opened read-only (SQLite `mode=ro`; PostgreSQL with every
//! transaction read-only) and nothing is written. Executions are read newest first in
//! keyset pages of `(created_at, id)`, so memory holds one page and the samples, never
//! the whole table.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;
use nomos_core::classify::{CommandClass, Policy};
use nomos_core::ports::store::{ExecutionCursor, ExecutionFilter, ListOrder, Store};
use nomos_core::record::Execution;
use nomos_core::{Span, Timestamp};
use serde::Serialize;

/// Flags of `nomos-eval policy-diff`.
#[derive(Debug, Args)]
pub struct PolicyDiffArgs {
    /// The policy file to try (TOML, as `policy_file` of the server).
    #[arg(long, value_name = "NEW.toml")]
    pub policy: PathBuf,
    /// The database: a SQLite path or `sqlite:` URL, or a `postgres://` URL.
    #[arg(long, env = "NOMOS_DATABASE_URL", value_name = "URL")]
    pub database_url: String,
    /// Only executions created within this age (s, m, h, d, w), such as 30d.
    #[arg(long, value_name = "AGE")]
    pub since: Option<String>,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Executions read per page.
    #[arg(long, value_name = "N", default_value_t = 5_000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub page: u32,
    /// Samples shown per change.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub samples: usize,
}

/// One execution whose class would change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Sample {
    /// The execution.
    pub execution: String,
    /// Its session.
    pub session: String,
    /// Where it ran.
    pub host: String,
    /// The command.
    pub command: String,
    /// The reason stored with the old class.
    pub old_reason: String,
    /// The reason of the new class.
    pub new_reason: String,
}

/// The executions that move from one class to another.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The class stored.
    pub from: CommandClass,
    /// The class under the new policy.
    pub to: CommandClass,
    /// How many.
    pub count: u64,
    /// The newest few.
    pub samples: Vec<Sample>,
}

/// What the reclassification found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PolicyDiff {
    /// Executions reclassified.
    pub scanned: u64,
    /// Of those, how many would change class.
    pub changed: u64,
    /// Per `(from, to)`, in class order.
    pub changes: Vec<Change>,
    #[serde(skip)]
    by_change: BTreeMap<(u8, u8), Change>,
    #[serde(skip)]
    sample_size: usize,
}

fn rank(class: CommandClass) -> u8 {
    match class {
        CommandClass::ReadOnly => 0,
        CommandClass::ConfigMutation => 1,
        CommandClass::Destructive => 2,
    }
}

impl PolicyDiff {
    /// An empty tally keeping `sample_size` samples per change.
    pub fn new(sample_size: usize) -> PolicyDiff {
        PolicyDiff {
            sample_size,
            ..PolicyDiff::default()
        }
    }

    /// Reclassifies one execution.
    pub fn add(&mut self, policy: &Policy, execution: &Execution) {
        self.scanned += 1;
        let new = policy.classify(&execution.command);
        if new.class == execution.class {
            return;
        }
        self.changed += 1;
        let change = self
            .by_change
            .entry((rank(execution.class), rank(new.class)))
            .or_insert_with(|| Change {
                from: execution.class,
                to: new.class,
                count: 0,
                samples: Vec::new(),
            });
        change.count += 1;
        if change.samples.len() < self.sample_size {
            change.samples.push(Sample {
                execution: execution.id.to_string(),
                session: execution.session_id.to_string(),
                host: execution.host.clone(),
                command: execution.command.clone(),
                old_reason: execution.reason.clone(),
                new_reason: new.reason,
            });
        }
    }

    /// The tally with its changes listed.
    pub fn finish(mut self) -> PolicyDiff {
        self.changes = std::mem::take(&mut self.by_change).into_values().collect();
        self
    }

    /// The report for a person.
    pub fn render_text(&self, policy: &str, since: Option<Timestamp>) -> String {
        let mut out = String::new();
        let scope = since.map_or_else(String::new, |t| format!(" created since {t}"));
        out.push_str(&format!(
            "policy-diff: {} execution(s){scope} reclassified under {policy}; nothing was written\n",
            self.scanned
        ));
        out.push_str(&format!(
            "would change class: {}, unchanged: {}\n",
            self.changed,
            self.scanned - self.changed
        ));
        for change in &self.changes {
            let label = format!("{} -> {}", change.from.as_str(), change.to.as_str());
            out.push_str(&format!("  {label:<34}{:>8}\n", change.count));
        }
        for change in &self.changes {
            out.push_str(&format!(
                "\n{} -> {}, samples:\n",
                change.from.as_str(),
                change.to.as_str()
            ));
            for s in &change.samples {
                out.push_str(&format!(
                    "  {}  {}  `{}`\n    was: {}\n    now: {}\n",
                    s.execution, s.host, s.command, s.old_reason, s.new_reason
                ));
            }
        }
        out
    }
}

/// An age such as `30d` or `12h`.
pub fn parse_age(text: &str) -> anyhow::Result<Span> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: i64 = number.parse().with_context(|| {
        format!("`{text}` is not an age such as 30d (a number, then s, m, h, d or w)")
    })?;
    let minutes = match unit {
        "s" => return Ok(Span::from_millis(n * 1000)),
        "m" => n,
        "h" => n * 60,
        "d" => n * 24 * 60,
        "w" => n * 7 * 24 * 60,
        other => bail!("`{text}`: unknown unit `{other}` (use s, m, h, d or w)"),
    };
    Ok(Span::from_mins(minutes))
}

/// Opens the database read-only.
async fn open_read_only(url: &str) -> anyhow::Result<Arc<dyn Store>> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let store = nomos_postgres::PgStore::connect_read_only(url)
            .await
            .with_context(|| format!("opening {} read-only", nomos_postgres::redact_url(url)))?;
        return Ok(Arc::new(store));
    }
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .unwrap_or(url);
    let path = path.split('?').next().unwrap_or(path);
    if !std::path::Path::new(path).exists() {
        bail!("no database at {path}; check --database-url");
    }
    let store = nomos_sqlite::SqliteStore::open_read_only(path)
        .await
        .with_context(|| format!("opening {path} read-only"))?;
    Ok(Arc::new(store))
}

/// Pages through the executions newest first and tallies the changes.
pub async fn reclassify(
    store: &dyn Store,
    policy: &Policy,
    since: Option<Timestamp>,
    page: u32,
    sample_size: usize,
) -> anyhow::Result<PolicyDiff> {
    let mut diff = PolicyDiff::new(sample_size);
    let mut before: Option<ExecutionCursor> = None;
    loop {
        let filter = ExecutionFilter {
            order: ListOrder::NewestFirst,
            before,
            limit: Some(page),
            ..ExecutionFilter::default()
        };
        let executions = store
            .list_executions(&filter)
            .await
            .context("reading executions")?;
        let Some(last) = executions.last() else {
            break;
        };
        before = Some(ExecutionCursor::of(last));
        let mut older = false;
        for execution in &executions {
            if since.is_some_and(|since| execution.created_at < since) {
                older = true;
                break;
            }
            diff.add(policy, execution);
        }
        if older || executions.len() < page as usize {
            break;
        }
    }
    Ok(diff.finish())
}

/// Runs the command.
pub fn run(args: &PolicyDiffArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.policy)
        .with_context(|| format!("reading the policy file {}", args.policy.display()))?;
    let origin = args.policy.display().to_string();
    let policy = Policy::parse(&text, &origin).map_err(|e| anyhow::anyhow!("{e}"))?;
    let since = match &args.since {
        Some(age) => {
            let age = parse_age(age).context("--since")?;
            Some(Timestamp::from(chrono::Utc::now()) - age)
        }
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let diff = runtime.block_on(async {
        let store = open_read_only(&args.database_url).await?;
        reclassify(store.as_ref(), &policy, since, args.page, args.samples).await
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&diff)?);
    } else {
        print!("{}", diff.render_text(&origin, since));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use nomos_core::{ExecutionId, ExecutionStatus, SessionId};

    use super::*;

    fn execution(n: u128, command: &str, class: CommandClass) -> Execution {
        Execution {
            id: ExecutionId(uuid::Uuid::from_u128(n)),
            session_id: SessionId(uuid::Uuid::from_u128(1)),
            tool_call_id: None,
            kind: nomos_core::record::ExecutionKind::Command,
            host: "web-1".into(),
            command: command.into(),
            class,
            reason: "stored".into(),
            generation: 1,
            step_seq: None,
            status: ExecutionStatus::Completed,
            created_at: Timestamp::from_millis(1),
            started_at: None,
            finished_at: None,
            output: None,
            error: None,
        }
    }

    // rule: AUDIT-3
    #[test]
    fn changes_are_counted_per_old_and_new_class_with_samples() {
        let policy = Policy::parse(
            "[[rule]]\nprefix = [\"ls\"]\nclass = \"destructive\"\nreason = \"no listing here\"\n",
            "new.toml",
        )
        .unwrap();
        let mut diff = PolicyDiff::new(1);
        diff.add(&policy, &execution(1, "ls /tmp", CommandClass::ReadOnly));
        diff.add(&policy, &execution(2, "ls /etc", CommandClass::ReadOnly));
        diff.add(
            &policy,
            &execution(3, "cat /etc/hosts", CommandClass::ReadOnly),
        );
        diff.add(&policy, &execution(4, "ls", CommandClass::Destructive));
        let diff = diff.finish();
        assert_eq!((diff.scanned, diff.changed), (4, 2));
        assert_eq!(diff.changes.len(), 1);
        let change = &diff.changes[0];
        assert_eq!(
            (change.from, change.to, change.count),
            (CommandClass::ReadOnly, CommandClass::Destructive, 2)
        );
        assert_eq!(change.samples.len(), 1);
        assert_eq!(change.samples[0].command, "ls /tmp");
        let text = diff.render_text("new.toml", None);
        assert!(
            text.contains("would change class: 2, unchanged: 2"),
            "{text}"
        );
        assert!(text.contains("read_only -> destructive"), "{text}");
    }

    #[test]
    fn ages_are_read_with_their_unit_and_bad_ones_say_why() {
        assert_eq!(parse_age("30d").unwrap(), Span::from_mins(30 * 24 * 60));
        assert_eq!(parse_age("2w").unwrap(), Span::from_mins(2 * 7 * 24 * 60));
        assert!(
            parse_age("30x")
                .unwrap_err()
                .to_string()
                .contains("unknown unit `x`")
        );
        assert!(parse_age("d").is_err());
    }
}
