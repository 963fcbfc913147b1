//! The embedding models, through fastembed, both 384 dimensions with mean
//! pooling: all-MiniLM-L6-v2 (English, 6 layers) and multilingual-e5-small
//! (about 100 languages, 12 layers, 4-bit weights; texts carry the
//! "query: " / "passage: " prefixes it was trained with).
//!
//! With a model folder (`PAD_MODEL_DIR`) the ONNX file and tokenizer are read
//! from it — MiniLM's `model.onnx` (fp32) or `model_quantized.onnx` (int8),
//! e5's `model_q4.onnx` (scripts/model.sh builds it) — or from its
//! subfolder named after the model. Without one, fastembed downloads the
//! model once into `<data dir>/models`.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use fastembed::{
    EmbeddingModel, InitOptionsUserDefined, Pooling, TextEmbedding, TextInitOptions,
    TokenizerFiles, UserDefinedEmbeddingModel,
};

use super::vector::DIMENSIONS;

/// Word pieces MiniLM embeds per text (sentence-transformers' limit for it):
/// about the first 1,000 characters of an entry count.
pub const MAX_TOKENS: usize = 256;

/// Which model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModelKind {
    /// all-MiniLM-L6-v2: English; the fastest.
    #[default]
    MiniLm,
    /// multilingual-e5-small, 4-bit: about 100 languages, and better at
    /// questions in English too; ~3× the embedding time.
    E5Small,
}

impl ModelKind {
    pub const ALL: [ModelKind; 2] = [ModelKind::MiniLm, ModelKind::E5Small];

    pub fn name(self) -> &'static str {
        match self {
            ModelKind::MiniLm => "all-MiniLM-L6-v2",
            ModelKind::E5Small => "multilingual-e5-small",
        }
    }

    /// Word pieces embedded per text.
    pub fn max_tokens(self) -> usize {
        match self {
            ModelKind::MiniLm => MAX_TOKENS,
            ModelKind::E5Small => 512,
        }
    }

    /// What goes before a query and before a stored text.
    fn prefixes(self) -> (&'static str, &'static str) {
        match self {
            ModelKind::MiniLm => ("", ""),
            ModelKind::E5Small => ("query: ", "passage: "),
        }
    }
}

impl std::fmt::Display for ModelKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ModelKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ModelKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                format!(
                    "model '{s}': use 'all-MiniLM-L6-v2' (English, fastest) or 'multilingual-e5-small' (any language)"
                )
            })
    }
}

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
    kind: ModelKind,
    /// Names the model and weights, so vectors from another model are not mixed in.
    pub name: String,
}

impl Model {
    /// Loads all-MiniLM-L6-v2 (`load_kind` loads either model).
    pub fn load(
        source: &ModelSource,
        precision: Precision,
        threads: usize,
        data_dir: &Path,
    ) -> Result<Model, String> {
        Model::load_kind(ModelKind::MiniLm, source, precision, threads, data_dir)
    }

    /// Loads a model, to run on `threads` ONNX Runtime threads; ONNX
    /// Runtime must already be loaded (`runtime::init`). e5 has 4-bit
    /// weights only: `precision` is MiniLM's.
    pub fn load_kind(
        kind: ModelKind,
        source: &ModelSource,
        precision: Precision,
        threads: usize,
        data_dir: &Path,
    ) -> Result<Model, String> {
        // fastembed panics on some failures deep inside ONNX Runtime; a panic
        // here must not take the engine down with it.
        let loaded = std::panic::catch_unwind(|| match source {
            ModelSource::Dir(dir) => from_dir(kind, dir, precision, threads),
            ModelSource::Download => download(kind, precision, threads, data_dir),
        })
        .unwrap_or_else(|p| Err(format!("model loading panicked: {}", panic_text(&p))))?;
        let weights = match (kind, source) {
            (ModelKind::MiniLm, _) => precision.as_str(),
            (ModelKind::E5Small, ModelSource::Dir(_)) => "q4",
            (ModelKind::E5Small, ModelSource::Download) => "fp32",
        };
        let mut model = Model {
            inner: loaded,
            kind,
            name: format!("{}/{weights}", kind.name()),
        };
        // Fail now, not on the first entry, if the graph is not what we expect.
        let probe = model.embed(&["probe"])?;
        if probe.first().map(Vec::len) != Some(DIMENSIONS) {
            return Err(format!(
                "the model gives {}-dimensional vectors; {} ({DIMENSIONS}) is expected",
                probe.first().map_or(0, Vec::len),
                kind.name()
            ));
        }
        Ok(model)
    }

    pub fn kind(&self) -> ModelKind {
        self.kind
    }

    /// L2-normalised 384-dimensional vectors of stored texts, one per
    /// text, in order.
    pub fn embed<S: AsRef<str> + Send + Sync>(
        &mut self,
        texts: &[S],
    ) -> Result<Vec<Vec<f32>>, String> {
        let prefix = self.kind.prefixes().1;
        self.run(texts, prefix)
    }

    /// A run's vectors; if the run failed, its texts one by one, as one
    /// bad text must not stall the queue (what still fails is left out,
    /// with a warning).
    pub fn or_one_by_one(
        &mut self,
        texts: &[&str],
        vectors: Result<Vec<Vec<f32>>, String>,
    ) -> Vec<Option<Vec<f32>>> {
        match vectors {
            Ok(v) => v.into_iter().map(Some).collect(),
            Err(e) => {
                tracing::warn!("embedding a batch failed ({e}); embedding one by one");
                texts
                    .iter()
                    .map(|t| match self.embed(&[*t]) {
                        Ok(mut v) => Some(v.remove(0)),
                        Err(e) => {
                            tracing::warn!("an entry cannot be embedded ({e}); it is left out of semantic search");
                            None
                        }
                    })
                    .collect()
            }
        }
    }

    /// The vector of a search query (e5 embeds queries and stored texts
    /// each with its own prefix).
    pub fn embed_query(&mut self, query: &str) -> Result<Vec<f32>, String> {
        let prefix = self.kind.prefixes().0;
        Ok(self.run(&[query], prefix)?.remove(0))
    }

    fn run<S: AsRef<str> + Send + Sync>(
        &mut self,
        texts: &[S],
        prefix: &str,
    ) -> Result<Vec<Vec<f32>>, String> {
        let inner = &mut self.inner;
        let prefixed: Vec<String>;
        let texts: Vec<&str> = if prefix.is_empty() {
            texts.iter().map(AsRef::as_ref).collect()
        } else {
            prefixed = texts
                .iter()
                .map(|t| format!("{prefix}{}", t.as_ref()))
                .collect();
            prefixed.iter().map(String::as_str).collect()
        };
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            inner.embed(&texts, Some(texts.len().max(1)))
        }))
        .map_err(|p| format!("embedding panicked: {}", panic_text(&p)))?
        .map_err(|e| format!("embedding failed: {e}"))
    }
}

fn from_dir(
    kind: ModelKind,
    dir: &Path,
    precision: Precision,
    threads: usize,
) -> Result<TextEmbedding, String> {
    // A folder of model folders holds this one under its name.
    let sub = dir.join(kind.name());
    let dir = if sub.is_dir() { sub.as_path() } else { dir };
    let file = match kind {
        ModelKind::MiniLm => precision.file(),
        ModelKind::E5Small => "model_q4.onnx",
    };
    let (onnx, files) = model_files(dir, kind.name(), file)?;
    // The ONNX graph returns token embeddings; sentence-transformers averages
    // them (fastembed's default for user models, CLS, would be wrong).
    let model = UserDefinedEmbeddingModel::new(onnx, files).with_pooling(Pooling::Mean);
    let options = InitOptionsUserDefined::new()
        .with_max_length(kind.max_tokens())
        .with_intra_threads(threads.max(1));
    TextEmbedding::try_new_from_user_defined(model, options)
        .map_err(|e| format!("cannot load the model from {}: {e}", dir.display()))
}

/// A model folder's ONNX graph (`file`) and tokenizer files, or an error
/// that says what is missing and how to get it.
pub(super) fn model_files(
    dir: &Path,
    name: &str,
    file: &str,
) -> Result<(Vec<u8>, TokenizerFiles), String> {
    let read = |part: &str| {
        std::fs::read(dir.join(part)).map_err(|e| {
            format!(
                "cannot read {} ({e}); PAD_MODEL_DIR must hold the {name} ONNX export ({file}) and its tokenizer files, or a folder of that name holding them (`. scripts/setup.sh` puts the models in <target>/models)",
                dir.join(part).display(),
            )
        })
    };
    let files = TokenizerFiles {
        tokenizer_file: read("tokenizer.json")?,
        config_file: read("config.json")?,
        special_tokens_map_file: read("special_tokens_map.json")?,
        tokenizer_config_file: read("tokenizer_config.json")?,
    };
    Ok((read(file)?, files))
}

fn download(
    kind: ModelKind,
    precision: Precision,
    threads: usize,
    data_dir: &Path,
) -> Result<TextEmbedding, String> {
    let cache = data_dir.join("models");
    let which = match (kind, precision) {
        (ModelKind::MiniLm, Precision::Fp32) => EmbeddingModel::AllMiniLML6V2,
        (ModelKind::MiniLm, Precision::Int8) => EmbeddingModel::AllMiniLML6V2Q,
        (ModelKind::E5Small, _) => EmbeddingModel::MultilingualE5Small,
    };
    let options = TextInitOptions::new(which)
        .with_cache_dir(cache.clone())
        .with_max_length(kind.max_tokens())
        .with_intra_threads(threads.max(1))
        .with_show_download_progress(false);
    TextEmbedding::try_new(options).map_err(|e| {
        format!(
            "the embedding model is not in {} and downloading it failed ({e}); connect to the internet once, or set PAD_MODEL_DIR to a folder with the {} ONNX export",
            cache.display(),
            kind.name()
        )
    })
}

pub(super) fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into())
}
