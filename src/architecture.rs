//! ARCHITECTURE.md names only what is there: every path it cites exists,
//! and every `Type::name` it cites is defined (a function, field, constant,
//! variant or type) in the code. A rename that leaves the map behind fails
//! here.

use std::path::Path;

/// Types of other crates the map names.
const FOREIGN: &[&str] = &["TextEmbedding"];

/// Each Rust source file's path and text under `dir`.
fn sources(dir: &Path, out: &mut Vec<(std::path::PathBuf, String)>) {
    files(dir, &|name| name.ends_with(".rs"), out);
}

/// Each file under `dir` whose name `keep` accepts, with its text.
fn files(dir: &Path, keep: &dyn Fn(&str) -> bool, out: &mut Vec<(std::path::PathBuf, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, keep, out);
        } else if keep(&p.to_string_lossy()) {
            let text = std::fs::read_to_string(&p).unwrap();
            out.push((p, text));
        }
    }
}

/// The bodies of what `owner` names: each `impl … Owner`, `struct`, `enum`
/// or `trait Owner` block — or, for a module (`storage`), its files.
fn bodies<'a>(owner: &str, code: &'a [(std::path::PathBuf, String)]) -> Vec<&'a str> {
    if owner.starts_with(|c: char| c.is_ascii_lowercase()) {
        return code
            .iter()
            .filter(|(p, _)| {
                p.file_stem().is_some_and(|s| s == owner)
                    || p.parent()
                        .and_then(|d| d.file_name())
                        .is_some_and(|d| d == owner)
            })
            .map(|(_, t)| t.as_str())
            .collect();
    }
    let head = regex::Regex::new(&format!(
        r"(impl(<[^>]*>)?\s+([\w:<>, ]+\s+for\s+)?|struct\s+|enum\s+|trait\s+){owner}\b[^;{{]*\{{"
    ))
    .unwrap();
    let mut found = Vec::new();
    for (_, text) in code {
        for m in head.find_iter(text) {
            let rest = &text[m.end()..];
            let mut depth = 1;
            let end = rest
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(rest.len(), |(i, _)| i);
            found.push(&rest[..end]);
        }
    }
    found
}

#[test]
fn the_map_names_only_what_is_there() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut code = Vec::new();
    for dir in ["src", "src-tauri/src", "benches", "tests"] {
        sources(&root.join(dir), &mut code);
    }
    let quoted = regex::Regex::new(r"`([^`\n]+)`").unwrap();
    let path =
        regex::Regex::new(r"^(src|src-tauri|tests|ui|clients|scripts|benches|docs)/[\w./-]+$")
            .unwrap();
    let name = regex::Regex::new(r"^([A-Za-z_]\w*)::([A-Za-z_]\w*)$").unwrap();
    let mut missing = Vec::new();
    for q in quoted.captures_iter(&map) {
        let q = &q[1];
        if path.is_match(q) {
            if !root.join(q.trim_end_matches('/')).exists() {
                missing.push(q.to_owned());
            }
        } else if let Some(c) = name.captures(q).filter(|c| !FOREIGN.contains(&&c[1])) {
            let n = regex::escape(&c[2]);
            // A function, constant, type or module; a field; a variant.
            let defined = regex::Regex::new(&format!(
                r"(?m)(fn|const|static|mod|struct|enum|type|trait)\s+{n}\b|^\s*(pub(\([\w:]+\))?\s+)?{n}\s*[:,({{]"
            ))
            .unwrap();
            if !bodies(&c[1], &code).iter().any(|b| defined.is_match(b)) {
                missing.push(q.to_owned());
            }
        }
    }
    // The concepts (`**`Name`**`) are types, traits or classes of the code.
    let concept = regex::Regex::new(r"\*\*`([A-Za-z_]\w*)`\*\*").unwrap();
    let mut ui = Vec::new();
    // The UI's TypeScript, tests left out.
    files(
        &root.join("ui/src"),
        &|name| name.ends_with(".ts") && !name.ends_with(".test.ts"),
        &mut ui,
    );
    for c in concept.captures_iter(&map) {
        let n = regex::escape(&c[1]);
        let defined =
            regex::Regex::new(&format!(r"(struct|enum|trait|type|class)\s+{n}\b")).unwrap();
        if !code
            .iter()
            .chain(&ui)
            .any(|(_, text)| defined.is_match(text))
        {
            missing.push(c[1].to_owned());
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what the code does not have: {missing:?}"
    );
}

/// Parts that must not reach back into the parts using them: the meaning
/// index is asked by the engine and hands the store's check its
/// candidates, but knows neither the engine nor any store (the store
/// contract knows the index only as the worker's `VectorSource`); a
/// search's explanation is built from what the search hands it; the seal
/// writes the model's notes and checks a loop of dependencies by the
/// rules, neither of which knows the seal by name.
const NOT_IMPORTING: &[(&str, &[&str])] = &[
    (
        "src/semantic",
        &[
            "crate::storage",
            "crate::store",
            "crate::pg",
            "crate::engine",
        ],
    ),
    ("src/engine/explain", &["search::"]),
    ("src/seal", &["crate::model"]),
    ("src/storage/rules", &["crate::seal"]),
];

#[test]
fn parts_do_not_import_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (part, forbidden) in NOT_IMPORTING {
        let mut code = Vec::new();
        sources(&root.join(part), &mut code);
        let file = root.join(format!("{part}.rs"));
        code.push((file.clone(), std::fs::read_to_string(&file).unwrap()));
        for (path, text) in &code {
            for name in *forbidden {
                assert!(
                    !text.contains(name),
                    "{} names {name}: {part} must not import it (a circle; see ARCHITECTURE.md)",
                    path.display()
                );
            }
        }
    }
}
