//! Finding and loading ONNX Runtime, which runs the embedding model.
//!
//! The `ort` crate is built with `load-dynamic`: nothing is downloaded or
//! linked at build time, and the shared library is opened when semantic search
//! starts. Where it looks, first match wins:
//!
//! 1. `ORT_DYLIB_PATH` (absolute, or relative to the executable's folder);
//! 2. the executable's folder, its parent (test binaries live in
//!    `target/<profile>/deps`), and `../lib/scratchpad` and `../lib` beside
//!    it (installed layouts: the `.deb` puts it in `/usr/lib/scratchpad`);
//! 3. the data directory.
//!
//! In each folder it takes `libonnxruntime.so`, else the newest
//! `libonnxruntime.so.<version>`. `scripts/setup.sh` puts the library from the
//! PyPI wheel next to the binaries cargo builds. A missing library would make
//! `ort` panic deep inside model creation, so it is found and loaded here
//! first and its absence becomes an error that says what to do.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const LIB: &str = "libonnxruntime.so";

/// The ONNX Runtime library in use, loaded once per process.
static LOADED: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// Loads ONNX Runtime (once per process) and returns where it came from.
pub fn init(data_dir: &Path) -> Result<PathBuf, String> {
    LOADED
        .get_or_init(|| {
            let path = find(data_dir)?;
            // Loading is what matters here; fastembed makes the environment.
            let _builder = ort::init_from(&path).map_err(|e| {
                format!(
                    "ONNX Runtime at {} cannot be used: {e}. Semantic search needs ONNX Runtime 1.24 or newer; run scripts/setup.sh or point ORT_DYLIB_PATH at a suitable libonnxruntime.so",
                    path.display()
                )
            })?;
            Ok(path)
        })
        .clone()
}

/// Where the library would be loaded from, or why there is none.
pub fn find(data_dir: &Path) -> Result<PathBuf, String> {
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf));
    if let Some(explicit) = std::env::var_os("ORT_DYLIB_PATH").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(&explicit);
        let p = match (&exe_dir, p.is_absolute()) {
            (Some(dir), false) => dir.join(p),
            _ => p,
        };
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "ORT_DYLIB_PATH is {}, which is not a file; point it at libonnxruntime.so (1.24 or newer) or unset it",
                p.display()
            ))
        };
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(dir) = &exe_dir {
        dirs.push(dir.clone());
        if let Some(parent) = dir.parent() {
            dirs.push(parent.to_path_buf());
            dirs.push(parent.join("lib").join("scratchpad"));
            dirs.push(parent.join("lib"));
        }
    }
    dirs.push(data_dir.to_path_buf());
    for dir in &dirs {
        if let Some(found) = in_dir(dir) {
            return Ok(found);
        }
    }
    Err(format!(
        "ONNX Runtime ({LIB}) not found; looked in {}. Run scripts/setup.sh, put libonnxruntime.so (1.24 or newer, e.g. from the PyPI onnxruntime wheel) beside the pad binary or in the data directory, or set ORT_DYLIB_PATH",
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

fn in_dir(dir: &Path) -> Option<PathBuf> {
    let plain = dir.join(LIB);
    if plain.is_file() {
        return Some(plain);
    }
    let versioned = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let version = name.strip_prefix(LIB)?.strip_prefix('.')?;
            let parts: Vec<u32> = version
                .split('.')
                .map(str::parse)
                .collect::<Result<_, _>>()
                .ok()?;
            Some((parts, e.path()))
        })
        .filter(|(_, p)| p.is_file())
        .max_by(|a, b| a.0.cmp(&b.0))?;
    Some(versioned.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_versioned_library_wins_and_plain_name_first() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(in_dir(dir.path()), None);
        for v in ["1.9.0", "1.24.1", "1.31.1"] {
            std::fs::write(dir.path().join(format!("{LIB}.{v}")), b"").unwrap();
        }
        std::fs::write(dir.path().join(format!("{LIB}.bak")), b"").unwrap();
        assert_eq!(
            in_dir(dir.path()),
            Some(dir.path().join(format!("{LIB}.1.31.1")))
        );
        std::fs::write(dir.path().join(LIB), b"").unwrap();
        assert_eq!(in_dir(dir.path()), Some(dir.path().join(LIB)));
    }
}
