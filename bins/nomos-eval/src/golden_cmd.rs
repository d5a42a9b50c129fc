//! `nomos-eval --manifest FILE`: the golden-eval runner's command line (EVAL-1..3).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use nomos_golden::manifest::Manifest;
use nomos_golden::run::ModelChoice;
use nomos_golden::{RunOptions, run_manifest};

/// Options of the golden runner.
#[derive(Debug, Args)]
pub struct GoldenArgs {
    /// The manifest of golden conversations (YAML).
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,
    /// `stub` (the scripted replies, default), `openai` (an OpenAI-compatible endpoint from
    /// NOMOS_LLM_BASE_URL, NOMOS_LLM_MODEL, NOMOS_LLM_API_KEY) or `replay:DIR`.
    #[arg(long, default_value = "stub", value_name = "MODEL")]
    pub model: String,
    /// Record every exchange with the real model into DIR (refused when CI is set).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Run each case N times and keep the worst result.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: u32,
    /// Cases running at once.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub parallel: usize,
    /// Only cases with this tag (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Print JSON (an object with a `cases` array) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

/// How a golden run ended.
pub enum GoldenOutcome {
    /// Every case passed.
    Passed,
    /// At least one failed.
    Failed,
}

impl GoldenOutcome {
    /// The process exit status: 0 or 1 (a manifest error is 2, from `main`).
    pub fn exit_code(&self) -> ExitCode {
        match self {
            GoldenOutcome::Passed => ExitCode::SUCCESS,
            GoldenOutcome::Failed => ExitCode::from(1),
        }
    }
}

/// Reads the arguments into the model to play.
fn model_choice(args: &GoldenArgs) -> anyhow::Result<ModelChoice> {
    let choice = match (args.model.as_str(), &args.record) {
        ("stub", None) => ModelChoice::Stub,
        ("openai", None) => ModelChoice::OpenAi,
        ("openai", Some(dir)) => ModelChoice::Record(dir.clone()),
        (other, None) if other.starts_with("replay:") => {
            ModelChoice::Replay(PathBuf::from(&other["replay:".len()..]))
        }
        (_, Some(_)) => bail!("--record needs --model openai (it records a real model)"),
        (other, None) => bail!("unknown --model `{other}`: use stub, openai or replay:DIR"),
    };
    Ok(choice)
}

/// Runs the manifest; `Err` is a usage or manifest error (exit 2).
pub fn run(args: &GoldenArgs, manifest_path: &Path) -> anyhow::Result<GoldenOutcome> {
    let manifest = Manifest::load(manifest_path)?;
    let options = RunOptions {
        model: model_choice(args)?,
        repeat: args.repeat.max(1),
        parallel: args.parallel.max(1),
        tags: args.tags.clone(),
    };
    let n_cases = manifest
        .cases
        .iter()
        .filter(|c| options.tags.is_empty() || c.tags.iter().any(|t| options.tags.contains(t)))
        .count();
    let progress = if std::io::stderr().is_terminal() && !args.json {
        let bar = ProgressBar::new(n_cases as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} cases {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let report = runtime.block_on(run_manifest(&manifest, &options, |case| {
        progress.set_message(case.name.clone());
        progress.inc(1);
    }));
    progress.finish_and_clear();
    let text = if args.json {
        format!("{}\n", report.json())
    } else {
        report.table()
    };
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error of the run.
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            return Err(e).context("writing the report");
        }
        _ => {}
    }
    if let Some(path) = &args.junit {
        std::fs::write(path, report.junit())
            .with_context(|| format!("writing JUnit XML to {}", path.display()))?;
    }
    Ok(if report.n_failed() == 0 {
        GoldenOutcome::Passed
    } else {
        GoldenOutcome::Failed
    })
}
