//! `nomos-eval`: replays golden conversations and evaluates the classifier corpus.
//!
//! The top level is reserved for the golden-eval runner (`nomos-eval --manifest ...`);
//! until it lands, an invocation without a subcommand prints help and exits 2.
//! `nomos-eval classify` evaluates the command classifier (see `classify_cmd.rs`).

mod classify_cmd;

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
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Classify commands: score a labelled corpus, or classify commands read from stdin.
    Classify(classify_cmd::ClassifyArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Classify(args)) => classify_cmd::run(&args),
        None => {
            let _ = Cli::command().print_help();
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(outcome) => outcome.exit_code(),
        Err(err) => {
            eprintln!("nomos-eval: {err:#}");
            ExitCode::from(2)
        }
    }
}
