//! The embedding model: all-MiniLM-L6-v2 (384 dimensions) through fastembed.
//!
//! With a model folder (`PAD_MODEL_DIR`) the ONNX file and tokenizer are read
//! from it: `model.onnx` (fp32) or `model_quantized.onnx` (int8), mean pooling,
//! 256 word pieces at most, as sentence-transformers does. Without one,
//! fastembed downloads the model once into `<data dir>/models`.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use fastembed::{
    EmbeddingModel, InitOptionsUserDefined, Pooling, TextEmbedding, TextInitOptions,
    TokenizerFiles, UserDefinedEmbeddingModel,
};

use crate::store::vectors::DIMENSIONS;

/// Word pieces embedded per text (sentence-transformers' limit for this
/// model): about the first 1,000 characters of an entry count.
pub const MAX_TOKENS: usize = 256;

/// Where the model comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelSource {
    /// A folder holding the ONNX export and its tokenizer files.
    Dir(PathBuf),
    /// fastembed's download from Hugging Face, cached in the data directory.
    Download,
}

/// Which weights: full precision, or dynamically quantized to 8 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    Fp32,
    /// The default for a model folder, by measurement (docs/benchmarks.md):
    /// faster, half the memory, the same retrieval results on our paraphrase set.
    Int8,
}

impl Precision {
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Int8 => "int8",
        }
    }

    /// The ONNX file of this precision in a model folder.
    pub fn file(self) -> &'static str {
        match self {
            Precision::Fp32 => "model.onnx",
            Precision::Int8 => "model_quantized.onnx",
        }
    }
}

impl FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fp32" => Ok(Precision::Fp32),
            "int8" => Ok(Precision::Int8),
            other => Err(format!("model precision '{other}': use 'int8' or 'fp32'")),
        }
    }
}

/// A loaded model. `embed` needs `&mut self`: one owner (the embedding worker).
pub struct Model {
    inner: TextEmbedding,
    /// Names the model and weights, so vectors from another model are not mixed in.
    pub name: String,
}

impl Model {
    /// Loads the model, to run on `threads` ONNX Runtime threads; ONNX
    /// Runtime must already be loaded (`runtime::init`).
    pub fn load(
        source: &ModelSource,
        precision: Precision,
        threads: usize,
        data_dir: &Path,
    ) -> Result<Model, String> {
        // fastembed panics on some failures deep inside ONNX Runtime; a panic
        // here must not take the engine down with it.
        let loaded = std::panic::catch_unwind(|| match source {
            ModelSource::Dir(dir) => from_dir(dir, precision, threads),
            ModelSource::Download => download(precision, threads, data_dir),
        })
        .unwrap_or_else(|p| Err(format!("model loading panicked: {}", panic_text(&p))))?;
        let name = format!("all-MiniLM-L6-v2/{}", precision.as_str());
        let mut model = Model {
            inner: loaded,
            name,
        };
        // Fail now, not on the first entry, if the graph is not what we expect.
        let probe = model.embed(&["probe"])?;
        if probe.first().map(Vec::len) != Some(DIMENSIONS) {
            return Err(format!(
                "the model gives {}-dimensional vectors; all-MiniLM-L6-v2 (384) is expected",
                probe.first().map_or(0, Vec::len)
            ));
        }
        Ok(model)
    }

    /// L2-normalised 384-dimensional vectors, one per text, in order.
    pub fn embed<S: AsRef<str> + Send + Sync>(
        &mut self,
        texts: &[S],
    ) -> Result<Vec<Vec<f32>>, String> {
        let inner = &mut self.inner;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            inner.embed(texts, Some(texts.len().max(1)))
        }))
        .map_err(|p| format!("embedding panicked: {}", panic_text(&p)))?
        .map_err(|e| format!("embedding failed: {e}"))
    }
}

fn from_dir(dir: &Path, precision: Precision, threads: usize) -> Result<TextEmbedding, String> {
    let read = |name: &str| {
        std::fs::read(dir.join(name)).map_err(|e| {
            format!(
                "cannot read {} ({e}); PAD_MODEL_DIR must hold the all-MiniLM-L6-v2 ONNX export ({}) and its tokenizer files",
                dir.join(name).display(),
                precision.file()
            )
        })
    };
    let files = TokenizerFiles {
        tokenizer_file: read("tokenizer.json")?,
        config_file: read("config.json")?,
        special_tokens_map_file: read("special_tokens_map.json")?,
        tokenizer_config_file: read("tokenizer_config.json")?,
    };
    // The ONNX graph returns token embeddings; sentence-transformers averages
    // them (fastembed's default for user models, CLS, would be wrong).
    let model =
        UserDefinedEmbeddingModel::new(read(precision.file())?, files).with_pooling(Pooling::Mean);
    let options = InitOptionsUserDefined::new()
        .with_max_length(MAX_TOKENS)
        .with_intra_threads(threads.max(1));
    TextEmbedding::try_new_from_user_defined(model, options)
        .map_err(|e| format!("cannot load the model from {}: {e}", dir.display()))
}

fn download(
    precision: Precision,
    threads: usize,
    data_dir: &Path,
) -> Result<TextEmbedding, String> {
    let cache = data_dir.join("models");
    let which = match precision {
        Precision::Fp32 => EmbeddingModel::AllMiniLML6V2,
        Precision::Int8 => EmbeddingModel::AllMiniLML6V2Q,
    };
    let options = TextInitOptions::new(which)
        .with_cache_dir(cache.clone())
        .with_max_length(MAX_TOKENS)
        .with_intra_threads(threads.max(1))
        .with_show_download_progress(false);
    TextEmbedding::try_new(options).map_err(|e| {
        format!(
            "the embedding model is not in {} and downloading it failed ({e}); connect to the internet once, or set PAD_MODEL_DIR to a folder with the all-MiniLM-L6-v2 ONNX export",
            cache.display()
        )
    })
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into())
}
