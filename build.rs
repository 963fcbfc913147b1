//! Embeds `migrations/*.sql` into the binary, in file-name (timestamp) order.
//! Adding a migration is adding a file; the store runs new ones on open.

use std::fmt::Write;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("migrations");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("migrations/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sql"))
        .collect();
    files.sort();
    let mut out = String::from("pub const MIGRATIONS: &[(i64, &str, &str)] = &[\n");
    for f in files {
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        let (version, name) = stem
            .split_once('_')
            .unwrap_or_else(|| panic!("migration {stem} must be named <timestamp>_<name>.sql"));
        let version: i64 = version
            .parse()
            .unwrap_or_else(|_| panic!("migration {stem}: '{version}' is not a timestamp"));
        // Named from the crate being compiled, not this script's run: a
        // target directory shared by two checkouts keeps the output of
        // whichever ran the script last.
        let file = f.file_name().unwrap().to_string_lossy();
        writeln!(
            out,
            "    ({version}, {name:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/migrations/{file}\"))),"
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("migrations.rs");
    std::fs::write(dest, out).unwrap();
}
