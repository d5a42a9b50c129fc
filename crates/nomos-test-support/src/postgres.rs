//! A throwaway PostgreSQL 15 server for tests, one per test process, and a fresh
//! database per test.
//!
//! If `NOMOS_TEST_PG_URL` is set (an admin URL exported by `scripts/pg-up.sh`), that
//! server is used. Otherwise the first call starts one from `/usr/lib/postgresql/15/bin`
//! in a temporary directory (as the `postgres` user when running as root, since
//! `initdb` refuses root), on a free loopback port, with fsync off. A detached
//! watchdog stops it and removes its directory once the test process is gone.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use sqlx::Connection;

/// Where the PostgreSQL 15 binaries live on Debian.
pub const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

/// The environment variable naming an already running server.
pub const URL_ENV: &str = "NOMOS_TEST_PG_URL";

/// A running server: its admin URL (database `postgres`).
#[derive(Debug, Clone)]
pub struct Server {
    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub admin_url: String,
    /// The data directory, when this process started the server.
    pub dir: Option<PathBuf>,
}

static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();

/// The shared server, started on first use.
///
/// # Panics
/// When no server is configured and none can be started; the message says why.
pub fn server() -> &'static Server {
    match try_server() {
        Ok(server) => server,
        Err(why) => panic!("cannot start a throwaway PostgreSQL: {why}"),
    }
}

/// The shared server, or why it could not be started (for benches that skip).
pub fn try_server() -> Result<&'static Server, String> {
    SERVER
        .get_or_init(|| match std::env::var(URL_ENV) {
            Ok(url) if !url.is_empty() => Ok(Server {
                admin_url: url,
                dir: None,
            }),
            _ => start(),
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Creates a new, empty, uniquely named database and returns its URL.
///
/// # Panics
/// When the server cannot be started or the database cannot be created.
pub async fn fresh_database() -> String {
    try_fresh_database()
        .await
        .unwrap_or_else(|why| panic!("{why}"))
}

/// Like [`fresh_database`], returning the failure instead of panicking.
pub async fn try_fresh_database() -> Result<String, String> {
    let server = try_server()?;
    let name = format!("nomos_test_{}", uuid::Uuid::new_v4().simple());
    // A connection of its own: each test runs on its own runtime, so no pool is shared.
    let mut admin = sqlx::PgConnection::connect(&server.admin_url)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", server.admin_url))?;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .map_err(|e| format!("cannot create database {name}: {e}"))?;
    admin
        .close()
        .await
        .map_err(|e| format!("closing the admin connection: {e}"))?;
    Ok(with_database(&server.admin_url, &name))
}

/// A server of the caller's own, never shared, for tests that stop and start it under
/// a pool (EXEC-9). The watchdog still removes it once the test process is gone.
///
/// # Panics
/// When the server cannot be started; the message says why.
pub fn private_server() -> Server {
    start().unwrap_or_else(|why| panic!("cannot start a throwaway PostgreSQL: {why}"))
}

/// Stops a server [`private_server`] started (`-m fast`: clients are disconnected, so open
/// connections break the way they do when a database host goes away; `immediate` could
/// lose commits of the last moments, since the throwaway server runs with
/// `synchronous_commit=off`).
///
/// # Panics
/// When the server was not started by this process or `pg_ctl` fails.
pub fn stop(server: &Server) {
    let data = server
        .dir
        .as_ref()
        .expect("a server this process started")
        .join("data");
    let mut pg_ctl = pg_command(is_root(), "pg_ctl");
    pg_ctl
        .arg("-D")
        .arg(&data)
        .args(["-m", "fast", "-w", "stop"]);
    run(&mut pg_ctl, "pg_ctl stop").unwrap_or_else(|why| panic!("{why}"));
}

/// Starts a server [`stop`] stopped again, on the same port with the same options.
///
/// # Panics
/// When `pg_ctl` fails.
pub fn start_again(server: &Server) {
    let dir = server.dir.as_ref().expect("a server this process started");
    let mut pg_ctl = pg_command(is_root(), "pg_ctl");
    // `restart` reuses the options the server last ran with (`postmaster.opts`).
    pg_ctl
        .arg("-D")
        .arg(dir.join("data"))
        .arg("-l")
        .arg(dir.join("server.log"))
        .args(["-w", "-t", "30", "restart"]);
    run(&mut pg_ctl, "pg_ctl restart").unwrap_or_else(|why| panic!("{why}"));
}

/// The same URL with another database name (query string kept).
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let root = match base[authority_end..].find('/') {
        Some(slash) => &base[..authority_end + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{root}/{database}?{query}"),
        None => format!("{root}/{database}"),
    }
}

fn start() -> Result<Server, String> {
    let bin = Path::new(PG_BIN);
    if !bin.join("initdb").exists() {
        return Err(format!("{PG_BIN}/initdb not found (install postgresql-15)"));
    }
    let dir = tempfile::Builder::new()
        .prefix("nomos-pg.")
        .tempdir()
        .map_err(|e| format!("cannot create a temp dir: {e}"))?
        .keep();
    let as_root = is_root();
    if as_root {
        run(
            Command::new("chown").arg("postgres:postgres").arg(&dir),
            "chown",
        )?;
    }
    let data = dir.join("data");
    let port = free_port()?;
    let mut initdb = pg_command(as_root, "initdb");
    initdb.arg("-D").arg(&data).args([
        "-U",
        "postgres",
        "--auth=trust",
        "--no-sync",
        "-E",
        "UTF8",
        "--locale=C.UTF-8",
    ]);
    run(&mut initdb, "initdb")?;
    let options = format!(
        "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
         -c full_page_writes=off -c max_connections=200",
        dir.display()
    );
    let mut pg_ctl = pg_command(as_root, "pg_ctl");
    pg_ctl
        .arg("-D")
        .arg(&data)
        .arg("-l")
        .arg(dir.join("server.log"))
        .args(["-w", "-t", "30", "-o", &options, "start"]);
    run(&mut pg_ctl, "pg_ctl start").map_err(|e| {
        let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
        format!("{e}\nserver log:\n{log}")
    })?;
    spawn_watchdog(as_root, &dir, &data)?;
    Ok(Server {
        admin_url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
        dir: Some(dir),
    })
}

/// Stops the server and removes its directory once this process has exited.
fn spawn_watchdog(as_root: bool, dir: &Path, data: &Path) -> Result<(), String> {
    let stop = if as_root {
        format!(
            "runuser -u postgres -- {PG_BIN}/pg_ctl -D '{}' -m immediate stop",
            data.display()
        )
    } else {
        format!("{PG_BIN}/pg_ctl -D '{}' -m immediate stop", data.display())
    };
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf '{dir}'",
        pid = std::process::id(),
        dir = dir.display(),
    );
    Command::new("setsid")
        .args(["sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| format!("cannot start the server watchdog: {e}"))
}

fn pg_command(as_root: bool, tool: &str) -> Command {
    let path = format!("{PG_BIN}/{tool}");
    if as_root {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--", &path]);
        command
    } else {
        Command::new(path)
    }
}

fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn free_port() -> Result<u16, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot find a free port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_name_is_swapped_keeping_the_query() {
        assert_eq!(
            with_database("postgres://u@h:5/postgres", "x"),
            "postgres://u@h:5/x"
        );
        assert_eq!(
            with_database("postgres://u@h:5/postgres?sslmode=disable", "x"),
            "postgres://u@h:5/x?sslmode=disable"
        );
        assert_eq!(with_database("postgres://u@h:5", "x"), "postgres://u@h:5/x");
    }

    #[tokio::test]
    async fn fresh_databases_are_distinct_and_empty() {
        let a = fresh_database().await;
        let b = fresh_database().await;
        assert_ne!(a, b);
        let mut conn = sqlx::PgConnection::connect(&a).await.unwrap();
        let tables: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
        )
        .fetch_one(&mut conn)
        .await
        .unwrap();
        assert_eq!(tables, 0);
    }
}
