//! Crate-local errors for what happens before a model is called: configuration, scripts and
//! recording directories. Failures of a model call are the port's `ModelError`.

use std::path::PathBuf;

/// A setting of [`crate::OpenAiConfig`] is missing or invalid.
///
/// `setting` names the environment variable (`NOMOS_LLM_MODEL`) when the value came from the
/// environment, or the builder field (`base_url`) otherwise. The API key is never part of a
/// message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A required setting has no value.
    #[error("{setting} is not set")]
    Missing {
        /// The variable or field.
        setting: String,
    },
    /// A setting has a value that cannot be used.
    #[error("{setting} is invalid: {problem}")]
    Invalid {
        /// The variable or field.
        setting: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The HTTP client could not be built (for example, no TLS backend).
    #[error("could not build the HTTP client: {0}")]
    Client(String),
}

impl ConfigError {
    pub(crate) fn invalid(setting: &str, problem: impl Into<String>) -> Self {
        ConfigError::Invalid {
            setting: setting.to_owned(),
            problem: problem.into(),
        }
    }
}

/// A script for [`crate::ScriptedModel`] could not be read or makes no sense.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptError {
    /// The script file could not be read.
    #[error("could not read script {path}: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// The YAML is malformed or does not have the shape of a script.
    #[error("script {origin} is not valid: {message}")]
    Yaml {
        /// Where the script came from (a file path or `<inline>`).
        origin: String,
        /// The parser's message, with its line and column when known.
        message: String,
    },
}

/// A [`crate::RecordingModel`] or [`crate::ReplayModel`] could not be set up.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// Recording was asked for while the `CI` environment variable is set.
    #[error(
        "recording model exchanges is refused in CI (the CI environment variable is set); replay existing recordings instead"
    )]
    RefusedInCi,
    /// The recording directory cannot be used.
    #[error("recording directory {path} cannot be used: {message}")]
    Directory {
        /// The directory.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}
