//! Configuration in steps, each in its own file: [`raw`] gathers raw values from
//! `nomos.toml`, [`env`](mod@env) lays the `NOMOS_*` environment over them (flags come last, in
//! `main.rs`; each later source wins), and [`validate`] turns them into a typed
//! [`Config`] or a [`ConfigError`] naming the key, the value and why. Unknown keys in the
//! file are an error naming them and their line.
//!
//! A new setting: its raw key in `raw.rs`, its variable (if any) in `env.rs`, its typed
//! field and check in `validate.rs`.

pub mod env;
pub mod raw;
pub mod validate;

use std::path::PathBuf;

pub use raw::RawConfig;
pub use validate::{AuthSetting, Config, Database, LogFormat};

/// Why the configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has an unknown key (the message names key and line).
    #[error("{path}: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A value is not acceptable.
    #[error("invalid {key} = {value:?}: {reason}")]
    Invalid {
        /// The setting (`listen`, `NOMOS_LISTEN`, `auth.tokens[0].sha256`...).
        key: String,
        /// The value given.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// A setting needs an optional part this binary was built without.
    #[error(transparent)]
    NotBuilt(#[from] crate::features::NotBuilt),
}

/// A value refused, naming the key and why.
pub(crate) fn invalid(
    key: &str,
    value: impl Into<String>,
    reason: impl Into<String>,
) -> ConfigError {
    ConfigError::Invalid {
        key: key.to_owned(),
        value: value.into(),
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use nomos_core::Span;

    use super::*;
    use crate::features::{Built, Feature, NotBuilt};

    /// Validated as for a binary with every optional part, whatever this one has.
    fn check(toml: &str) -> Result<Config, ConfigError> {
        check_for(toml, Built::ALL)
    }

    fn check_for(toml: &str, built: Built) -> Result<Config, ConfigError> {
        Config::validate_for(RawConfig::parse(toml, Path::new("nomos.toml"))?, built)
    }

    #[test]
    fn a_setting_for_a_part_not_built_in_stops_start_up_naming_the_setting_and_the_feature() {
        let cases = [
            (
                "database_url = \"postgres://u:pw@localhost/db\"",
                "database_url",
                Feature::Postgres,
            ),
            (
                "[telemetry]\notlp_endpoint = \"http://127.0.0.1:4318\"",
                "telemetry.otlp_endpoint",
                Feature::Otlp,
            ),
            (OIDC, "auth.mode = \"oidc\"", Feature::Oidc),
        ];
        for (toml, setting, feature) in cases {
            let err = check_for(toml, Built::NONE).unwrap_err();
            let ConfigError::NotBuilt(NotBuilt {
                setting: named,
                feature: needed,
            }) = &err
            else {
                panic!("{toml}: expected NotBuilt, got {err:?}");
            };
            assert_eq!((named.as_str(), *needed), (setting, feature));
            let text = err.to_string();
            assert!(
                text.ends_with(&format!(
                    "rebuild it with the `{feature}` feature (cargo run --release -p nomos-server --features {feature})"
                )),
                "{text}"
            );
            assert!(!text.contains("pw"), "{text}");
            assert!(check_for(toml, Built::ALL).is_ok(), "{toml}");
        }
        // What the first build has needs no feature: SQLite, static tokens, no export.
        let config = check_for("database_url = \"sqlite:x.db\"", Built::NONE).unwrap();
        assert_eq!(config.database, Database::Sqlite("sqlite:x.db".to_owned()));
        // A bad value is still named as such, not as a missing feature.
        let err = check_for("[telemetry]\notlp_endpoint = \"otel\"", Built::NONE).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid telemetry.otlp_endpoint"),
            "{err}"
        );
    }

    #[test]
    fn this_binary_refuses_exactly_the_settings_of_the_parts_it_lacks() {
        let raw = RawConfig::parse(
            "database_url = \"postgres://u@localhost/db\"",
            Path::new("f"),
        )
        .unwrap();
        assert_eq!(
            Config::validate(raw).is_ok(),
            Built::THIS.has(Feature::Postgres)
        );
    }

    #[test]
    fn the_example_file_is_valid_and_gives_the_defaults() {
        let config = check(include_str!("../../../../nomos.example.toml")).unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:8092");
        assert_eq!(config.sweep_interval, Span::from_mins(5));
    }

    // rule: FLEET-5
    #[test]
    fn fleet_5_canary_tags_are_read_and_an_empty_one_is_refused_by_its_index() {
        let config = check("[agent]\ncanary_tags = [\"prod\", \"tag:db\"]\n").unwrap();
        assert_eq!(config.canary_tags, vec!["prod".to_owned(), "db".to_owned()]);
        let err = check("[agent]\ncanary_tags = [\"prod\", \" \"]\n").unwrap_err();
        assert!(err.to_string().contains("agent.canary_tags[1]"), "{err}");
    }

    // rule: TURN-9
    // rule: SAFE-2
    #[test]
    fn the_backup_root_and_caps_are_read_and_a_relative_root_is_refused() {
        let config = check(
            "[agent]\nbackup_root = \"/srv/nomos-backup\"\nbackup_max_mib = 64\nbackup_max_age_days = 7\n",
        )
        .unwrap();
        assert_eq!(config.backup.root, "/srv/nomos-backup");
        assert_eq!(config.backup.max_kib, 64 * 1024);
        assert_eq!(config.backup.max_age_days, 7);
        let err = check("[agent]\nbackup_root = \"backup\"\n").unwrap_err();
        assert!(err.to_string().contains("agent.backup_root"), "{err}");
    }

    // rule: SAFE-1
    #[test]
    fn the_snapshots_kept_per_guest_are_read_and_at_least_one() {
        assert_eq!(check("").unwrap().snapshot.keep, 3);
        let config = check("[agent]\nsnapshot_keep = 5\n").unwrap();
        assert_eq!(config.snapshot.keep, 5);
        let err = check("[agent]\nsnapshot_keep = 0\n").unwrap_err();
        assert!(err.to_string().contains("agent.snapshot_keep"), "{err}");
    }

    #[test]
    fn the_context_size_and_the_models_share_of_a_result_are_read_and_bounded() {
        let config =
            check("[llm]\ncontext_tokens = 32768\n[agent]\nmodel_output_bytes = 4096\n").unwrap();
        assert_eq!(config.context_tokens, Some(32768));
        assert_eq!(config.model_output_bytes, Some(4096));
        let err = check("[llm]\ncontext_tokens = 100\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid llm.context_tokens = \"100\": must be at least 2048"
        );
    }

    // rule: GATE-9
    #[test]
    fn the_assent_scope_defaults_to_declared_and_a_bad_one_is_named() {
        use nomos_core::declared::AssentScope;
        assert_eq!(check("").unwrap().assent_scope, AssentScope::Declared);
        let config = check("[gate]\nassent_scope = \"window\"\n").unwrap();
        assert_eq!(config.assent_scope, AssentScope::Window);
        let err = check("[gate]\nassent_scope = \"loose\"\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid gate.assent_scope = \"loose\": expected declared or window"
        );
    }

    // rule: AUTHZ-3
    #[test]
    fn two_person_rules_are_read_from_gate_approvers_and_a_bad_class_is_named() {
        use nomos_core::CommandClass;
        let config =
            check("[[gate.approvers]]\nclass = \"destructive\"\ntag = \"prod\"\napprovers = 2\n")
                .unwrap();
        assert_eq!(config.approvers.len(), 1);
        assert_eq!(config.approvers[0].class, Some(CommandClass::Destructive));
        assert_eq!(config.approvers[0].tag.as_deref(), Some("prod"));
        assert_eq!(config.approvers[0].approvers, 2);
        let err = check("[[gate.approvers]]\nclass = \"scary\"\napprovers = 2\n").unwrap_err();
        assert!(err.to_string().contains("gate.approvers[0].class"), "{err}");
    }

    // rule: AUTHZ-3
    #[test]
    fn a_two_person_rule_selects_a_named_policy_rules_commands_and_an_unknown_name_is_named() {
        use std::sync::Arc;

        use nomos_core::CommandClass;
        use nomos_core::classify::Policy;
        let config = check(
            "policy_file = \"/etc/nomos/policy.toml\"\n[[gate.approvers]]\nrule = \"restart-db\"\napprovers = 2\n",
        )
        .unwrap();
        assert_eq!(config.approvers[0].rule.as_deref(), Some("restart-db"));
        let inventory = crate::runtime::load_inventory(&config).unwrap();
        let named = Policy::parse(
            "[[rule]]\nname = \"restart-db\"\nprefix = [\"systemctl\", \"restart\", \"postgresql\"]\nclass = \"destructive\"\nreason = \"the database\"\n",
            "/etc/nomos/policy.toml",
        )
        .unwrap();
        let approvers =
            crate::runtime::approver_policy(&config, &inventory, Some(Arc::new(named))).unwrap();
        let class = CommandClass::Destructive;
        assert_eq!(
            approvers.required_for(class, &["local"], "sudo systemctl restart postgresql"),
            2
        );
        assert_eq!(
            approvers.required_for(class, &["local"], "systemctl restart nginx"),
            1
        );
        let err = crate::runtime::approver_policy(&config, &inventory, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "gate.approvers[0].rule = \"restart-db\": the policy file /etc/nomos/policy.toml has no [[rule]] with name = \"restart-db\""
        );
    }

    // rule: AUTHZ-4
    #[test]
    fn the_otlp_endpoint_is_read_from_telemetry_and_a_bad_one_is_named() {
        let config = check("[telemetry]\notlp_endpoint = \"http://127.0.0.1:4318\"\n").unwrap();
        assert_eq!(
            config.otlp_logs_url.as_deref(),
            Some("http://127.0.0.1:4318/v1/logs")
        );
        assert_eq!(check("").unwrap().otlp_logs_url, None);
        let err = check("[telemetry]\notlp_endpoint = \"https://otel:4318\"\n").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid telemetry.otlp_endpoint = \"https://otel:4318\""),
            "{err}"
        );
    }

    // rule: AUTHZ-4
    #[test]
    fn channels_are_read_from_notify_and_a_webhook_without_a_secret_is_named() {
        use nomos_http::channels::Channel;
        let config = check(
            "[notify]\nbase_url = \"https://nomos.example\"\n[[notify.channels]]\nkind = \"webhook\"\nurl = \"http://127.0.0.1:9/hook\"\nsecret = \"k\"\n[[notify.channels]]\nkind = \"ntfy\"\nurl = \"https://ntfy.example\"\ntopic = \"ops\"\n[[notify.channels]]\nkind = \"slack\"\nurl = \"https://hooks.example/T/B/x\"\n",
        )
        .unwrap();
        assert_eq!(
            config.notify_base_url.as_deref(),
            Some("https://nomos.example")
        );
        assert_eq!(config.channels.len(), 3);
        assert!(matches!(&config.channels[1], Channel::Ntfy { topic, .. } if topic == "ops"));
        let err = check("[[notify.channels]]\nkind = \"webhook\"\nurl = \"http://127.0.0.1:9/\"\n")
            .unwrap_err();
        assert!(
            err.to_string().contains("notify.channels[0].secret"),
            "{err}"
        );
    }

    // rule: AUTHZ-1
    #[test]
    fn a_static_token_may_have_the_agent_role_and_an_unknown_role_is_named() {
        let hash = "0".repeat(64);
        let config = check(&format!(
            "[[auth.tokens]]\nname = \"claude-code\"\nsha256 = \"{hash}\"\nrole = \"agent\"\n"
        ))
        .unwrap();
        let AuthSetting::Tokens(tokens) = config.auth else {
            panic!("static tokens expected");
        };
        assert_eq!(tokens[0].role, nomos_http::Role::Agent);
        let err = check(&format!(
            "[[auth.tokens]]\nname = \"x\"\nsha256 = \"{hash}\"\nrole = \"root\"\n"
        ))
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("expected operator, viewer or agent"),
            "{err}"
        );
    }

    // rule: TURN-12
    #[test]
    fn the_reply_deadline_is_read_from_the_llm_table() {
        let config = check("[llm]\nreply_deadline_secs = 30").unwrap();
        assert_eq!(config.llm.reply_deadline_secs, Some(30));
        assert_eq!(check("").unwrap().llm.reply_deadline_secs, None);
    }

    #[test]
    fn an_empty_file_gives_the_defaults() {
        let config = check("").unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:8092");
        assert_eq!(config.data_dir, PathBuf::from("./data"));
        assert_eq!(config.database, Database::SqliteInDataDir);
        assert!(matches!(config.auth, AuthSetting::Tokens(ref t) if t.is_empty()));
    }

    #[test]
    fn an_unknown_key_is_named_with_its_line() {
        let err = check("listen = \"127.0.0.1:1\"\nlisten_adress = \"x\"\n").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("listen_adress"), "{text}");
        assert!(text.contains("line 2"), "{text}");
    }

    #[test]
    fn a_bad_value_names_key_value_and_reason() {
        let err = check("listen = \"localhost\"").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid listen = \"localhost\": expected IP:PORT such as 127.0.0.1:8092"
        );
    }

    #[test]
    fn no_auth_is_refused_on_a_non_loopback_address() {
        let err = check("listen = \"0.0.0.0:8092\"\n[auth]\nmode = \"none\"").unwrap_err();
        assert!(err.to_string().contains("loopback"), "{err}");
        assert!(check("[auth]\nmode = \"none\"").is_ok());
    }

    #[test]
    fn a_token_hash_that_is_not_sha256_is_refused() {
        let err = check("[[auth.tokens]]\nname = \"a\"\nsha256 = \"abc\"").unwrap_err();
        assert!(err.to_string().contains("auth.tokens[0].sha256"), "{err}");
    }

    #[test]
    fn environment_overrides_the_file() {
        let mut raw = RawConfig::parse("listen = \"127.0.0.1:1\"", Path::new("f")).unwrap();
        raw.apply_env(|name| (name == "NOMOS_LISTEN").then(|| "127.0.0.1:2".to_owned()));
        assert_eq!(Config::validate(raw).unwrap().listen.port(), 2);
    }

    #[test]
    fn a_postgres_url_switches_the_store() {
        let config = check("database_url = \"postgres://u@localhost/db\"").unwrap();
        assert!(matches!(config.database, Database::Postgres(_)));
        let err = check("database_url = \"mysql://u:pw@host/db\"").unwrap_err();
        assert!(!err.to_string().contains("pw"), "{err}");
    }

    const OIDC: &str = "[auth]\nmode = \"oidc\"\n[auth.oidc]\nissuer = \"https://id.example\"\n\
                        audience = \"nomos\"\njwks_url = \"https://id.example/jwks\"\n";

    #[test]
    fn oidc_client_settings_come_from_the_file() {
        let text = format!(
            "{OIDC}client_id = \"nomos-web\"\nauthorization_endpoint = \"https://id.example/auth\"\n\
             token_endpoint = \"https://id.example/token\"\nscope = \"openid\"\n"
        );
        let config = check(&text).unwrap();
        let AuthSetting::Oidc(oidc, _) = config.auth else {
            panic!("expected oidc, got {:?}", config.auth);
        };
        let client = oidc.client.unwrap();
        assert_eq!(client.client_id, "nomos-web");
        assert_eq!(client.authorization_endpoint, "https://id.example/auth");
        assert_eq!(client.token_endpoint, "https://id.example/token");
        assert_eq!(client.scope.as_deref(), Some("openid"));
    }

    #[test]
    fn oidc_without_client_settings_has_no_sign_in_client() {
        let AuthSetting::Oidc(oidc, _) = check(OIDC).unwrap().auth else {
            panic!("expected oidc");
        };
        assert_eq!(oidc.client, None);
    }

    #[test]
    fn a_partial_oidc_client_names_what_is_missing() {
        let err = check(&format!("{OIDC}client_id = \"nomos-web\"\n")).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("authorization_endpoint, token_endpoint"),
            "{text}"
        );
        let err = check(&format!(
            "{OIDC}client_id = \"c\"\nauthorization_endpoint = \"id.example/auth\"\n\
             token_endpoint = \"https://id.example/token\"\n"
        ))
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid auth.oidc.authorization_endpoint = \"id.example/auth\""),
            "{err}"
        );
    }

    #[test]
    fn oidc_settings_come_from_the_environment() {
        let mut raw = RawConfig::parse("[auth]\nmode = \"oidc\"", Path::new("f")).unwrap();
        raw.apply_env(|name| {
            let value = match name {
                "NOMOS_OIDC_ISSUER" => "https://id.example",
                "NOMOS_OIDC_AUDIENCE" => "nomos",
                "NOMOS_OIDC_JWKS_URL" => "https://id.example/jwks",
                "NOMOS_OIDC_CLIENT_ID" => "from-env",
                "NOMOS_OIDC_AUTHORIZATION_ENDPOINT" => "https://id.example/auth",
                "NOMOS_OIDC_TOKEN_ENDPOINT" => "https://id.example/token",
                _ => return None,
            };
            Some(value.to_owned())
        });
        let AuthSetting::Oidc(oidc, _) = Config::validate_for(raw, Built::ALL).unwrap().auth else {
            panic!("expected oidc");
        };
        assert_eq!(oidc.issuer, "https://id.example");
        assert_eq!(oidc.client.unwrap().client_id, "from-env");
    }

    #[test]
    fn oidc_without_an_issuer_names_the_key() {
        let err = check("[auth]\nmode = \"oidc\"\n[auth.oidc]\naudience = \"n\"").unwrap_err();
        assert!(
            err.to_string().starts_with("invalid auth.oidc.issuer"),
            "{err}"
        );
    }

    #[test]
    fn a_model_script_comes_from_the_file_or_the_environment() {
        let config = check("[model]\nscript = \"replies.yaml\"").unwrap();
        assert_eq!(config.model_script, Some(PathBuf::from("replies.yaml")));
        assert_eq!(check("").unwrap().model_script, None);
        let mut raw = RawConfig::parse("[model]\nscript = \"a.yaml\"", Path::new("f")).unwrap();
        raw.apply_env(|name| (name == "NOMOS_MODEL_SCRIPT").then(|| "b.yaml".to_owned()));
        let config = Config::validate(raw).unwrap();
        assert_eq!(config.model_script, Some(PathBuf::from("b.yaml")));
    }

    #[test]
    fn a_system_prompt_file_replaces_the_shipped_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("soul.md");
        std::fs::write(&path, "You are a careful operator.\n").unwrap();
        let text = format!(
            "[agent]\nsystem_prompt_file = {:?}",
            path.display().to_string()
        );
        let config = check(&text).unwrap();
        assert_eq!(
            config.system_prompt.as_deref(),
            Some("You are a careful operator.\n")
        );
        assert_eq!(check("").unwrap().system_prompt, None);
    }

    #[test]
    fn a_missing_system_prompt_file_stops_start_up_naming_it() {
        let mut raw = RawConfig::default();
        raw.apply_env(|name| {
            (name == "NOMOS_SYSTEM_PROMPT_FILE").then(|| "/nonexistent/soul.md".to_owned())
        });
        let err = Config::validate(raw).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "invalid agent.system_prompt_file = \"/nonexistent/soul.md\": cannot read it:"
            ),
            "{err}"
        );
    }

    #[test]
    fn an_empty_or_unreadable_system_prompt_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.md");
        std::fs::write(&empty, "  \n").unwrap();
        let text = format!(
            "[agent]\nsystem_prompt_file = {:?}",
            empty.display().to_string()
        );
        let err = check(&text).unwrap_err().to_string();
        assert!(err.ends_with("the file is empty"), "{err}");
        // A directory cannot be read as text.
        let text = format!(
            "[agent]\nsystem_prompt_file = {:?}",
            dir.path().display().to_string()
        );
        let err = check(&text).unwrap_err().to_string();
        assert!(err.contains("cannot read it"), "{err}");
    }
}
