//! Criterion bench: classifying the shipped corpus (CLASSIFY), reported per command.
//!
//! Three groups: the whole corpus with the built-in rules, the same with the example
//! operator policy, and a few typical single commands. Throughput is in commands.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use nomos_classify::corpus::parse_corpus;
use nomos_classify::{Policy, classify};

const CORPUS: &str = include_str!("../../fixtures/classify/corpus.tsv");
const POLICY: &str = include_str!("../../fixtures/classify/policy.example.toml");

fn corpus(c: &mut Criterion) {
    let Ok(entries) = parse_corpus(CORPUS) else {
        return;
    };
    let commands: Vec<&str> = entries.iter().map(|entry| entry.command.as_str()).collect();
    let Ok(policy) = Policy::parse(POLICY, "policy.example.toml") else {
        return;
    };

    let mut group = c.benchmark_group("classify_corpus");
    group.throughput(Throughput::Elements(commands.len() as u64));
    group.bench_function("built_in", |b| {
        b.iter(|| {
            for command in &commands {
                black_box(classify(black_box(command)));
            }
        });
    });
    group.bench_function("with_policy", |b| {
        b.iter(|| {
            for command in &commands {
                black_box(policy.classify(black_box(command)));
            }
        });
    });
    group.finish();

    let mut group = c.benchmark_group("classify_one");
    group.throughput(Throughput::Elements(1));
    for command in [
        "docker compose logs --tail=100 web",
        "ls -la /etc",
        "sudo -u root bash -c 'systemctl restart nginx && journalctl -u nginx -n 50'",
        "find /var/log -name '*.gz' -mtime +30 -exec rm {} \\;",
    ] {
        group.bench_with_input(
            BenchmarkId::from_parameter(command),
            command,
            |b, command| {
                b.iter(|| black_box(classify(black_box(command))));
            },
        );
    }
    group.finish();
}

criterion_group!(benches, corpus);
criterion_main!(benches);
