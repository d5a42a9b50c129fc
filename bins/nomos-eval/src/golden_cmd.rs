//! `nomos-eval --manifest FILE`: the golden-eval runner's command line (EVAL-1..3).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use nomos_golden::manifest::Manifest;
use nomos_golden::run::ModelChoice;
use nomos_golden::{CaseSelection, RunOptions, run_manifest};
use nomos_llm::OpenAiConfig;

/// Options of the golden runner.
#[derive(Debug, Args)]
pub struct GoldenArgs {
    /// The manifest of golden conversations (YAML).
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,
    /// `stub` (the scripted replies, default; every case), `openai` (an OpenAI-compatible
    /// endpoint from NOMOS_LLM_BASE_URL, NOMOS_LLM_MODEL, NOMOS_LLM_API_KEY; only `model: any`
    /// cases) or `replay:DIR` (only `model: any` cases).
    #[arg(long, default_value = "stub", value_name = "MODEL")]
    pub model: String,
    /// Record every exchange with the real model into DIR (refused when CI is set).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Run each case N times; the report gives each case's pass rate.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: u32,
    /// The share of a case's runs that must pass for the case to pass (0 to 1).
    #[arg(long, default_value_t = 1.0, value_name = "R")]
    pub min_pass_rate: f64,
    /// Cases running at once.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub parallel: usize,
    /// Each run's time limit in seconds, in place of each case's own (a real model on a
    /// small machine needs minutes per case).
    #[arg(long, value_name = "SECS")]
    pub case_timeout: Option<u64>,
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
        ("openai", None) => ModelChoice::OpenAi(endpoint()?),
        ("openai", Some(dir)) => ModelChoice::Record(endpoint()?, dir.clone()),
        (other, None) if other.starts_with("replay:") => {
            ModelChoice::Replay(PathBuf::from(&other["replay:".len()..]))
        }
        (_, Some(_)) => bail!("--record needs --model openai (it records a real model)"),
        (other, None) => bail!("unknown --model `{other}`: use stub, openai or replay:DIR"),
    };
    Ok(choice)
}

/// The endpoint `--model openai` talks to, or a usage message saying how to name one.
fn endpoint() -> anyhow::Result<OpenAiConfig> {
    OpenAiConfig::from_env().map_err(|err| {
        anyhow::anyhow!(
            "--model openai needs an endpoint: set NOMOS_LLM_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama), NOMOS_LLM_MODEL and, if the server wants one, NOMOS_LLM_API_KEY ({err})"
        )
    })
}

/// Runs the manifest; `Err` is a usage or manifest error (exit 2).
pub fn run(args: &GoldenArgs, manifest_path: &Path) -> anyhow::Result<GoldenOutcome> {
    let manifest = Manifest::load(manifest_path)?;
    if !(0.0..=1.0).contains(&args.min_pass_rate) {
        bail!(
            "--min-pass-rate must be between 0 and 1, got {}",
            args.min_pass_rate
        );
    }
    if args.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    if args.case_timeout == Some(0) {
        bail!("--case-timeout must be at least 1 second");
    }
    // EVAL-5: a tag that selects nothing is a mistake, not an empty success.
    for tag in &args.tags {
        if !manifest.cases.iter().any(|c| c.tags.contains(tag)) {
            bail!("--tag {tag}: no case in {} has it", manifest_path.display());
        }
    }
    let model = model_choice(args)?;
    let options = RunOptions {
        cases: CaseSelection::for_model(&model),
        model,
        repeat: args.repeat,
        min_pass_rate: args.min_pass_rate,
        parallel: args.parallel.max(1),
        tags: args.tags.clone(),
        case_timeout: args.case_timeout.map(std::time::Duration::from_secs),
    };
    let n_cases = options.select(&manifest).len();
    if n_cases == 0 {
        bail!(
            "no case to run: the chosen tags and model select none (a real model runs only `model: any` cases)"
        );
    }
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
    // EVAL-7: an unapproved change or an open turn fails the run whatever the pass rates.
    Ok(if report.n_failed() == 0 && !report.breaks_oversight() {
        GoldenOutcome::Passed
    } else {
        GoldenOutcome::Failed
    })
}
