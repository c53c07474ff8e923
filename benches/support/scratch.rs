//! Scratch databases for the benchmarks: a SQLite file in a temporary directory, or a database of
//! its own on the PostgreSQL server of `RECUR_TEST_POSTGRES_URL`, dropped again when the
//! benchmark is done with it (a million-row run leaves gigabytes otherwise). Shared by the
//! benchmark binaries through `#[path]`.

use recur::store::Backend;
use sqlx::{Connection, Executor};

/// One benchmark's database; call [`ScratchDatabase::remove`] when done with it.
pub struct ScratchDatabase {
    /// The URL recur and the raw loops connect to.
    pub url: String,
    /// PostgreSQL: the admin URL and the database's name, to drop it.
    postgres: Option<(String, String)>,
    /// SQLite: the directory holding the file, deleted with it.
    _dir: Option<tempfile::TempDir>,
}

impl ScratchDatabase {
    /// A fresh, empty database for `backend`; `tag` names it in `pg_database` listings.
    pub async fn create(backend: Backend, tag: &str) -> Self {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                Self {
                    url: format!("sqlite://{}/{tag}.sqlite3?mode=rwc", dir.path().display()),
                    postgres: None,
                    _dir: Some(dir),
                }
            }
            Backend::Postgres => {
                let admin = std::env::var("RECUR_TEST_POSTGRES_URL")
                    .expect("RECUR_TEST_POSTGRES_URL is needed for the PostgreSQL benchmark");
                // The creation time in the name lets scripts/postgres.sh drop the database should
                // the benchmark be interrupted before `remove`.
                let name = format!(
                    "recur_t_{}_bench_{tag}_{}",
                    chrono::Utc::now().timestamp(),
                    recur::ids::prefixed("", 6).to_lowercase()
                );
                let mut conn = sqlx::PgConnection::connect(&admin).await.expect("connect");
                conn.execute(format!("CREATE DATABASE {name}").as_str())
                    .await
                    .expect("create database");
                conn.close().await.ok();
                let (base, _) = admin.rsplit_once('/').expect("URL with a database");
                Self {
                    url: format!("{base}/{name}"),
                    postgres: Some((admin, name)),
                    _dir: None,
                }
            }
        }
    }

    /// Drops the database (PostgreSQL) or deletes the SQLite file. `FORCE` closes connections
    /// the benchmark left open, but may not end an autovacuum worker (another role's process,
    /// busy for seconds on a freshly seeded million rows); the drop is tried again for up to ten
    /// seconds. A database that still cannot be dropped is reported and left to
    /// scripts/postgres.sh's sweep: the measurements are what matters here.
    pub async fn remove(self) {
        let Some((admin, name)) = &self.postgres else {
            return;
        };
        let drop_once = || async {
            let mut conn = sqlx::PgConnection::connect(admin).await?;
            let dropped = conn
                .execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str())
                .await;
            conn.close().await.ok();
            dropped.map(|_| ())
        };
        for attempt in 1..=10 {
            match drop_once().await {
                Ok(()) => return,
                Err(error) if attempt == 10 => {
                    eprintln!("could not drop the benchmark database {name}: {error}");
                }
                Err(_) => tokio::time::sleep(std::time::Duration::from_secs(1)).await,
            }
        }
    }
}
