//! The command line: raw flags, then the validated [`BackfillConfig`].

use clap::Parser;
use nomos_backfill::config::DEFAULT_BATCH_SIZE;
use nomos_backfill::{BackfillConfig, DEFAULT_DATABASE_URL, Mode, SchemaPolicy, Scope, parse_age};
use nomos_core::SessionId;
use nomos_core::sweep::AwaitingPolicy;

/// Repairs stuck Nomos sessions and stale executions. Dry run unless --apply.
#[derive(Debug, Parser)]
#[command(name = "nomos-backfill", version, about, long_about = None)]
pub struct Args {
    /// Another task than the repair.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The database: a SQLite path or `sqlite:` URL, or a `postgres://` URL.
    #[arg(long, env = "NOMOS_DATABASE_URL", default_value = DEFAULT_DATABASE_URL, global = true)]
    pub database_url: String,
    /// Apply the Nomos migrations first (otherwise a database without the current schema is refused).
    #[arg(long)]
    pub migrate: bool,
    /// Commit the repairs (default: a dry run that changes nothing).
    #[arg(long)]
    pub apply: bool,
    /// Also close sessions waiting for the operator's answer or an approval.
    #[arg(long)]
    pub include_awaiting: bool,
    /// Only sessions idle for longer than this (s, m, h, d, w), such as 7d or 12h.
    #[arg(long, default_value = "1d")]
    pub older_than: String,
    /// Only this session (repeatable).
    #[arg(long = "session", value_name = "ID")]
    pub sessions: Vec<String>,
    /// Change at most this many sessions, then stop.
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Sessions per batch; each batch is one transaction.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BATCH_SIZE, value_parser = clap::value_parser!(u32).range(1..=50_000))]
    pub batch_size: u32,
    /// How many session ids to show per class.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub samples: usize,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Tasks besides the repair.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Walks every session's event hash chain (AUDIT-2) and names the first broken
    /// event; changes nothing. Exit 0 when every chain is intact, 4 when one is broken.
    Verify {
        /// Events read per query.
        #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        page: u32,
    },
}

impl Args {
    /// Whether opening may migrate.
    pub fn schema_policy(&self) -> SchemaPolicy {
        if self.migrate {
            SchemaPolicy::Migrate
        } else {
            SchemaPolicy::Refuse
        }
    }

    /// The validated settings.
    pub fn config(&self) -> anyhow::Result<BackfillConfig> {
        let mode = if self.apply {
            Mode::Apply
        } else {
            Mode::DryRun
        };
        let mut config = BackfillConfig::standard(mode);
        config.thresholds.backfill_idle_after =
            parse_age(&self.older_than).map_err(|e| anyhow::anyhow!("--older-than: {e}"))?;
        if self.include_awaiting {
            config.awaiting = AwaitingPolicy::Include;
        }
        if !self.sessions.is_empty() {
            let ids = self
                .sessions
                .iter()
                .map(|text| {
                    text.trim().parse::<SessionId>().map_err(|e| {
                        anyhow::anyhow!("--session `{text}` is not a session id (a UUID): {e}")
                    })
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            config.scope = Scope::Sessions(ids);
        }
        config.limit = self.limit;
        config.batch_size = self.batch_size;
        config.sample_size = self.samples;
        Ok(config)
    }
}
