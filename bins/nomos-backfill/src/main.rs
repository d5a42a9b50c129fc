//! `nomos-backfill`: repairs stuck sessions and stale executions left by older code,
//! crashes or eval runs (BACKFILL-1, BACKFILL-2). Dry run by default; `--apply` commits.
//!
//! Exit status, so a cron job can alert: 0 nothing needs repair (or `--apply` repaired
//! it), 3 a dry run found repairs to make, 2 a usage error or a database refused (missing,
//! without the schema, or newer than this tool), 1 any other failure.
//!
//! `nomos-backfill verify` walks every event hash chain (AUDIT-2) instead: 0 every chain
//! is intact, 4 one is broken (the first broken event is named on stdout).

mod cli;

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use nomos_backfill::{OpenError, Report, open_store, run_backfill};
use nomos_core::Timestamp;

use crate::cli::Args;

/// Exit status of a usage error or a database refused for its schema (clap also exits 2
/// for bad flags).
const EXIT_USAGE: u8 = 2;

/// Exit status of a dry run that found repairs to make.
const EXIT_WOULD_CHANGE: u8 = 3;

/// Exit status of `verify` finding a broken chain.
const EXIT_BROKEN_CHAIN: u8 = 4;

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let config = match args.config() {
        Ok(config) => config,
        Err(err) => {
            eprintln!("nomos-backfill: error: {err:#}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match run(args, config).await {
        Ok(code) => code,
        Err(err) => {
            eprintln!("nomos-backfill: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args, config: nomos_backfill::BackfillConfig) -> anyhow::Result<ExitCode> {
    let store = match open_store(&args.database_url, args.schema_policy()).await {
        Ok(store) => store,
        Err(
            err @ (OpenError::NoDatabase(_)
            | OpenError::NotMigrated { .. }
            | OpenError::SchemaTooNew { .. }),
        ) => {
            eprintln!("nomos-backfill: {err}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        Err(err) => return Err(err).context("opening the database"),
    };
    if let Some(cli::Command::Verify { page }) = args.command {
        return verify(store.as_ref(), page, args.json).await;
    }
    let now = Timestamp::from(chrono::Utc::now());
    let bar = progress_bar(&config);
    let report = run_backfill(store.as_ref(), &config, now, &mut |report: &Report| {
        bar.set_position(report.scanned);
        bar.set_message(format!(
            "changed {}  conflicts {}",
            report.sessions_changed, report.n_conflicts
        ));
    })
    .await;
    bar.finish_and_clear();
    let report = report.context("running the backfill")?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.render_text());
    }
    if report.n_errors > 0 {
        return Ok(ExitCode::FAILURE);
    }
    if report.mode == nomos_backfill::Mode::DryRun && report.sessions_changed > 0 {
        return Ok(ExitCode::from(EXIT_WOULD_CHANGE));
    }
    Ok(ExitCode::SUCCESS)
}

/// AUDIT-2: walks every chain and reports the first broken event.
async fn verify(
    store: &dyn nomos_core::ports::store::Store,
    page: u32,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let report = nomos_core::chain::verify_store(store, page)
        .await
        .context("reading the event log")?;
    if json {
        let broken = report.broken.as_ref().map(|b| {
            serde_json::json!({
                "session": b.session.to_string(),
                "seq": b.seq,
                "problem": b.to_string(),
            })
        });
        let out = serde_json::json!({
            "sessions": report.sessions,
            "events": report.events,
            "intact": broken.is_none(),
            "broken": broken,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    match &report.broken {
        None => {
            if !json {
                println!(
                    "verified {} event(s) in {} session(s): every hash chain is intact",
                    report.events, report.sessions
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(broken) => {
            if !json {
                println!("broken hash chain: {broken}");
                println!(
                    "first broken event: session {} seq {} ({} event(s) checked before it)",
                    broken.session,
                    broken.seq,
                    report.events.saturating_sub(1)
                );
            }
            Ok(ExitCode::from(EXIT_BROKEN_CHAIN))
        }
    }
}

/// A bar with counts and rate on a terminal; hidden when stderr is not one.
fn progress_bar(config: &nomos_backfill::BackfillConfig) -> ProgressBar {
    let bar = match &config.scope {
        nomos_backfill::Scope::Sessions(ids) => ProgressBar::new(ids.len() as u64),
        nomos_backfill::Scope::All => ProgressBar::new_spinner(),
    };
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
        return bar;
    }
    bar.set_draw_target(ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {pos} sessions scanned ({per_sec})  {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_spinner());
    bar.set_style(style);
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}
