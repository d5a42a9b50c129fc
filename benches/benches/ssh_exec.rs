//! SSH executor bench: pooled russh channels against one `ssh` client process per
//! command, and parallel channels on one connection, against a loopback sshd.
//!
//! `cargo bench -p nomos-benches --bench ssh_exec` runs 100 commands per series;
//! under `cargo test --benches` it runs 5, to prove the bench works. It prints the
//! ratio of the `ssh` client's time to the pooled executor's.

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nomos_core::ports::exec::{ExecLimits, Executor};
use nomos_core::time::Span;
use nomos_ssh::{Inventory, SshConfig, SshExecutor};
use nomos_test_support::sshd::Sshd;

const HOST: &str = "host:bench";
const PARALLEL: usize = 20;

fn main() {
    let full = std::env::args().any(|arg| arg == "--bench");
    let n = if full { 100 } else { 5 };
    // Room for 20 sessions on one connection (OpenSSH's default is 10).
    let sshd = Sshd::start_with_config("MaxSessions 32");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("ssh_exec: no tokio runtime: {error}"),
    };
    let executor = executor(&sshd);
    let limits = ExecLimits::with_timeout(Span::from_secs(30));

    runtime.block_on(async {
        let first = Instant::now();
        run(&executor, limits).await;
        let connect = first.elapsed();

        let pooled = time(n, || async { run(&executor, limits).await }).await;

        let sequential_batch = Instant::now();
        for _ in 0..PARALLEL {
            run(&executor, limits).await;
        }
        let sequential_batch = sequential_batch.elapsed();
        let parallel = Instant::now();
        let calls: Vec<_> = (0..PARALLEL)
            .map(|_| {
                let executor = executor.clone();
                tokio::spawn(async move { run(&executor, limits).await })
            })
            .collect();
        for call in calls {
            if let Err(error) = call.await {
                panic!("ssh_exec: parallel call failed: {error}");
            }
        }
        let parallel = parallel.elapsed();
        let stats = executor.stats();

        let client = time_blocking(n, || ssh_client_true(&sshd));

        println!("ssh_exec: loopback OpenSSH sshd, `true`, {n} sequential commands per series");
        println!("  first command (connect + auth + exec): {}", ms(connect));
        println!(
            "  pooled executor:  {} total, {} per command",
            ms(pooled),
            ms(pooled / n as u32)
        );
        println!(
            "  ssh client:       {} total, {} per command",
            ms(client),
            ms(client / n as u32)
        );
        println!(
            "  ratio ssh client / pooled executor: {:.1}x",
            client.as_secs_f64() / pooled.as_secs_f64()
        );
        println!(
            "  {PARALLEL} commands on one connection: {} in parallel, {} one after another ({:.1}x)",
            ms(parallel),
            ms(sequential_batch),
            sequential_batch.as_secs_f64() / parallel.as_secs_f64()
        );
        println!(
            "  pool: {} connection(s), {} channels",
            stats.connects, stats.channels
        );
        assert_eq!(stats.connects, 1, "the pool should have used one connection");
    });
}

fn executor(sshd: &Sshd) -> SshExecutor {
    let text = format!(
        "[[host]]\nslug='{HOST}'\naddress='127.0.0.1'\nport={}\nuser='root'\nkey_file='{}'\n",
        sshd.port,
        sshd.client_key_path.display()
    );
    let inventory = match Inventory::parse(&text, "bench.toml") {
        Ok(inventory) => inventory,
        Err(error) => panic!("ssh_exec: {error}"),
    };
    let config = SshConfig::new(&sshd.known_hosts_path).with_max_channels(PARALLEL + 4);
    SshExecutor::new(Arc::new(inventory), config)
}

async fn run(executor: &SshExecutor, limits: ExecLimits) {
    match executor.run(HOST, "true", limits).await {
        Ok(output) if output.exit_code == Some(0) => {}
        other => panic!("ssh_exec: `true` did not succeed: {other:?}"),
    }
}

async fn time<F, Fut>(n: usize, mut f: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let started = Instant::now();
    for _ in 0..n {
        f().await;
    }
    started.elapsed()
}

fn time_blocking(n: usize, mut f: impl FnMut()) -> Duration {
    let started = Instant::now();
    for _ in 0..n {
        f();
    }
    started.elapsed()
}

fn ssh_client_true(sshd: &Sshd) {
    let status = Command::new("ssh")
        .arg("-i")
        .arg(&sshd.client_key_path)
        .arg("-p")
        .arg(sshd.port.to_string())
        .args(["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes"])
        .arg("-o")
        .arg(format!(
            "UserKnownHostsFile={}",
            sshd.known_hosts_path.display()
        ))
        .args(["root@127.0.0.1", "true"])
        .status();
    match status {
        Ok(status) if status.success() => {}
        other => panic!("ssh_exec: the ssh client failed: {other:?}"),
    }
}

fn ms(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}
