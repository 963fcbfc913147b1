//! ARCHITECTURE.md names only what is there: every path it cites exists,
//! and every `Type::name` it cites is defined (a function, field, constant,
//! variant or type) in the code. A rename that leaves the map behind fails
//! here.

use std::path::Path;

fn sources(dir: &Path, out: &mut String) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push_str(&std::fs::read_to_string(&p).unwrap());
        }
    }
}

#[test]
fn the_map_names_only_what_is_there() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut code = String::new();
    for dir in ["src", "src-tauri/src", "benches", "tests"] {
        sources(&root.join(dir), &mut code);
    }
    let quoted = regex::Regex::new(r"`([^`\n]+)`").unwrap();
    let path =
        regex::Regex::new(r"^(src|src-tauri|tests|ui|clients|scripts|benches|docs)/[\w./-]+$")
            .unwrap();
    let name = regex::Regex::new(r"^[A-Za-z_]\w*::([a-z_]\w*)$").unwrap();
    let mut missing = Vec::new();
    for q in quoted.captures_iter(&map) {
        let q = &q[1];
        if path.is_match(q) {
            if !root.join(q.trim_end_matches('/')).exists() {
                missing.push(q.to_owned());
            }
        } else if let Some(n) = name.captures(q) {
            let n = regex::escape(&n[1]);
            let defined = regex::Regex::new(&format!(
                r"(fn|const|static|mod|struct|enum|type|trait)\s+{n}\b|\b{n}\s*:|^\s*{n}\s*[,({{]"
            ))
            .unwrap();
            if !code.lines().any(|l| defined.is_match(l)) {
                missing.push(q.to_owned());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what the code does not have: {missing:?}"
    );
}
