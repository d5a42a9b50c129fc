//! Builds the runtime from a validated [`Config`]: the store (SQLite in the data directory
//! or Postgres; migrations run at open), the model (a scripted model from `model.script`, an
//! OpenAI-compatible endpoint, or the scripted demo), the executor over the inventory, the policy, the auth.

use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use nomos_agent::{Agent, AgentConfig, Clock, SystemClock};
use nomos_core::Span;
use nomos_core::classify::Policy;
use nomos_core::ports::chat::ChatModel;
use nomos_core::ports::store::Store;
use nomos_http::{Auth, MeteredModel, Metrics, Oidc, Role, StaticToken};
use nomos_llm::{OpenAiConfig, OpenAiModel, ScriptedModel};
use nomos_postgres::PgStore;
use nomos_sqlite::SqliteStore;
use nomos_ssh::{FleetExecutor, Inventory, SshConfig};

use crate::config::{AuthSetting, Config, Database};
use crate::token;

/// What `main` serves.
pub struct Runtime {
    /// The agent.
    pub agent: Agent,
    /// The metrics registry the model reports into.
    pub metrics: Arc<Metrics>,
    /// Whether the demo model answers.
    pub demo: bool,
    /// How callers authenticate.
    pub auth: Auth,
    /// A token generated on this start, to print once.
    pub new_token: Option<String>,
}

/// Builds everything; any failure stops start-up with what failed.
pub async fn build(config: &Config) -> anyhow::Result<Runtime> {
    let (agent, metrics, demo) = build_agent(config).await?;
    let (auth, new_token) = auth(config)?;
    Ok(Runtime {
        agent,
        metrics,
        demo,
        auth,
        new_token,
    })
}

/// The agent alone (for `nomos-server mcp`): store, model, executor, policy; no auth.
pub async fn build_agent(config: &Config) -> anyhow::Result<(Agent, Arc<Metrics>, bool)> {
    create_data_dir(&config.data_dir)?;
    let store = open_store(config).await?;
    let metrics = Arc::new(Metrics::default());
    let (model, demo) = model(config)?;
    let model: Arc<dyn ChatModel> = Arc::new(MeteredModel::new(model, metrics.clone()));
    let inventory = load_inventory(config)?;
    seed_entities(store.as_ref(), &inventory).await?;
    let ssh = SshConfig::new(&config.known_hosts).with_host_key_policy(config.host_key_policy);
    let executor = Arc::new(FleetExecutor::new(inventory, ssh));
    let agent_config = agent_config(config)?;
    let agent = Agent::builder(store, executor, model)
        .config(agent_config)
        .build();
    Ok((agent, metrics, demo))
}

/// Creates the data directory private to the user (0700); an existing one keeps its mode.
pub fn create_data_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("creating the data directory {}", dir.display()))
}

/// The configured inventory, or one with only `local`.
pub fn load_inventory(config: &Config) -> anyhow::Result<Inventory> {
    match &config.inventory {
        Some(path) => Inventory::load(path).context("loading the inventory"),
        None => Inventory::parse("[[host]]\nslug = \"local\"\n", "built-in inventory")
            .context("building the built-in inventory"),
    }
}

async fn open_store(config: &Config) -> anyhow::Result<Arc<dyn Store>> {
    Ok(match &config.database {
        Database::SqliteInDataDir => Arc::new(
            SqliteStore::open_in_data_dir(&config.data_dir)
                .await
                .context("opening the SQLite database in the data directory")?,
        ),
        Database::Sqlite(url) => Arc::new(
            SqliteStore::open(url)
                .await
                .context("opening the SQLite database")?,
        ),
        Database::Postgres(url) => Arc::new(
            PgStore::connect(url)
                .await
                .context("connecting to PostgreSQL")?,
        ),
    })
}

/// The model: a scripted model when `model.script` is set, else `NOMOS_LLM_*` (or `[llm]`)
/// when set, else the demo.
pub fn model(config: &Config) -> anyhow::Result<(Arc<dyn ChatModel>, bool)> {
    if let Some(path) = &config.model_script {
        // The error names the file and, for bad YAML, the line.
        let script = match ScriptedModel::from_yaml_file(path) {
            Ok(script) => script,
            Err(error) => bail!("loading the model script (model.script): {error}"),
        };
        tracing::info!(path = %path.display(), "a scripted model answers (model.script)");
        return Ok((Arc::new(script), false));
    }
    let file = &config.llm;
    let lookup = |name: &str| -> Result<String, std::env::VarError> {
        if let Ok(value) = std::env::var(name) {
            return Ok(value);
        }
        let fallback = match name {
            "NOMOS_LLM_BASE_URL" => file.base_url.clone(),
            "NOMOS_LLM_MODEL" => file.model.clone(),
            "NOMOS_LLM_API_KEY" => file.api_key.clone(),
            "NOMOS_LLM_REPLY_DEADLINE_SECS" => file.reply_deadline_secs.map(|s| s.to_string()),
            _ => None,
        };
        fallback.ok_or(std::env::VarError::NotPresent)
    };
    let configured = lookup("NOMOS_LLM_BASE_URL").is_ok() || lookup("NOMOS_LLM_MODEL").is_ok();
    if !configured {
        return Ok((Arc::new(ScriptedModel::demo()), true));
    }
    let openai = OpenAiConfig::from_env_with(lookup).context("configuring the model endpoint")?;
    let model = OpenAiModel::new(openai).context("configuring the model endpoint")?;
    Ok((Arc::new(model), false))
}

async fn seed_entities(store: &dyn Store, inventory: &Inventory) -> anyhow::Result<()> {
    let now = SystemClock.now();
    for entity in inventory.entities(now) {
        // Keep what the agent already wrote back about a known host.
        if store.entity(&entity.slug).await?.is_none() {
            store.upsert_entity(&entity).await?;
        }
    }
    Ok(())
}

fn agent_config(config: &Config) -> anyhow::Result<AgentConfig> {
    let mut agent = AgentConfig::spec_defaults();
    agent.sweep_interval = config.sweep_interval;
    if let Some(prompt) = &config.system_prompt {
        agent.system_prompt = prompt.clone();
    }
    if let Some(tokens) = config.context_tokens {
        agent.context_tokens = tokens;
    }
    if let Some(bytes) = config.model_output_bytes {
        agent.model_output_bytes = bytes;
    }
    let secs =
        |value: Option<u64>, default: Span| value.map_or(default, |s| Span::from_secs(s as i64));
    let sweep = &config.sweep;
    agent.sweep.idle_after = secs(sweep.idle_secs, agent.sweep.idle_after);
    agent.sweep.running_timeout = secs(sweep.running_timeout_secs, agent.sweep.running_timeout);
    agent.sweep.startup_stale_after =
        secs(sweep.startup_stale_secs, agent.sweep.startup_stale_after);
    agent.session.approval_ttl = secs(sweep.approval_ttl_secs, agent.session.approval_ttl);
    agent.session.assent_window = secs(sweep.assent_window_secs, agent.session.assent_window);
    agent.session.assent_scope = config.assent_scope;
    if let Some(path) = &config.policy_file {
        let policy = load_policy(path)?;
        agent.classifier = Arc::new(move |command: &str| policy.classify(command));
    }
    Ok(agent)
}

/// GATE-8: a policy file that fails to load or check stops start-up.
pub fn load_policy(path: &Path) -> anyhow::Result<Policy> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the policy file {}", path.display()))?;
    match Policy::parse(&text, &path.display().to_string()) {
        Ok(policy) => Ok(policy),
        Err(error) => bail!("the policy file does not load: {error}"),
    }
}

fn auth(config: &Config) -> anyhow::Result<(Auth, Option<String>)> {
    Ok(match &config.auth {
        AuthSetting::None => (Auth::Disabled, None),
        AuthSetting::Tokens(tokens) if tokens.is_empty() => {
            let (secret, created) = token::operator_token(&config.data_dir)?;
            let tokens = vec![StaticToken::from_secret(
                "operator",
                &secret,
                Role::Operator,
            )];
            let auth = Auth::Required { tokens, oidc: None };
            let new_token = if created { Some(secret) } else { None };
            (auth, new_token)
        }
        AuthSetting::Tokens(tokens) => (
            Auth::Required {
                tokens: tokens.clone(),
                oidc: None,
            },
            None,
        ),
        AuthSetting::Oidc(oidc, tokens) => (
            Auth::Required {
                tokens: tokens.clone(),
                oidc: Some(Arc::new(Oidc::new((**oidc).clone()))),
            },
            None,
        ),
    })
}
