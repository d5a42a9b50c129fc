//! `nomos-eval`: replays golden conversations and evaluates the classifier corpus.
//!
//! The top level runs the golden conversations of a manifest (`nomos-eval --manifest
//! evals/golden.yaml`, see `golden_cmd.rs`); `nomos-eval classify` evaluates the command
//! classifier (see `classify_cmd.rs`); `nomos-eval policy-diff` reclassifies stored
//! executions under a new policy (see `policy_diff_cmd.rs`). Without either, it prints help and exits 2.

mod classify_cmd;
mod golden_cmd;
mod policy_diff_cmd;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Command-line interface of `nomos-eval`.
#[derive(Debug, Parser)]
#[command(
    name = "nomos-eval",
    version,
    about = "Evaluate Nomos: golden conversations and the command classifier"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    golden: golden_cmd::GoldenArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Classify commands: score a labelled corpus, or classify commands read from stdin.
    Classify(classify_cmd::ClassifyArgs),
    /// Reclassify every stored execution under a new policy file and report what would
    /// change class (AUDIT-3); opens the database read-only and writes nothing.
    PolicyDiff(policy_diff_cmd::PolicyDiffArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Classify(args)) => classify_cmd::run(&args).map(|o| o.exit_code()),
        Some(Command::PolicyDiff(args)) => policy_diff_cmd::run(&args),
        None => match &cli.golden.manifest {
            Some(path) => golden_cmd::run(&cli.golden, path).map(|o| o.exit_code()),
            None => {
                let _ = Cli::command().print_help();
                return ExitCode::from(2);
            }
        },
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("nomos-eval: {err:#}");
            ExitCode::from(2)
        }
    }
}
