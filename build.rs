// Rebuild when a migration is added: `sqlx::migrate!` embeds the migrations at compile time.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
