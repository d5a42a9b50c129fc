//! Shared by the build scripts of `nomos-sqlite` and `nomos-postgres`: lists a migrations
//! directory as a Rust table of `(version, description, include_str!(file))`, the way sqlx's
//! resolver reads it (`<VERSION>_<DESCRIPTION>.sql`, underscores read as spaces), so the
//! stores embed their migrations without sqlx's `migrate!` macro and the second build of sqlx
//! and its drivers for the host that the macro needs.

use std::error::Error;
use std::path::Path;

/// Writes `$OUT_DIR/migrations.rs` with `MIGRATION_FILES` for the directory `dir` (relative
/// to the crate), and asks cargo to run the script again when the directory changes.
pub fn write(dir: &str) -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed={dir}");
    let manifest = std::env::var("CARGO_MANIFEST_DIR")?;
    let out = std::env::var("OUT_DIR")?;
    let root = Path::new(&manifest).join(dir).canonicalize()?;
    let mut rows = Vec::new();
    for entry in std::fs::read_dir(&root)? {
        let path = entry?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            return Err(
                format!("{}: a migration's file name must be UTF-8", path.display()).into(),
            );
        };
        let Some((version, rest)) = name.split_once('_') else {
            continue;
        };
        let Some(description) = rest.strip_suffix(".sql") else {
            continue;
        };
        if description.ends_with(".up") || description.ends_with(".down") {
            return Err(format!("{name}: reversible migrations are not supported").into());
        }
        let version: i64 = version.parse().map_err(|_| {
            format!("{name}: a migration's name starts with its integer version (0001_init.sql)")
        })?;
        let file = path.to_str().ok_or("a migration's path must be UTF-8")?;
        rows.push((version, description.replace('_', " "), file.to_owned()));
    }
    rows.sort();
    let mut text = format!("/// The migrations of `{dir}`, in version order.\n");
    text.push_str("pub(crate) const MIGRATION_FILES: &[(i64, &str, &str)] = &[\n");
    for (version, description, file) in &rows {
        text.push_str(&format!(
            "    ({version}, {description:?}, include_str!({file:?})),\n"
        ));
    }
    text.push_str("];\n");
    std::fs::write(Path::new(&out).join("migrations.rs"), text)?;
    Ok(())
}
