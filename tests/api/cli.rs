//! The `recur` binary as an operator uses it.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn recur(data_dir: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_recur"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("RECUR_DATA_DIR", data_dir)
        .env("RECUR_LOG", "warn");
    command
}

#[test]
fn merchant_create_prints_one_json_object_and_rotate_replaces_the_secret() {
    let dir = tempfile::tempdir().unwrap();
    let migrate = recur(dir.path()).arg("migrate").output().unwrap();
    assert!(
        migrate.status.success(),
        "{}",
        String::from_utf8_lossy(&migrate.stderr)
    );
    let out = recur(dir.path())
        .args(["merchant", "create", "--name", "Acme Corp", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let created: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for field in [
        "userName",
        "password",
        "processorKey",
        "merchantSecret",
        "webhookSigningSecret",
    ] {
        assert!(
            created[field].as_str().is_some_and(|v| !v.is_empty()),
            "{field}"
        );
    }
    assert!(created["merchantId"].is_i64());
    assert_eq!(created["sandbox"], true);
    assert!(created["webhookSigningSecret"]
        .as_str()
        .unwrap()
        .starts_with("whsec_"));
    let live: serde_json::Value = serde_json::from_slice(
        &recur(dir.path())
            .args(["merchant", "create", "--name", "Live", "--live", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(live["sandbox"], false);

    let user_name = created["userName"].as_str().unwrap();
    let rotated = recur(dir.path())
        .args([
            "merchant",
            "rotate-secret",
            "--user-name",
            user_name,
            "--json",
        ])
        .output()
        .unwrap();
    assert!(rotated.status.success());
    let rotated: serde_json::Value = serde_json::from_slice(&rotated.stdout).unwrap();
    assert_ne!(rotated["merchantSecret"], created["merchantSecret"]);
    let missing = recur(dir.path())
        .args(["merchant", "rotate-secret", "--user-name", "nobody"])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    // Nothing secret is kept in the clear in the database file.
    let db = std::fs::read(dir.path().join("recur.sqlite3")).unwrap();
    for secret in [
        &created["password"],
        &created["merchantSecret"],
        &rotated["merchantSecret"],
        &created["webhookSigningSecret"],
    ] {
        let secret = secret.as_str().unwrap().as_bytes();
        assert!(
            !db.windows(secret.len()).any(|w| w == secret),
            "secret stored in clear"
        );
    }
}

#[test]
fn serve_creates_the_demo_merchant_once_and_announces_its_address() {
    let dir = tempfile::tempdir().unwrap();
    let start = |dir: &std::path::Path| {
        let mut child = recur(dir)
            .arg("serve")
            .env("RECUR_LISTEN", "127.0.0.1:0")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut seen = Vec::new();
        let addr = loop {
            let line = lines.next().expect("serve printed its address").unwrap();
            if let Some(addr) = line.strip_prefix("listening on http://") {
                break addr.to_string();
            }
            seen.push(line);
        };
        (child, addr, seen.join("\n"))
    };
    let (mut child, addr, banner) = start(dir.path());
    assert!(
        banner.contains("userName:") && banner.contains("password:"),
        "{banner}"
    );
    assert!(
        banner.contains("processorKey:") && banner.contains("merchantSecret:"),
        "{banner}"
    );
    let health = std::net::TcpStream::connect(&addr);
    assert!(health.is_ok(), "accepts connections at {addr}");
    child.kill().unwrap();
    child.wait().unwrap();
    let (mut child, _, banner) = start(dir.path());
    assert!(
        !banner.contains("password:"),
        "the demo merchant is created only once"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn test_clock_advance_moves_a_sandbox_merchant_and_refuses_live_ones() {
    let dir = tempfile::tempdir().unwrap();
    let create = |live: bool| -> serde_json::Value {
        let mut args = vec!["merchant", "create", "--name", "Clocked", "--json"];
        if live {
            args.push("--live");
        }
        let out = recur(dir.path()).args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let sandbox = create(false);
    let user = sandbox["userName"].as_str().unwrap();
    let out = recur(dir.path())
        .args([
            "test-clock",
            "advance",
            "--user-name",
            user,
            "--to",
            "2031-01-31T10:00:00Z",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("at 2031-01-31T10:00:00Z"), "{stdout}");
    // Backwards is refused.
    let back = recur(dir.path())
        .args([
            "test-clock",
            "advance",
            "--user-name",
            user,
            "--to",
            "2030-01-01T00:00:00Z",
        ])
        .output()
        .unwrap();
    assert!(!back.status.success());
    assert!(String::from_utf8_lossy(&back.stderr).contains("only moves forward"));
    let live = create(true);
    let refused = recur(dir.path())
        .args([
            "test-clock",
            "advance",
            "--user-name",
            live["userName"].as_str().unwrap(),
            "--to",
            "2031-01-31T10:00:00Z",
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("sandbox"));
}
