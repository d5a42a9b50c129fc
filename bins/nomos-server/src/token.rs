//! The operator token a server without configured auth generates on its first start,
//! kept in the data directory (mode 0600) and printed once, the way notebook servers do.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The token file's name in the data directory.
pub const TOKEN_FILE: &str = "operator-token";

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
    // Two v4 UUIDs: 244 random bits from the operating system's generator.
    let secret = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
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
