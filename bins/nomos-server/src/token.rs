//! Tokens kept in the data directory: the operator token a server without configured auth
//! generates on its first start (mode 0600, printed once, the way notebook servers do), and
//! the named tokens `nomos-server token create` makes (AUTHZ-1), of which `tokens.toml`
//! (mode 0600) keeps only the SHA-256, the name and the role.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use nomos_http::{Role, StaticToken};
use serde::{Deserialize, Serialize};

/// The token file's name in the data directory.
pub const TOKEN_FILE: &str = "operator-token";

/// The file of named tokens' hashes in the data directory.
pub const TOKENS_FILE: &str = "tokens.toml";

/// `tokens.toml`.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredTokens {
    #[serde(default)]
    token: Vec<StoredToken>,
}

/// One named token: never the token itself.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredToken {
    name: String,
    sha256: String,
    role: String,
}

fn read_stored(data_dir: &Path) -> anyhow::Result<StoredTokens> {
    let path = data_dir.join(TOKENS_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).with_context(|| format!("reading {}", path.display())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(StoredTokens::default()),
        Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
    }
}

/// The named tokens of the data directory, for the server's auth.
pub fn stored_tokens(data_dir: &Path) -> anyhow::Result<Vec<StaticToken>> {
    let stored = read_stored(data_dir)?;
    let mut tokens = Vec::with_capacity(stored.token.len());
    for entry in stored.token {
        let role: Role = entry
            .role
            .parse()
            .map_err(|e: String| anyhow::anyhow!("{TOKENS_FILE}: token {}: {e}", entry.name))?;
        let token = StaticToken::from_hex(&entry.name, &entry.sha256, role)
            .map_err(|e| anyhow::anyhow!("{TOKENS_FILE}: token {}: {e}", entry.name))?;
        tokens.push(token);
    }
    Ok(tokens)
}

/// AUTHZ-1: makes a new token named `name` with `role`, stores its hash (never the token)
/// in `tokens.toml` and returns the token, to be shown once. A name already taken is
/// refused.
pub fn create_token(data_dir: &Path, name: &str, role: Role) -> anyhow::Result<String> {
    let name = name.trim();
    if name.is_empty() {
        anyhow::bail!("a token needs a name (--name)");
    }
    let mut stored = read_stored(data_dir)?;
    if stored.token.iter().any(|t| t.name == name) {
        anyhow::bail!("a token named {name} exists already; choose another name");
    }
    let secret = new_secret();
    stored.token.push(StoredToken {
        name: name.to_owned(),
        sha256: nomos_http::auth::token_sha256_hex(&secret),
        role: role.as_str().to_owned(),
    });
    let text = toml::to_string(&stored).context("writing the token list")?;
    let path = data_dir.join(TOKENS_FILE);
    let partial = data_dir.join(format!("{TOKENS_FILE}.partial"));
    let _ = std::fs::remove_file(&partial);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&partial)
        .with_context(|| format!("creating {}", partial.display()))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, &path).with_context(|| format!("replacing {}", path.display()))?;
    Ok(secret)
}

/// Two v4 UUIDs: 244 random bits from the operating system's generator.
fn new_secret() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// Where the token lives.
pub fn token_path(data_dir: &Path) -> PathBuf {
    data_dir.join(TOKEN_FILE)
}

/// Reads the stored token, or creates one; `true` when it was created now.
pub fn operator_token(data_dir: &Path) -> anyhow::Result<(String, bool)> {
    let path = token_path(data_dir);
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => return Ok((text.trim().to_owned(), false)),
        Ok(_) => anyhow::bail!(
            "the token file {} is empty; delete it to get a new token",
            path.display()
        ),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => {
            return Err(error)
                .with_context(|| format!("reading the token file {}", path.display()));
        }
    }
    let secret = new_secret();
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("creating the token file {}", path.display()))?;
    file.write_all(secret.as_bytes())
        .and_then(|()| file.write_all(b"\n"))
        .with_context(|| format!("writing the token file {}", path.display()))?;
    Ok((secret, true))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn the_first_start_creates_a_private_token_and_later_starts_reuse_it() {
        let dir = tempfile::tempdir().unwrap();
        let (first, created) = operator_token(dir.path()).unwrap();
        assert!(created);
        assert_eq!(first.len(), 64);
        let mode = std::fs::metadata(token_path(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let (again, created) = operator_token(dir.path()).unwrap();
        assert!(!created);
        assert_eq!(again, first);
    }

    // rule: AUTHZ-1
    #[test]
    fn a_created_token_is_stored_only_as_its_hash_and_authenticates_with_its_role() {
        let dir = tempfile::tempdir().unwrap();
        let secret = create_token(dir.path(), "claude-code", Role::Agent).unwrap();
        assert_eq!(secret.len(), 64);
        let path = dir.path().join(TOKENS_FILE);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains(&secret),
            "the token itself is not stored: {text}"
        );
        assert!(
            text.contains(&nomos_http::auth::token_sha256_hex(&secret)),
            "{text}"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let tokens = stored_tokens(dir.path()).unwrap();
        assert_eq!(tokens.len(), 1);
        assert_eq!(tokens[0].name, "claude-code");
        assert_eq!(tokens[0].role, Role::Agent);
        assert_eq!(
            tokens[0],
            StaticToken::from_secret("claude-code", &secret, Role::Agent)
        );
        let again = create_token(dir.path(), "claude-code", Role::Agent).unwrap_err();
        assert!(again.to_string().contains("exists already"), "{again}");
        create_token(dir.path(), "alice", Role::Operator).unwrap();
        assert_eq!(stored_tokens(dir.path()).unwrap().len(), 2);
    }
}
