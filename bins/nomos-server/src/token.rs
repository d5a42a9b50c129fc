//! Tokens kept in the data directory: the operator token a server without configured auth
//! generates on its first start (mode 0600, printed once, the way notebook servers do), and
//! the `nomos-server token create|list|revoke` commands over the named tokens (AUTHZ-1),
//! whose file `nomos_http::tokens::TokenStore` owns.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use nomos_http::Role;
use nomos_http::tokens::TokenStore;

use crate::config::Config;

/// The token file's name in the data directory.
pub const TOKEN_FILE: &str = "operator-token";

/// `nomos-server token create`: prints the new token on stdout, and how to use it on stderr.
pub fn create_command(config: &Config, role: &str, name: &str) -> ExitCode {
    let role: Role = match role.parse() {
        Ok(role) => role,
        Err(error) => {
            eprintln!("nomos-server: --role: {error}");
            return ExitCode::from(crate::EXIT_CONFIG);
        }
    };
    let store = TokenStore::in_dir(&config.data_dir);
    let made = crate::runtime::create_data_dir(&config.data_dir)
        .and_then(|()| store.create(name, role).map_err(anyhow::Error::from));
    match made {
        Ok(secret) => {
            println!("{secret}");
            eprintln!(
                "token {} ({}) created; only its hash is kept in {}. It is shown once: copy it now.",
                name.trim(),
                role.as_str(),
                store.path().display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => failed(&error),
    }
}

/// `nomos-server token list`: one `NAME ROLE` line per named token.
pub fn list_command(config: &Config) -> ExitCode {
    match TokenStore::in_dir(&config.data_dir).list() {
        Ok(tokens) => {
            for token in tokens {
                println!("{}\t{}", token.name, token.role.as_str());
            }
            ExitCode::SUCCESS
        }
        Err(error) => failed(&error.into()),
    }
}

/// `nomos-server token revoke NAME`: the token stops working at once, also in a running
/// server.
pub fn revoke_command(config: &Config, name: &str) -> ExitCode {
    match TokenStore::in_dir(&config.data_dir).revoke(name) {
        Ok(token) => {
            eprintln!(
                "token {} ({}) revoked; it no longer authenticates",
                token.name,
                token.role.as_str()
            );
            ExitCode::SUCCESS
        }
        Err(error) => failed(&error.into()),
    }
}

fn failed(error: &anyhow::Error) -> ExitCode {
    eprintln!("nomos-server: {error:#}");
    ExitCode::FAILURE
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
    let secret = nomos_http::tokens::new_secret();
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
}
