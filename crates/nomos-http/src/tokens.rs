//! The named tokens of a data directory (AUTHZ-1): `tokens.toml` (mode 0600) keeps each
//! token's name, role and SHA-256, never the token itself.
//!
//! [`TokenStore`] is the one owner of that file: `nomos-server token create|list|revoke`
//! and the admin API (`/api/tokens`) both write through it, and authentication reads
//! through it on every request, re-reading the file when it changed, so a token revoked by
//! either stops working at once, without a restart.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::auth::{Role, StaticToken, token_sha256_hex};

/// The file's name in the data directory.
pub const TOKENS_FILE: &str = "tokens.toml";

/// Why the token store refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum TokenStoreError {
    /// The name is empty or not one word of letters, digits, `-`, `_` and `.`.
    #[error("a token name must be 1 to 64 letters, digits, '-', '_' or '.', got {0:?}")]
    BadName(String),
    /// The name is taken.
    #[error("a token named {0} exists already; choose another name")]
    Exists(String),
    /// No token has that name.
    #[error("no token is named {0}")]
    NotFound(String),
    /// The file could not be read, parsed or written.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// One named token as listed: never the token itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenEntry {
    /// Its name (the principal it authenticates as).
    pub name: String,
    /// Its role.
    pub role: Role,
}

/// `tokens.toml`.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredTokens {
    #[serde(default)]
    token: Vec<StoredToken>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredToken {
    name: String,
    sha256: String,
    role: String,
}

/// What the store last read, and the file's state when it did.
#[derive(Debug, Default)]
struct Cached {
    stamp: Option<(SystemTime, u64)>,
    tokens: Vec<StaticToken>,
}

/// The token file of one data directory.
#[derive(Debug)]
pub struct TokenStore {
    path: PathBuf,
    cache: Mutex<Cached>,
}

impl TokenStore {
    /// The store of `data_dir` (the file need not exist yet).
    pub fn in_dir(data_dir: &Path) -> TokenStore {
        TokenStore {
            path: data_dir.join(TOKENS_FILE),
            cache: Mutex::default(),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The tokens, for authentication: read again when the file changed since the last
    /// read (its modification time or length), so a change by another process counts at
    /// once.
    pub fn tokens(&self) -> Result<Vec<StaticToken>, TokenStoreError> {
        let stamp = std::fs::metadata(&self.path)
            .ok()
            .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if stamp.is_none() {
            *cache = Cached::default();
            return Ok(Vec::new());
        }
        if cache.stamp != stamp {
            let tokens = self.parse(&self.read()?)?;
            *cache = Cached { stamp, tokens };
        }
        Ok(cache.tokens.clone())
    }

    /// The tokens by name and role, in the order they were made.
    pub fn list(&self) -> Result<Vec<TokenEntry>, TokenStoreError> {
        Ok(self
            .tokens()?
            .into_iter()
            .map(|t| TokenEntry {
                name: t.name,
                role: t.role,
            })
            .collect())
    }

    /// Makes a new token named `name` with `role`, keeps its hash and returns the token,
    /// to be shown once. A name already taken is refused.
    pub fn create(&self, name: &str, role: Role) -> Result<String, TokenStoreError> {
        let name = name.trim();
        if !valid_name(name) {
            return Err(TokenStoreError::BadName(name.to_owned()));
        }
        let mut stored = self.read()?;
        if stored.token.iter().any(|t| t.name == name) {
            return Err(TokenStoreError::Exists(name.to_owned()));
        }
        let secret = new_secret();
        stored.token.push(StoredToken {
            name: name.to_owned(),
            sha256: token_sha256_hex(&secret),
            role: role.as_str().to_owned(),
        });
        self.write(&stored)?;
        Ok(secret)
    }

    /// Revokes the token named `name`: it stops authenticating at once.
    pub fn revoke(&self, name: &str) -> Result<TokenEntry, TokenStoreError> {
        let mut stored = self.read()?;
        let Some(idx) = stored.token.iter().position(|t| t.name == name) else {
            return Err(TokenStoreError::NotFound(name.to_owned()));
        };
        let removed = stored.token.remove(idx);
        self.write(&stored)?;
        let role = removed.role.parse().map_err(|e: String| self.error(e))?;
        Ok(TokenEntry {
            name: removed.name,
            role,
        })
    }

    fn error(&self, message: impl Into<String>) -> TokenStoreError {
        TokenStoreError::File {
            path: self.path.clone(),
            message: message.into(),
        }
    }

    fn read(&self) -> Result<StoredTokens, TokenStoreError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => toml::from_str(&text).map_err(|e| self.error(e.message().to_owned())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                Ok(StoredTokens::default())
            }
            Err(error) => Err(self.error(error.to_string())),
        }
    }

    fn parse(&self, stored: &StoredTokens) -> Result<Vec<StaticToken>, TokenStoreError> {
        let mut tokens = Vec::with_capacity(stored.token.len());
        for entry in &stored.token {
            let role: Role = entry
                .role
                .parse()
                .map_err(|e: String| self.error(format!("token {}: {e}", entry.name)))?;
            let token = StaticToken::from_hex(&entry.name, &entry.sha256, role)
                .map_err(|e| self.error(format!("token {}: {e}", entry.name)))?;
            tokens.push(token);
        }
        Ok(tokens)
    }

    /// Writes the whole list to a private file beside the real one, then renames it over,
    /// so a reader sees the old list or the new one, never half of one.
    fn write(&self, stored: &StoredTokens) -> Result<(), TokenStoreError> {
        let text = toml::to_string(stored).map_err(|e| self.error(e.to_string()))?;
        let partial = self.path.with_extension("toml.partial");
        let _ = std::fs::remove_file(&partial);
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&partial)
            .map_err(|e| self.error(format!("creating {}: {e}", partial.display())))?;
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| self.error(format!("writing {}: {e}", partial.display())))?;
        std::fs::rename(&partial, &self.path).map_err(|e| self.error(e.to_string()))?;
        // The next read sees the new list even when the clock did not move.
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).stamp = None;
        Ok(())
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Two v4 UUIDs: 244 random bits from the operating system's generator.
pub fn new_secret() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    // rule: AUTHZ-1
    #[test]
    fn a_created_token_is_stored_only_as_its_hash_and_a_revoked_one_is_gone_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::in_dir(dir.path());
        let secret = store.create("claude-code", Role::Agent).unwrap();
        assert_eq!(secret.len(), 64);
        let text = std::fs::read_to_string(store.path()).unwrap();
        assert!(!text.contains(&secret), "{text}");
        assert!(text.contains(&token_sha256_hex(&secret)), "{text}");
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            store.tokens().unwrap(),
            [StaticToken::from_secret(
                "claude-code",
                &secret,
                Role::Agent
            )]
        );
        let again = store.create("claude-code", Role::Agent).unwrap_err();
        assert!(again.to_string().contains("exists already"), "{again}");
        assert!(matches!(
            store.create("two words", Role::Agent),
            Err(TokenStoreError::BadName(_))
        ));
        store.create("alice", Role::Operator).unwrap();
        let names: Vec<String> = store.list().unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["claude-code", "alice"]);

        // A second store on the same file (another process) sees the revocation.
        let other = TokenStore::in_dir(dir.path());
        assert_eq!(other.tokens().unwrap().len(), 2);
        assert_eq!(
            store.revoke("claude-code").unwrap(),
            TokenEntry {
                name: "claude-code".to_owned(),
                role: Role::Agent
            }
        );
        let left: Vec<String> = other
            .tokens()
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(left, ["alice"]);
        assert!(matches!(
            store.revoke("claude-code"),
            Err(TokenStoreError::NotFound(_))
        ));
    }
}
