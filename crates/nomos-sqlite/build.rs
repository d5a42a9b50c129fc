//! Rebuilds the crate when its embedded migrations change (`sqlx::migrate!` reads them at
//! compile time).

fn main() {
    println!("cargo:rerun-if-changed=../../migrations/sqlite");
}
