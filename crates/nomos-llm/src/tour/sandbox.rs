//! The tour's sandbox: a fake application under `<data>/demo/` (a config file, a service
//! script, a log directory with old logs), the commands the tour runs on it, and the policy
//! rule that tells the classifier what the service script is.
//!
//! Every path the tour's commands name is inside the sandbox directory, and the service
//! script writes only its own log: the tour never touches anything outside `<data>/demo/`.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The sandbox directory's name inside the data directory.
pub const DEMO_DIR: &str = "demo";

/// The demo config's `workers` line before the tour.
const WORKERS_BEFORE: &str = "workers = 2";

/// The same line after the tour's `sed -i`.
pub(crate) const WORKERS_AFTER: &str = "workers = 4";

const APP_CONF: &str = "\
# demo-app: a fake application of the Nomos tour. Nothing reads this file but
# demo/service.sh; the tour changes it with sed -i after the operator approves.
listen = 127.0.0.1:8080
workers = 2
log_level = info
";

const SERVICE_SH: &str = r#"#!/bin/sh
# demo-app's service script, a stand-in for a service manager in the Nomos tour.
# It writes nothing but its own log, next to it.
set -eu
here=$(dirname "$0")
case "${1:-}" in
restart)
    workers=$(sed -n 's/^workers = //p' "$here/app.conf")
    echo "demo-app restarted with $workers workers" >>"$here/logs/app.log"
    echo "demo-app stopped; demo-app started with $workers workers"
    ;;
status)
    echo "demo-app is running with $(sed -n 's/^workers = //p' "$here/app.conf") workers"
    ;;
*)
    echo "usage: service.sh restart|status" >&2
    exit 2
    ;;
esac
"#;

/// The old logs the tour deletes, in `logs/`.
const OLD_LOGS: [&str; 2] = ["app.log.1", "app.log.2"];

/// The sandbox of one data directory. Building one does no I/O; [`DemoSandbox::reset`]
/// writes its files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemoSandbox {
    dir: PathBuf,
}

impl DemoSandbox {
    /// The sandbox of the data directory `data_dir`: `<data_dir>/demo/`.
    pub fn in_data_dir(data_dir: &Path) -> DemoSandbox {
        DemoSandbox {
            dir: data_dir.join(DEMO_DIR),
        }
    }

    /// The sandbox directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The demo app's config file.
    pub fn config(&self) -> PathBuf {
        self.dir.join("app.conf")
    }

    /// The demo app's service script.
    pub fn service(&self) -> PathBuf {
        self.dir.join("service.sh")
    }

    /// The demo app's log directory.
    pub fn logs(&self) -> PathBuf {
        self.dir.join("logs")
    }

    /// Writes the sandbox as the tour starts from it: the config with `workers = 2`, the
    /// service script (mode 0755), the current log and two old ones. Files the tour left
    /// behind are overwritten; nothing outside the sandbox directory is written.
    pub fn reset(&self) -> io::Result<()> {
        std::fs::create_dir_all(self.logs())?;
        std::fs::write(self.config(), APP_CONF)?;
        let service = self.service();
        std::fs::write(&service, SERVICE_SH)?;
        std::fs::set_permissions(&service, std::fs::Permissions::from_mode(0o755))?;
        std::fs::write(
            self.logs().join("app.log"),
            "demo-app started with 2 workers\n",
        )?;
        for (idx, name) in OLD_LOGS.iter().enumerate() {
            std::fs::write(
                self.logs().join(name),
                format!("an old log of demo-app, rotated {} days ago\n", idx + 1),
            )?;
        }
        Ok(())
    }

    /// The change the tour makes: `workers = 2` to `workers = 4` in the config.
    pub fn edit_command(&self) -> String {
        format!(
            "sed -i 's/^{WORKERS_BEFORE}$/{WORKERS_AFTER}/' {}",
            quote(&self.config())
        )
    }

    /// The restart of the demo service.
    pub fn restart_command(&self) -> String {
        format!("{} restart", quote(&self.service()))
    }

    /// The deletion of the demo's old logs (destructive: it gets its own approval).
    pub fn delete_logs_command(&self) -> String {
        let paths: Vec<String> = OLD_LOGS
            .iter()
            .map(|name| quote(&self.logs().join(name)))
            .collect();
        format!("rm {}", paths.join(" "))
    }

    /// A policy file's rule (GATE-8) for the service script: a program nobody knows
    /// (CLASSIFY-7) would need its own approval even when the plan declares it, so the
    /// rule, with its examples, makes `service.sh restart` of this sandbox a
    /// `config_mutation` that the plan's approval covers. Nothing else is made less strict.
    pub fn policy_toml(&self) -> String {
        let service = self.service().display().to_string();
        let restart = self.restart_command();
        let status = format!("{} status", quote(&self.service()));
        format!(
            "\n# The tour's demo service (demo mode only).\n\
             [[rule]]\n\
             prefix = [{service}, \"restart\"]\n\
             class = \"config_mutation\"\n\
             reason = \"the tour's demo service script writes only its own log\"\n\
             match = [{restart}]\n\
             not_match = [{status}]\n",
            service = toml_string(&service),
            restart = toml_string(&restart),
            status = toml_string(&status),
        )
    }
}

/// A path as one shell word: bare when it has only safe characters, else single-quoted.
fn quote(path: &Path) -> String {
    let text = path.display().to_string();
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        return text;
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A TOML basic string (JSON's escapes are TOML's).
fn toml_string(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_writes_the_sandbox_only_under_demo() {
        let data = tempfile::tempdir().unwrap();
        let sandbox = DemoSandbox::in_data_dir(data.path());
        sandbox.reset().unwrap();
        let top: Vec<String> = std::fs::read_dir(data.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(top, vec![DEMO_DIR.to_owned()]);
        let config = std::fs::read_to_string(sandbox.config()).unwrap();
        assert!(config.contains("\nworkers = 2\n"), "{config}");
        let mode = std::fs::metadata(sandbox.service())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        // A second reset puts the tour's changes back.
        std::fs::write(sandbox.config(), "workers = 4\n").unwrap();
        std::fs::remove_file(sandbox.logs().join("app.log.1")).unwrap();
        sandbox.reset().unwrap();
        assert!(sandbox.logs().join("app.log.1").exists());
        assert_eq!(std::fs::read_to_string(sandbox.config()).unwrap(), APP_CONF);
    }

    #[test]
    fn commands_quote_a_data_dir_with_spaces() {
        let sandbox = DemoSandbox::in_data_dir(Path::new("/srv/my data"));
        assert_eq!(
            sandbox.restart_command(),
            "'/srv/my data/demo/service.sh' restart"
        );
        assert_eq!(
            sandbox.edit_command(),
            "sed -i 's/^workers = 2$/workers = 4/' '/srv/my data/demo/app.conf'"
        );
        let plain = DemoSandbox::in_data_dir(Path::new("/var/lib/nomos"));
        assert_eq!(
            plain.delete_logs_command(),
            "rm /var/lib/nomos/demo/logs/app.log.1 /var/lib/nomos/demo/logs/app.log.2"
        );
    }
}
