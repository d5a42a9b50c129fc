//! Builds the runtime from a validated [`Config`]: the store (SQLite in the data directory
//! or, with the `postgres` feature, PostgreSQL; migrations run at open), the model (a scripted model from `model.script`, an
//! OpenAI-compatible endpoint, or the scripted demo), the executor over the inventory, the policy, the auth.

use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};

use nomos_agent::{Agent, AgentBuilder, AgentConfig, Clock, SystemClock};
use nomos_core::Span;
use nomos_core::classify::Policy;
use nomos_core::ports::chat::ChatModel;
use nomos_core::ports::store::Store;
use nomos_http::tokens::TokenStore;
use nomos_http::{Auth, MeteredModel, Metrics, Role, StaticToken};
use nomos_llm::{DemoModel, DemoSandbox, OpenAiConfig, OpenAiModel, ScriptedModel};
use nomos_sqlite::SqliteStore;
use nomos_ssh::{FleetExecutor, Inventory, SshConfig};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::env::{llm_configured, llm_lookup};
use crate::config::{AuthSetting, Config, Database};
#[cfg(not(all(feature = "postgres", feature = "oidc")))]
use crate::features::{Feature, NotBuilt};
use crate::token;

/// Other processes' events on a shared PostgreSQL (REPLICA-3); without the `postgres`
/// feature there is none (the type has no values).
#[cfg(feature = "postgres")]
pub type Feed = nomos_postgres::PgEventFeed;
/// Other processes' events on a shared PostgreSQL (REPLICA-3); without the `postgres`
/// feature there is none (the type has no values).
#[cfg(not(feature = "postgres"))]
pub type Feed = std::convert::Infallible;

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
    /// Other processes' events, when the store is shared (REPLICA-3).
    pub feed: Option<Feed>,
}

/// Builds everything; any failure stops start-up with what failed.
pub async fn build(config: &Config) -> anyhow::Result<Runtime> {
    let (agent, metrics, demo, feed) = build_shared_agent(config).await?;
    let (auth, new_token) = auth(config)?;
    Ok(Runtime {
        agent,
        metrics,
        demo,
        auth,
        new_token,
        feed,
    })
}

#[cfg(feature = "mcp")]
/// The agent alone (for `nomos-server mcp`): store, model, executor, policy; no auth.
pub async fn build_agent(config: &Config) -> anyhow::Result<(Agent, Arc<Metrics>, bool)> {
    let (agent, metrics, demo, _feed) = build_shared_agent(config).await?;
    Ok((agent, metrics, demo))
}

/// The agent and, on PostgreSQL, the feed of other processes' events.
async fn build_shared_agent(
    config: &Config,
) -> anyhow::Result<(Agent, Arc<Metrics>, bool, Option<Feed>)> {
    create_data_dir(&config.data_dir)?;
    let (store, shared) = open_store(config).await?;
    let metrics = Arc::new(Metrics::default());
    let (model, demo) = model(config)?;
    let model: Arc<dyn ChatModel> = Arc::new(MeteredModel::new(model, metrics.clone()));
    let inventory = load_inventory(config)?;
    seed_entities(store.as_ref(), &inventory).await?;
    let ssh = SshConfig::new(&config.known_hosts).with_host_key_policy(config.host_key_policy);
    // Demo mode: the tour works in the data directory's sandbox, whose service script a
    // policy rule names (the rule is added to the operator's policy, if any).
    let sandbox = if demo {
        Some(DemoSandbox::in_data_dir(&config.data_dir))
    } else {
        None
    };
    let policy = policy(config, sandbox.as_ref())?.map(Arc::new);
    let mut agent_config = agent_config(config, policy.clone());
    agent_config.approvers = Arc::new(approver_policy(config, &inventory, policy)?);
    let executor = Arc::new(FleetExecutor::new(inventory, ssh));
    let builder = Agent::builder(store, executor, model).config(agent_config);
    let (builder, feed) = match shared {
        Some(shared) => replicate(builder, shared, config),
        None => (builder, None),
    };
    Ok((builder.build(), metrics, demo, feed))
}

/// REPLICA-1..3: the leases, the instance registry and the feed of a shared store.
#[cfg(feature = "postgres")]
fn replicate(
    builder: AgentBuilder,
    shared: Shared,
    config: &Config,
) -> (AgentBuilder, Option<Feed>) {
    let heartbeat_timeout = config
        .sweep
        .heartbeat_timeout
        .map_or(std::time::Duration::from_secs(30), |span| span.to_std());
    let builder = builder.replication(nomos_agent::Replication {
        leases: Arc::new(shared.store.leases(MAX_LEASES)),
        instances: Arc::new(shared.instances),
        heartbeat_timeout,
    });
    (builder, shared.store.event_feed())
}

/// No store is shared without the `postgres` feature.
#[cfg(not(feature = "postgres"))]
fn replicate(
    _builder: AgentBuilder,
    shared: Shared,
    _config: &Config,
) -> (AgentBuilder, Option<Feed>) {
    match shared {}
}

/// REPLICA-3: other processes' events join this process's bus until `stopped` turns true;
/// `None` when the store is not shared.
pub fn start_feed(rt: &Runtime, mut stopped: watch::Receiver<bool>) -> Option<JoinHandle<()>> {
    let feed = rt.feed.as_ref()?;
    #[cfg(not(feature = "postgres"))]
    {
        let _ = &mut stopped;
        match *feed {}
    }
    #[cfg(feature = "postgres")]
    {
        let feed = feed.clone();
        let bus = rt.agent.bus().clone();
        let agent = rt.agent.clone();
        Some(tokio::spawn(async move {
            let deliver = move |record: nomos_core::event::EventRecord| {
                // CONTROL-1: a stop another process recorded for a turn running here.
                agent.hear(&record);
                bus.publish(nomos_agent::LiveEvent::Committed(record));
            };
            let stop = async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            };
            if let Err(error) = feed.run(deliver, stop).await {
                tracing::error!(%error, "other processes' events will not reach this one");
            }
        }))
    }
}

/// How many turns may hold their session's lease at once in one process (each keeps a
/// connection of the lease pool).
#[cfg(feature = "postgres")]
const MAX_LEASES: u32 = 64;

/// A PostgreSQL store shared with other processes (REPLICA-1..3).
#[cfg(feature = "postgres")]
struct Shared {
    store: nomos_postgres::PgStore,
    instances: nomos_postgres::PgInstances,
}

/// No store is shared without the `postgres` feature.
#[cfg(not(feature = "postgres"))]
type Shared = std::convert::Infallible;

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

async fn open_store(config: &Config) -> anyhow::Result<(Arc<dyn Store>, Option<Shared>)> {
    let store: Arc<dyn Store> = match &config.database {
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
        #[cfg(not(feature = "postgres"))]
        Database::Postgres(_) => {
            return Err(NotBuilt::new(Feature::Postgres, "database_url").into());
        }
        #[cfg(feature = "postgres")]
        Database::Postgres(url) => {
            use nomos_postgres::{PgStore, PgStoreOptions};
            // REPLICA-2: this process's connections name it, so what it writes records it.
            let instance = nomos_core::ports::replica::InstanceId(uuid::Uuid::new_v4());
            let store = PgStore::connect_instance(url, PgStoreOptions::standard(), instance)
                .await
                .context("connecting to PostgreSQL")?;
            let instances = store.instances().context("the store names no instance")?;
            tracing::info!(%instance, "on PostgreSQL, shared with any other instance");
            let shared = Shared {
                store: store.clone(),
                instances,
            };
            return Ok((Arc::new(store), Some(shared)));
        }
    };
    Ok((store, None))
}

/// The model: a scripted model when `model.script` is set, else `NOMOS_LLM_*` (or `[llm]`)
/// when set, else the demo (the tour on `<data>/demo/`, or the health check).
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
    let lookup = llm_lookup(&config.llm, |name| std::env::var(name).ok());
    if !llm_configured(&lookup) {
        // Each session plays the demo from its own position (one turn, one whole health
        // check, or the tour when asked for).
        let sandbox = DemoSandbox::in_data_dir(&config.data_dir);
        return Ok((Arc::new(DemoModel::new(sandbox)), true));
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

fn agent_config(config: &Config, policy: Option<Arc<Policy>>) -> AgentConfig {
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
    agent.backup = config.backup.clone();
    agent.canary_tags = config.canary_tags.clone();
    agent.snapshot = config.snapshot;
    let sweep = &config.sweep;
    let set = |value: Option<Span>, default: Span| value.unwrap_or(default);
    agent.sweep.idle_after = set(sweep.idle_after, agent.sweep.idle_after);
    agent.sweep.running_timeout = set(sweep.running_timeout, agent.sweep.running_timeout);
    agent.sweep.startup_stale_after =
        set(sweep.startup_stale_after, agent.sweep.startup_stale_after);
    agent.session.approval_ttl = set(sweep.approval_ttl, agent.session.approval_ttl);
    agent.session.assent_window = set(sweep.assent_window, agent.session.assent_window);
    agent.session.assent_scope = config.assent_scope;
    if let Some(policy) = policy {
        let classifying = Arc::clone(&policy);
        agent.classifier =
            Arc::new(move |command: &str, shell| classifying.classify_in(command, shell));
        // GATE-10: the policy's preview rows on top of the built-in table.
        agent.previewer = Arc::new(move |command: &str| policy.preview_form(command));
    }
    agent
}

/// The operator's policy file and, in demo mode, the tour's rule after it (so an error in
/// the file keeps its line numbers); `None` when there is neither.
fn policy(config: &Config, sandbox: Option<&DemoSandbox>) -> anyhow::Result<Option<Policy>> {
    let Some(sandbox) = sandbox else {
        return config.policy_file.as_deref().map(load_policy).transpose();
    };
    let (mut text, origin) = match &config.policy_file {
        Some(path) => (read_policy(path)?, path.display().to_string()),
        None => (String::new(), "the tour's demo policy".to_owned()),
    };
    text.push_str(&sandbox.policy_toml());
    match Policy::parse(&text, &origin) {
        Ok(policy) => Ok(Some(policy)),
        Err(error) => bail!("the policy file does not load: {error}"),
    }
}

fn read_policy(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path)
        .with_context(|| format!("reading the policy file {}", path.display()))
}

/// AUTHZ-3: the two-person rules over the inventory's tags and the policy file's named
/// rules; a bad rule stops start-up, naming the setting and the policy file.
pub fn approver_policy(
    config: &Config,
    inventory: &Inventory,
    policy: Option<Arc<Policy>>,
) -> anyhow::Result<nomos_core::authz::ApproverPolicy> {
    let tags = inventory
        .hosts()
        .iter()
        .map(|host| (host.slug.clone(), host.tags.clone()))
        .collect();
    let file = match &config.policy_file {
        Some(path) => format!("the policy file {}", path.display()),
        None => "no policy file (policy_file is not set)".to_owned(),
    };
    let commands = policy.unwrap_or_else(|| Arc::new(Policy::empty()));
    nomos_core::authz::ApproverPolicy::with_commands_of(config.approvers.clone(), tags, commands)
        .map_err(|error| match error {
            nomos_core::authz::ApproverPolicyError::UnknownRule { index, name } => anyhow::anyhow!(
                "gate.approvers[{}].rule = {name:?}: {file} has no [[rule]] with name = {name:?}",
                index - 1
            ),
            other => anyhow::anyhow!("gate.approvers: {other}"),
        })
}

/// GATE-8: a policy file that fails to load or check stops start-up.
pub fn load_policy(path: &Path) -> anyhow::Result<Policy> {
    let text = read_policy(path)?;
    match Policy::parse(&text, &path.display().to_string()) {
        Ok(policy) => Ok(policy),
        Err(error) => bail!("the policy file does not load: {error}"),
    }
}

fn auth(config: &Config) -> anyhow::Result<(Auth, Option<String>)> {
    let (mut auth, new_token) = configured_auth(config)?;
    // AUTHZ-1: the tokens `nomos-server token create` and the admin API store (their
    // hashes only), read on every request so a revoked one stops working at once.
    if let Auth::Required { store, .. } = &mut auth {
        let tokens = TokenStore::in_dir(&config.data_dir);
        tokens.tokens().map_err(|e| anyhow::anyhow!("{e}"))?;
        *store = Some(Arc::new(tokens));
    }
    Ok((auth, new_token))
}

fn configured_auth(config: &Config) -> anyhow::Result<(Auth, Option<String>)> {
    Ok(match &config.auth {
        AuthSetting::None => (Auth::Disabled, None),
        AuthSetting::Tokens(tokens) if tokens.is_empty() => {
            let (secret, created) = token::operator_token(&config.data_dir)?;
            let tokens = vec![StaticToken::from_secret(
                "operator",
                &secret,
                Role::Operator,
            )];
            let auth = Auth::Required {
                tokens,
                oidc: None,
                store: None,
            };
            let new_token = if created { Some(secret) } else { None };
            (auth, new_token)
        }
        AuthSetting::Tokens(tokens) => (
            Auth::Required {
                tokens: tokens.clone(),
                oidc: None,
                store: None,
            },
            None,
        ),
        #[cfg(feature = "oidc")]
        AuthSetting::Oidc(oidc, tokens) => (
            Auth::Required {
                tokens: tokens.clone(),
                oidc: Some(Arc::new(nomos_http::Oidc::new((**oidc).clone()))),
                store: None,
            },
            None,
        ),
        #[cfg(not(feature = "oidc"))]
        AuthSetting::Oidc(..) => {
            return Err(NotBuilt::new(Feature::Oidc, "auth.mode = \"oidc\"").into());
        }
    })
}
