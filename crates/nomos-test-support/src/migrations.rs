//! The migrations the stores embed, as the tests that check schema versions see them.

/// The newest migration number in `migrations/<backend>/` (`sqlite` or `postgres`).
pub fn newest_migration(backend: &str) -> i64 {
    let dir = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../../migrations")
    .join(backend);
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read the migrations in {}: {e}", dir.display()));
    entries
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.split('_').next()?.parse::<i64>().ok()
        })
        .max()
        .unwrap_or_else(|| panic!("no numbered migration in {}", dir.display()))
}
