//! Embeds the SQLite migrations: writes the table `src/open.rs` includes, and rebuilds the
//! crate when a migration changes.

#[path = "../nomos-store-sql/build_support/embed_migrations.rs"]
mod embed_migrations;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    embed_migrations::write("../../migrations/sqlite")
}
