//! Semantic search: local embeddings (fastembed on ONNX Runtime) and a vector
//! index (an i8 matrix scanned whole, `flat`), kept off the write path.
//!
//! One worker thread owns the model. It loads ONNX Runtime and the model,
//! brings the vector index up (loading the saved one, or rebuilding it from
//! `vectors.db`), then loops: answer query embeddings first, embed the next
//! batch of new or edited entries into `vectors.db`, apply the new rows to the
//! index, save the index now and then. Writers never wait for any of it; a
//! search that needs a query embedding waits for at most the piece of a
//! batch in flight (`lane::Chunks`: one text when the machine is busy).
//!
//! Without ONNX Runtime or the model the engine runs on: `status` says what is
//! missing and how to fix it, `semantic` searches fail with that message and
//! `hybrid` ones answer from text search alone.

mod backlog;
mod flat;
mod index;
mod lane;
mod model;
mod pace;
pub mod runtime;
mod source;
pub mod splade;
pub mod vector;
mod worker;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::Duration;

pub use backlog::Helper;
pub use index::{ChunkCheck, VectorIndex, FILE as INDEX_FILE};
pub use model::{Model, ModelKind, ModelSource, Precision, MAX_TOKENS};
pub use source::{Embed, Encoded, Note, VectorSource};

use crate::error::{Error, Result};

/// How semantic search is set up.
#[derive(Clone, Debug)]
pub struct SemanticConfig {
    pub model: ModelSource,
    /// Which model (`pad serve --model`): MiniLM unless chosen.
    pub kind: ModelKind,
    /// `None`: int8 from a model folder (measured as good as fp32 on our
    /// retrieval set, and faster); fp32 when downloading, as fastembed's int8
    /// download is a different quantization we have not measured.
    pub precision: Option<Precision>,
    /// ONNX Runtime threads for embedding. One by default: on a small machine
    /// the model shares the cores with the engine and its clients, and one
    /// thread already embeds faster than agents write (docs/benchmarks.md).
    pub threads: usize,
    /// Whether a lasting backlog may run on a second copy of the model
    /// (`backlog.rs`).
    pub helper: Helper,
    /// How often the worker looks for new writes when idle.
    pub poll_every: Duration,
    /// How often a changed index is saved (it is also saved on shutdown).
    pub save_every: Duration,
    /// Entries embedded per batch: bounds how long a query embedding can
    /// wait behind the backlog.
    pub batch: usize,
    /// Filters with at most this many matching entries are searched on
    /// their stored vectors alone; broader ones score the whole index and
    /// keep the best candidates that pass. Either way the filter applies
    /// inside the search, never by dropping hits afterwards.
    pub exact_max: usize,
    /// The learned sparse model's folder (`splade.rs`): each note's terms
    /// are encoded with its vector and hybrid search ranks a third list.
    /// Found by `new` in a model folder of model folders; `None`: no sparse
    /// list.
    pub sparse: Option<PathBuf>,
}

impl SemanticConfig {
    pub fn new(model: ModelSource) -> Self {
        let sparse = match &model {
            ModelSource::Dir(dir) => Some(dir.join(splade::NAME)).filter(|d| d.is_dir()),
            ModelSource::Download => None,
        };
        SemanticConfig {
            sparse,
            model,
            kind: ModelKind::default(),
            precision: None,
            threads: 1,
            helper: Helper::Auto,
            poll_every: Duration::from_millis(100),
            save_every: Duration::from_secs(60),
            batch: 16,
            exact_max: 2000,
        }
    }
}

/// A search waits for the embedding backlog when at most this many entries
/// (and edits) are in it: three batches, ~0.4 s of embedding on one core
/// (docs/benchmarks.md, "Read your writes"). A larger backlog means a
/// flood: the search answers at once and says how many were not embedded.
pub const SETTLE_MAX_BACKLOG: i64 = 48;
/// And it waits at most this long (the worker runs on idle CPU only, so a
/// busy machine can slow it down).
pub const SETTLE_TIMEOUT: Duration = Duration::from_secs(2);

/// Query embeddings kept, most recently used first.
const QUERY_CACHE: usize = 256;

#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Loading,
    Ready { model: String, runtime: PathBuf },
    Unavailable(String),
}

enum Msg {
    /// What a search (or a new note) asks of the models: answered before
    /// the next batch of entries.
    Query(Ask),
    /// Look for work now; `true`: someone waits for it, so run at once
    /// even while writes stream (`pace.rs`).
    Wake(bool),
    /// A run of a batch on its thread is done (`lane::Waiting`).
    RunDone,
    Reindex(tokio::sync::oneshot::Sender<Result<()>>),
    Stop,
}

/// A question for the worker's models.
enum Ask {
    /// A text to embed as a query (`true`) or as a stored text.
    Vector(
        String,
        bool,
        tokio::sync::oneshot::Sender<Result<Arc<[f32]>>>,
    ),
    /// A question to encode by the sparse model (`splade::Splade::encode`,
    /// one run of at most `splade::MAX_TOKENS` pieces); `None` without it.
    Terms(
        String,
        tokio::sync::oneshot::Sender<Result<Option<Arc<splade::Terms>>>>,
    ),
}

/// State shared by the engine and the worker.
struct Shared {
    status: RwLock<Status>,
    /// `None` until the worker has loaded or rebuilt it.
    index: RwLock<Option<VectorIndex>>,
    cache: Mutex<QueryCache<Arc<[f32]>>>,
    /// Questions' terms by the sparse model, as `cache` keeps embeddings.
    terms_cache: Mutex<QueryCache<Arc<splade::Terms>>>,
    /// Entries embedded since start, and the time spent embedding them.
    embedded: Mutex<(u64, Duration)>,
    /// Of those, embedded on the second copy of the model (`backlog.rs`).
    on_copy: std::sync::atomic::AtomicU64,
    /// Batches that encoded something, since start.
    runs: AtomicU64,
    /// Rows the index offered searches as candidates (to a filter, or to
    /// rescoring) since start.
    offered: AtomicU64,
    /// The embedding watermarks (entry id, change-log row) the index
    /// reflects: raised by the worker after each batch it applies.
    indexed: tokio::sync::watch::Sender<(i64, i64)>,
    /// The sparse model's tokenizer, once the worker has loaded the model
    /// (`None` without it: search has no sparse list).
    pieces: RwLock<Option<splade::Pieces>>,
}

pub struct Semantic {
    shared: Arc<Shared>,
    exact_max: usize,
    kind: ModelKind,
    tx: Mutex<mpsc::Sender<Msg>>,
    worker: Mutex<Option<JoinHandle<()>>>,
}

/// What `stats` reports.
#[derive(Debug, Clone)]
pub struct SemanticStats {
    pub status: Status,
    pub vectors: usize,
    pub index_bytes: usize,
    pub embedded: u64,
    /// Of those, how many a second copy of the model embedded.
    pub on_copy: u64,
    /// The batches they were encoded in (a burst of notes gathered into
    /// one: `pace.rs`).
    pub runs: u64,
    pub embed_per_second: f64,
    /// Time spent embedding since start.
    pub embed_seconds: f64,
    /// Rows the index offered searches as candidates since start (checked
    /// by a filter, or rescored): what a search's walk cost.
    pub offered: u64,
}

impl Semantic {
    /// Starts the worker; the model loads in the background.
    pub fn start(
        config: SemanticConfig,
        source: Arc<dyn VectorSource>,
        data_dir: PathBuf,
    ) -> Semantic {
        let shared = Arc::new(Shared {
            status: RwLock::new(Status::Loading),
            index: RwLock::new(None),
            cache: Mutex::new(QueryCache::default()),
            terms_cache: Mutex::new(QueryCache::default()),
            embedded: Mutex::new((0, Duration::ZERO)),
            on_copy: Default::default(),
            runs: AtomicU64::new(0),
            offered: AtomicU64::new(0),
            indexed: tokio::sync::watch::channel((0, 0)).0,
            pieces: RwLock::new(None),
        });
        let (tx, rx) = mpsc::channel();
        let wake = tx.clone();
        let exact_max = config.exact_max;
        let kind = config.kind;
        let worker = worker::spawn(shared.clone(), source, config, data_dir, rx, wake);
        Semantic {
            shared,
            exact_max,
            kind,
            tx: Mutex::new(tx),
            worker: Mutex::new(Some(worker)),
        }
    }

    pub fn status(&self) -> Status {
        read(&self.shared.status).clone()
    }

    /// Why semantic search cannot answer now, as an error for the client.
    pub fn not_ready(&self) -> Option<Error> {
        match self.status() {
            Status::Ready { .. } => None,
            Status::Loading => Some(Error::Unavailable(
                "semantic search is starting (the embedding model is loading); try again in a moment, or use mode 'text'.".into(),
            )),
            Status::Unavailable(why) => Some(Error::Unavailable(format!(
                "semantic search is unavailable: {why}. Until then use mode 'text' ('hybrid' answers from text search alone)."
            ))),
        }
    }

    /// A query's word pieces for the sparse list; `None` when the sparse
    /// model is not loaded.
    pub fn pieces(&self) -> Option<splade::Pieces> {
        read(&self.shared.pieces).clone()
    }

    pub fn is_ready(&self) -> bool {
        self.not_ready().is_none()
    }

    /// The model this engine embeds with.
    pub fn kind(&self) -> ModelKind {
        self.kind
    }

    /// The query's embedding: from the cache, else from the worker (which
    /// answers queries before it embeds the next batch of entries).
    pub async fn query_vector(&self, query: &str) -> Result<Arc<[f32]>> {
        self.vector(query, true).await
    }

    /// A text's embedding as entries are embedded (e5 gives stored texts
    /// their own prefix): what a note is compared with its neighbours by.
    pub async fn text_vector(&self, text: &str) -> Result<Arc<[f32]>> {
        self.vector(text, false).await
    }

    async fn vector(&self, text: &str, as_query: bool) -> Result<Arc<[f32]>> {
        if let Some(e) = self.not_ready() {
            return Err(e);
        }
        // Stored texts are cached apart from queries (a NUL never ends a query).
        let key = if as_query {
            text.to_string()
        } else {
            format!("{text}\0")
        };
        if let Some(v) = lock(&self.shared.cache).get(&key) {
            return Ok(v);
        }
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.send(Msg::Query(Ask::Vector(text.to_string(), as_query, reply)))?;
        let v = answer
            .await
            .map_err(|_| Error::Unavailable("the embedding worker stopped".into()))??;
        lock(&self.shared.cache).put(key, v.clone());
        Ok(v)
    }

    /// A question's terms by the sparse model: its word pieces and the
    /// words it means, each weighted (`splade::Splade::encode`), from the
    /// cache or from the worker, which answers them as it answers query
    /// embeddings. `None` when the sparse model is not loaded.
    pub async fn question_terms(&self, question: &str) -> Result<Option<Arc<splade::Terms>>> {
        if let Some(e) = self.not_ready() {
            return Err(e);
        }
        if self.pieces().is_none() {
            return Ok(None);
        }
        if let Some(t) = lock(&self.shared.terms_cache).get(question) {
            return Ok(Some(t));
        }
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.send(Msg::Query(Ask::Terms(question.to_string(), reply)))?;
        let terms = answer
            .await
            .map_err(|_| Error::Unavailable("the embedding worker stopped".into()))??;
        if let Some(t) = &terms {
            lock(&self.shared.terms_cache).put(question.to_string(), t.clone());
        }
        Ok(terms)
    }

    /// The index's marks: (entry id, change-log row) it reflects. Moves
    /// whenever vectors are added or removed, here or (applied here) by
    /// another engine of a team.
    pub fn indexed(&self) -> (i64, i64) {
        *self.shared.indexed.borrow()
    }

    /// Filters with at most this many matching entries are searched on
    /// their stored vectors alone (`SemanticConfig::exact_max`).
    pub fn exact_max(&self) -> usize {
        self.exact_max
    }

    /// The index's candidates for the best `k` for `query`, those `check`
    /// passes when given (`VectorIndex::candidates`: to be scored again on
    /// the stored full-precision vectors, so that 8-bit rounding never
    /// decides near-ties); `None` while the index is being built. Scans
    /// every vector: call it from a blocking thread.
    pub fn candidates(
        &self,
        query: &[f32],
        k: usize,
        check: Option<&mut ChunkCheck<'_>>,
        hidden: &[i64],
    ) -> Result<Option<Vec<i64>>> {
        let index = read(&self.shared.index);
        let Some(index) = index.as_ref() else {
            return Ok(None);
        };
        let (found, offered) = index.candidates(query, k, check, hidden)?;
        self.offered(offered as u64);
        Ok(Some(found.into_iter().map(|(id, _)| id).collect()))
    }

    fn offered(&self, rows: u64) {
        self.shared.offered.fetch_add(rows, Ordering::Relaxed);
    }

    /// Whether the index holds everything up to `mark` (each part at least).
    pub fn indexed_to(&self, mark: (i64, i64)) -> bool {
        reached(&self.shared.indexed.borrow(), mark)
    }

    /// Waits until the index holds everything up to `mark`, or `deadline`;
    /// whether it does.
    pub async fn wait_indexed(&self, mark: (i64, i64), deadline: tokio::time::Instant) -> bool {
        let mut indexed = self.shared.indexed.subscribe();
        let waited =
            tokio::time::timeout_at(deadline, indexed.wait_for(|at| reached(at, mark))).await;
        matches!(waited, Ok(Ok(_)))
    }

    /// Asks the worker to look for work now (a search found some not
    /// embedded yet).
    pub fn wake(&self) -> Result<()> {
        self.send(Msg::Wake(false))
    }

    /// Asks the worker to embed what is queued now, writes streaming or
    /// not: a search waits for it (read your writes).
    pub fn hurry(&self) -> Result<()> {
        self.send(Msg::Wake(true))
    }

    fn send(&self, msg: Msg) -> Result<()> {
        lock(&self.tx)
            .send(msg)
            .map_err(|_| Error::Unavailable("the embedding worker stopped".into()))
    }

    /// Forgets every vector and embeds every entry again (new model files,
    /// or a suspect index).
    pub async fn reindex(&self) -> Result<()> {
        if let Some(e) = self.not_ready() {
            return Err(e);
        }
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.send(Msg::Reindex(reply))?;
        answer
            .await
            .map_err(|_| Error::Unavailable("the embedding worker stopped".into()))?
    }

    pub fn stats(&self) -> SemanticStats {
        let (vectors, index_bytes) = read(&self.shared.index)
            .as_ref()
            .map_or((0, 0), |i| (i.len(), i.memory_bytes()));
        let (embedded, took) = *lock(&self.shared.embedded);
        SemanticStats {
            status: self.status(),
            vectors,
            index_bytes,
            embedded,
            on_copy: self
                .shared
                .on_copy
                .load(std::sync::atomic::Ordering::Relaxed),
            runs: self.shared.runs.load(Ordering::Relaxed),
            embed_seconds: took.as_secs_f64(),
            offered: self.shared.offered.load(Ordering::Relaxed),
            embed_per_second: if took.is_zero() {
                0.0
            } else {
                embedded as f64 / took.as_secs_f64()
            },
        }
    }

    /// How many vectors the index holds for this entry: 0 or 1 when sound.
    pub fn index_count(&self, id: i64) -> usize {
        read(&self.shared.index).as_ref().map_or(0, |i| i.count(id))
    }

    /// Stops the worker, which saves the index first. Blocks until it has.
    pub fn stop(&self) {
        let _ = self.send(Msg::Stop);
        if let Some(worker) = lock(&self.worker).take() {
            let _ = worker.join();
        }
    }
}

impl Drop for Semantic {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A small LRU of what queries were turned into (embeddings, terms).
struct QueryCache<V> {
    map: HashMap<String, V>,
    order: VecDeque<String>,
}

impl<V> Default for QueryCache<V> {
    fn default() -> Self {
        QueryCache {
            map: HashMap::new(),
            order: VecDeque::new(),
        }
    }
}

impl<V: Clone> QueryCache<V> {
    fn get(&mut self, q: &str) -> Option<V> {
        let v = self.map.get(q)?.clone();
        if let Some(at) = self.order.iter().position(|k| k == q) {
            let k = self.order.remove(at).expect("present");
            self.order.push_front(k);
        }
        Some(v)
    }

    fn put(&mut self, q: String, v: V) {
        if self.map.insert(q.clone(), v).is_none() {
            self.order.push_front(q);
            while self.order.len() > QUERY_CACHE {
                if let Some(old) = self.order.pop_back() {
                    self.map.remove(&old);
                }
            }
        }
    }

    fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
    }
}

/// Whether the index's marks `at` hold everything up to `mark` (each part).
fn reached(at: &(i64, i64), mark: (i64, i64)) -> bool {
    at.0 >= mark.0 && at.1 >= mark.1
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_cache_evicts_least_recently_used() {
        let mut c = QueryCache::<Arc<[f32]>>::default();
        for i in 0..QUERY_CACHE {
            c.put(format!("q{i}"), Arc::from(vec![i as f32]));
        }
        assert!(c.get("q0").is_some(), "touch q0 so q1 is the oldest");
        c.put("new".into(), Arc::from(vec![0.0]));
        assert!(c.get("q1").is_none());
        assert!(c.get("q0").is_some());
        assert!(c.get("new").is_some());
        assert_eq!(c.map.len(), QUERY_CACHE);
    }
}
