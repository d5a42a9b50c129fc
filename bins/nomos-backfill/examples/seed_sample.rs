//! Seeds a sample database with stuck sessions of every kind, idle for ten days, for
//! trying the backfill by hand:
//!
//! ```text
//! cargo run -p nomos-backfill --example seed_sample -- ./sample.db 16
//! ```

#[path = "../../../fixtures/backfill/seed.rs"]
mod seed;

use anyhow::Context;
use nomos_backfill::{Backend, SchemaPolicy, open_store};
use nomos_core::{Span, Timestamp};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(|| "./sample.db".to_owned());
    let n: usize = match args.next() {
        Some(text) => text
            .parse()
            .with_context(|| format!("the session count `{text}` is not a number"))?,
        None => 16,
    };
    // The tool refuses a missing SQLite file; a sample starts as an empty one.
    if Backend::of(&url) == Backend::Sqlite && !std::path::Path::new(&url).exists() {
        std::fs::File::create(&url).with_context(|| format!("creating {url}"))?;
    }
    let store = open_store(&url, SchemaPolicy::Migrate)
        .await
        .with_context(|| format!("opening {url}"))?;
    let now = Timestamp::from(chrono::Utc::now());
    let t0 = now - Span::from_mins(10 * 24 * 60 + 60);
    let seeded = seed::seed(store.as_ref(), n, t0).await;
    for s in &seeded {
        println!("{}  {:?}", s.id, s.kind);
    }
    eprintln!("seeded {} session(s) into {url}", seeded.len());
    Ok(())
}
