//! The layering of `docs/architecture.md` ("Layout"), checked on the source: every `crate::…` path
//! in a module of `src/` names a module of the same layer or a lower one, and neither front end
//! (the API, the hosted pages) reaches into the other. A new top-level module must be given its
//! layer here and in the table.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each top-level module of `src/` and its layer, lowest first (`crates/domain` is below all).
const LAYERS: &[(&str, u8)] = &[
    // Foundation: storage, the processor boundary, keys, configuration and plumbing.
    ("clock", 1),
    ("ids", 1),
    ("i18n", 1),
    ("net", 1),
    ("config", 1),
    ("keys", 1),
    ("telemetry", 1),
    ("store", 1),
    ("processor", 1),
    ("metrics", 1),
    ("auth", 1),
    // What the layers above the foundation work with.
    ("platform", 2),
    // Events, merchants, customer links.
    ("events", 3),
    ("merchants", 3),
    ("links", 3),
    // The engines: billing, cashier orders, delivery.
    ("billing", 4),
    ("cashier", 4),
    ("delivery", 4),
    // Background work and the HTTP layer's state.
    ("workers", 5),
    ("state", 5),
    // The HTTP edge both front ends share: field input, list parameters, client address,
    // tracing, problem documents.
    ("http", 6),
    // The service layer: every business operation, below both front ends.
    ("services", 7),
    // The front ends: the API and the hosted pages.
    ("api", 8),
    ("pages", 8),
    // Start-up.
    ("app", 9),
    ("cli", 9),
    ("main", 9),
    ("lib", 9),
];

/// Imports the layering would allow but the architecture does not: the two front ends share only
/// what lies below them, and reach the engines (billing, the cashier) through the services only.
const FORBIDDEN: &[(&str, &str)] = &[
    ("api", "pages"),
    ("pages", "api"),
    ("api", "billing"),
    ("api", "cashier"),
    ("pages", "billing"),
    ("pages", "cashier"),
];

fn layer(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The modules a line of code names as `crate::<module>`, comments left out.
fn crate_paths(line: &str) -> Vec<String> {
    let code = line.split("//").next().unwrap_or_default();
    code.match_indices("crate::")
        .filter(|(at, _)| {
            // `recur_domain::…` or `super::crate` are not this crate's paths.
            !code[..*at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$')
        })
        .map(|(at, _)| {
            code[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .filter(|m: &String| !m.is_empty())
        .collect()
}

#[test]
fn imports_point_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = BTreeSet::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let first = relative
            .components()
            .next()
            .expect("a path")
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        let Some(own) = layer(&module) else {
            problems.insert(format!(
                "{}: module `{module}` has no layer",
                relative.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).expect("a source file");
        for (number, line) in text.lines().enumerate() {
            for target in crate_paths(line) {
                match layer(&target) {
                    None => {
                        problems.insert(format!(
                            "{}:{}: `crate::{target}` has no layer",
                            relative.display(),
                            number + 1
                        ));
                    }
                    Some(theirs) if theirs > own => {
                        problems.insert(format!(
                            "{}:{}: `{module}` (layer {own}) imports `{target}` (layer {theirs})",
                            relative.display(),
                            number + 1
                        ));
                    }
                    Some(_) if FORBIDDEN.contains(&(module.as_str(), target.as_str())) => {
                        problems.insert(format!(
                            "{}:{}: `{module}` must not import `{target}`",
                            relative.display(),
                            number + 1
                        ));
                    }
                    Some(_) => {}
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "imports against the layering:\n{}",
        problems.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn crate_paths_are_read_from_code_only() {
    assert_eq!(crate_paths("use crate::store::Tx;"), ["store"]);
    assert_eq!(
        crate_paths("    let x = crate::ids::key(); // crate::api"),
        ["ids"]
    );
    assert!(crate_paths("//! See [`crate::api`].").is_empty());
    assert!(crate_paths("use recur_domain::money;").is_empty());
}
