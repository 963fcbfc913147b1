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
pub mod runtime;
mod source;
pub mod vector;

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use backlog::Helper;
pub use index::{VectorIndex, FILE as INDEX_FILE};
pub use model::{Model, ModelKind, ModelSource, Precision, MAX_TOKENS};
pub use source::{Embed, VectorSource};

use crate::error::{Error, Result};
use crate::storage::ArchiveMark;

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
}

impl SemanticConfig {
    pub fn new(model: ModelSource) -> Self {
        SemanticConfig {
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

/// The index returns this many times `k` candidates, which are then scored
/// again on the stored full-precision vectors: the index holds 8-bit
/// integers, and near-ties at the edge of the top k (thousands of
/// near-duplicate notes) must not be decided by rounding.
pub const RESCORE_FACTOR: usize = 4;

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
    /// A text to embed as a query (`true`) or as a stored text.
    Query(
        String,
        bool,
        tokio::sync::oneshot::Sender<Result<Arc<[f32]>>>,
    ),
    /// Someone waits for the backlog: look for work now.
    Wake,
    /// A run of a batch on its thread is done (`lane::Waiting`).
    RunDone,
    Reindex(tokio::sync::oneshot::Sender<Result<()>>),
    Stop,
}

/// State shared by the engine and the worker.
struct Shared {
    status: RwLock<Status>,
    /// `None` until the worker has loaded or rebuilt it.
    index: RwLock<Option<VectorIndex>>,
    cache: Mutex<QueryCache>,
    /// Entries embedded since start, and the time spent embedding them.
    embedded: Mutex<(u64, Duration)>,
    /// Of those, embedded on the second copy of the model (`backlog.rs`).
    on_copy: std::sync::atomic::AtomicU64,
    /// Rows the index offered searches as candidates (to a filter, or to
    /// rescoring) since start.
    offered: AtomicU64,
    /// The entries of archived pads, sorted, and the mark they were read at.
    hidden: Mutex<Option<(ArchiveMark, Arc<[i64]>)>>,
    /// The embedding watermarks (entry id, change-log row) the index
    /// reflects: raised by the worker after each batch it applies.
    indexed: tokio::sync::watch::Sender<(i64, i64)>,
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
            embedded: Mutex::new((0, Duration::ZERO)),
            on_copy: Default::default(),
            offered: AtomicU64::new(0),
            hidden: Mutex::new(None),
            indexed: tokio::sync::watch::channel((0, 0)).0,
        });
        let (tx, rx) = mpsc::channel();
        let wake = tx.clone();
        let exact_max = config.exact_max;
        let kind = config.kind;
        let helper = config.helper;
        let worker = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("pad-embed".into())
                .spawn(move || {
                    Worker {
                        shared,
                        source,
                        config,
                        data_dir,
                        rx,
                        lane: lane::Lane::default(),
                        deferred: RefCell::new(VecDeque::new()),
                        chunk: Cell::new(1),
                        backlog: RefCell::new(backlog::Backlog::new(helper)),
                        wake,
                        held: RefCell::new(Vec::new()),
                        spare: RefCell::new(Spare::None),
                    }
                    .run()
                })
                .expect("spawn the embedding worker")
        };
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
        self.send(Msg::Query(text.to_string(), as_query, reply))?;
        let v = answer
            .await
            .map_err(|_| Error::Unavailable("the embedding worker stopped".into()))??;
        lock(&self.shared.cache).put(key, v.clone());
        Ok(v)
    }

    /// Filters with at most this many matching entries are searched on
    /// their stored vectors alone (`SemanticConfig::exact_max`).
    pub fn exact_max(&self) -> usize {
        self.exact_max
    }

    /// The index's best `want` candidates for `query`, checked by `keep`
    /// best first when given (`VectorIndex::candidates`); `None` while the
    /// index is being built. Scans every vector: call it from a blocking
    /// thread.
    pub fn candidates(
        &self,
        query: &[f32],
        want: usize,
        keep: Option<&dyn Fn(i64) -> bool>,
        hidden: &[i64],
    ) -> Option<Vec<i64>> {
        let index = read(&self.shared.index);
        let index = index.as_ref()?;
        let offered = AtomicU64::new(0);
        let counted = |key: i64| {
            offered.fetch_add(1, Ordering::Relaxed);
            keep.is_none_or(|keep| keep(key))
        };
        let found = index.candidates(query, want, Some(&counted), hidden);
        self.offered(offered.into_inner());
        Some(found.into_iter().map(|(id, _)| id).collect())
    }

    /// The same for a filter applied afterwards, with every copy of a note
    /// (`VectorIndex::candidates_to_filter`), and how many rows the index
    /// holds (asking for more than that finds nothing new).
    pub fn candidates_to_filter(
        &self,
        query: &[f32],
        want: usize,
        hidden: &[i64],
    ) -> Option<(Vec<i64>, usize)> {
        let index = read(&self.shared.index);
        let index = index.as_ref()?;
        let found = index.candidates_to_filter(query, want, hidden);
        self.offered(found.len() as u64);
        Some((found.into_iter().map(|(id, _)| id).collect(), index.len()))
    }

    fn offered(&self, rows: u64) {
        self.shared.offered.fetch_add(rows, Ordering::Relaxed);
    }

    /// The entries of archived pads, sorted, as last read for `mark`
    /// (`Engine::archived_rows` keeps them here).
    pub fn hidden(&self, mark: ArchiveMark) -> Option<Arc<[i64]>> {
        match &*lock(&self.shared.hidden) {
            Some((m, rows)) if *m == mark => Some(rows.clone()),
            _ => None,
        }
    }

    pub fn keep_hidden(&self, mark: ArchiveMark, rows: Arc<[i64]>) {
        *lock(&self.shared.hidden) = Some((mark, rows));
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

    /// Asks the worker to look for work now (someone waits for it).
    pub fn wake(&self) -> Result<()> {
        self.send(Msg::Wake)
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

struct Worker {
    shared: Arc<Shared>,
    source: Arc<dyn VectorSource>,
    config: SemanticConfig,
    data_dir: PathBuf,
    rx: mpsc::Receiver<Msg>,
    /// Where batches run (`lane.rs`): queries run here, at normal priority.
    lane: lane::Lane,
    /// Messages taken off the channel between two chunks of a batch that
    /// are not queries: handled once the batch is done.
    deferred: RefCell<VecDeque<Msg>>,
    /// Texts embedded per run within a batch (`embed_chunked`).
    chunk: Cell<usize>,
    /// The second copy of the model a backlog may run on.
    backlog: RefCell<backlog::Backlog>,
    /// Sends `RunDone` into the worker's own channel.
    wake: mpsc::Sender<Msg>,
    /// Queries taken off the channel while a run had the model: answered
    /// on `spare` if the run takes long, else after it.
    held: RefCell<Vec<Msg>>,
    /// A model for queries while a backlog's run holds the worker's (on a
    /// busy machine a run at idle priority can take seconds): loaded when a
    /// query has waited `lane::TARGET_RUN`, let go with the backlog.
    spare: RefCell<Spare>,
}

#[derive(Default)]
enum Spare {
    #[default]
    None,
    Loaded(Box<Model>),
    /// It did not load: queries wait for the run.
    Failed,
}

impl Worker {
    fn run(self) {
        let mut model = match self.start() {
            Ok(m) => m,
            Err(why) => {
                tracing::warn!("semantic search unavailable: {why}");
                *write(&self.shared.status) = Status::Unavailable(why);
                // Keep answering, so callers get the reason rather than a hang.
                while let Ok(msg) = self.rx.recv() {
                    match msg {
                        Msg::Stop => break,
                        Msg::Query(_, _, reply) => {
                            let _ = reply.send(Err(Error::Unavailable(
                                "semantic search is unavailable".into(),
                            )));
                        }
                        Msg::Reindex(reply) => {
                            let _ = reply.send(Err(Error::Unavailable(
                                "semantic search is unavailable".into(),
                            )));
                        }
                        Msg::Wake | Msg::RunDone => {}
                    }
                }
                return;
            }
        };
        let mut saved_at = Instant::now();
        let mut faults = crate::faults::Faults::default();
        let mut seen_epoch = None;
        'work: loop {
            // Messages first: a query means a person or agent is waiting.
            loop {
                let deferred = self.deferred.borrow_mut().pop_front();
                if let Some(msg) = deferred {
                    if !self.handle(msg, &mut model, &mut seen_epoch) {
                        break 'work;
                    }
                    continue;
                }
                match self.rx.try_recv() {
                    Ok(msg) => {
                        if !self.handle(msg, &mut model, &mut seen_epoch) {
                            break 'work;
                        }
                    }
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => break 'work,
                }
            }
            let epoch = self.source.write_epoch();
            let more = (epoch.is_none() || seen_epoch != epoch)
                && match self.embed_batch(&mut model) {
                    Ok(more) => {
                        faults.note::<Error>("embedding", Ok(()));
                        if !more {
                            seen_epoch = epoch;
                        }
                        more
                    }
                    Err(e) => {
                        faults.note("embedding", Err(e));
                        false
                    }
                };
            faults.note("updating the vector index", self.apply());
            if more {
                continue;
            }
            if saved_at.elapsed() >= self.config.save_every {
                self.save();
                saved_at = Instant::now();
            }
            match self.rx.recv_timeout(self.config.poll_every) {
                Ok(msg) => {
                    if !self.handle(msg, &mut model, &mut seen_epoch) {
                        break;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        // Apply what is committed, then save, so a restart starts warm.
        if let Err(e) = self.apply() {
            tracing::error!("updating the vector index failed: {e}");
        }
        self.save();
    }

    /// Answers one message; `false` means stop.
    fn handle(&self, msg: Msg, model: &mut Model, seen_epoch: &mut Option<u64>) -> bool {
        match msg {
            Msg::Stop => return false,
            Msg::Query(text, as_query, reply) => {
                let v = if as_query {
                    model.embed_query(&text)
                } else {
                    model.embed(&[text.as_str()]).map(|mut v| v.remove(0))
                };
                let v = v.map(Arc::from).map_err(Error::Internal);
                let _ = reply.send(v);
            }
            Msg::Reindex(reply) => {
                let _ = reply.send(self.reindex());
                *seen_epoch = None;
            }
            Msg::Wake => *seen_epoch = None,
            Msg::RunDone => {}
        }
        true
    }

    /// Loads ONNX Runtime, the model and the index.
    fn start(&self) -> std::result::Result<Model, String> {
        let runtime = runtime::init(&self.data_dir)?;
        let started = Instant::now();
        let model = self.load_model()?;
        let source = self.source.as_ref();
        let key = format!("{} / {}", model.name, vector::EMBEDDED_AS);
        if source.use_model(&key).map_err(|e| e.to_string())? {
            tracing::info!("embedding every entry with {}", model.name);
        }
        let index = VectorIndex::open(&self.data_dir, source)?;
        tracing::info!(
            "semantic search ready: {} ({} vectors) in {:.1}s, ONNX Runtime {}",
            model.name,
            index.len(),
            started.elapsed().as_secs_f64(),
            runtime.display()
        );
        *write(&self.shared.index) = Some(index);
        *write(&self.shared.status) = Status::Ready {
            model: model.name.clone(),
            runtime,
        };
        Ok(model)
    }

    fn load_model(&self) -> std::result::Result<Model, String> {
        Model::load_kind(
            self.config.kind,
            &self.config.model,
            self.config.precision.unwrap_or(match self.config.model {
                ModelSource::Dir(_) => Precision::Int8,
                ModelSource::Download => Precision::Fp32,
            }),
            self.config.threads,
            &self.data_dir,
        )
    }

    /// Embeds one batch of new or edited entries; `true` if there may be more.
    fn embed_batch(&self, model: &mut Model) -> Result<bool> {
        let started = Instant::now();
        let mut backlog = self.backlog.borrow_mut();
        let embedded = {
            let mut copy = backlog.before_batch(self.config.threads, self.lane.escalated(), || {
                self.load_model()
            });
            let mut embed = |texts: &[&str]| -> Vec<Option<Vec<f32>>> {
                // Texts of like length run together: a run is padded to its
                // longest text, so mixing a line with a page wastes the model
                // on padding. The vectors go back in the batch's order.
                let mut order: Vec<usize> = (0..texts.len()).collect();
                order.sort_by_key(|&i| texts[i].len());
                let sorted: Vec<&str> = order.iter().map(|&i| texts[i]).collect();
                let mut computed = Vec::with_capacity(texts.len());
                for chunk in lane::Chunks::new(&sorted, &self.chunk, self.config.batch) {
                    computed.extend(self.embed_chunk(model, copy.as_deref_mut(), chunk.texts));
                    chunk.done();
                    // A search waiting for its query's vector is answered now,
                    // at normal priority, not after the rest of the batch.
                    self.answer_queries(model);
                }
                let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
                for (vec, &i) in computed.into_iter().zip(&order) {
                    out[i] = vec;
                }
                out
            };
            self.source.embed_next(self.config.batch, &mut embed)
        };
        let n = match embedded {
            Ok(n) => n,
            Err(e) => {
                backlog.after_batch(false);
                return Err(e);
            }
        };
        let more = n.is_some_and(|n| n >= self.config.batch);
        backlog.after_batch(more);
        if !more && matches!(*self.spare.borrow(), Spare::Loaded(_)) {
            *self.spare.borrow_mut() = Spare::None;
            tracing::debug!("the backlog is embedded; the model kept for queries is let go");
        }
        let Some(n) = n else {
            return Ok(false);
        };
        let mut e = lock(&self.shared.embedded);
        e.0 += n as u64;
        e.1 += started.elapsed();
        Ok(true)
    }

    /// Embeds texts on the lane (`lane.rs`): with a second copy of the
    /// model, every other text on it, at the same time.
    fn embed_chunk(
        &self,
        model: &mut Model,
        copy: Option<&mut Model>,
        texts: &[&str],
    ) -> Vec<Option<Vec<f32>>> {
        let wake = &self.wake;
        let wake = move || {
            let _ = wake.send(Msg::RunDone);
        };
        let mut serve = |done: &AtomicBool| self.meanwhile(done);
        let mut waiting = lane::Waiting {
            wake: &wake,
            serve: &mut serve,
        };
        let Some(copy) = copy.filter(|_| texts.len() >= 2) else {
            let vectors = self.lane.run(|| model.embed(texts), &mut waiting);
            return model.or_one_by_one(texts, vectors);
        };
        // Alternate texts, so both halves are alike in length.
        let (evens, odds): (Vec<&str>, Vec<&str>) = (
            texts.iter().step_by(2).copied().collect(),
            texts.iter().skip(1).step_by(2).copied().collect(),
        );
        let (a, b) = self
            .lane
            .run_pair(|| model.embed(&evens), || copy.embed(&odds), &mut waiting);
        let mut a = model.or_one_by_one(&evens, a).into_iter();
        let mut b = model.or_one_by_one(&odds, b).into_iter();
        self.shared
            .on_copy
            .fetch_add(odds.len() as u64, std::sync::atomic::Ordering::Relaxed);
        (0..texts.len())
            .map(|i| if i % 2 == 0 { a.next() } else { b.next() }.flatten())
            .collect()
    }

    /// While a run of a batch has the model: takes the next message; a
    /// query that waited `lane::TARGET_RUN` (the length of a run on a free
    /// CPU) and the run is still not done is answered on the spare model,
    /// at this thread's normal priority. Other messages wait for the batch
    /// to end (`deferred`).
    fn meanwhile(&self, done: &AtomicBool) {
        let msg = if self.held.borrow().is_empty() {
            self.rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            self.rx.recv_timeout(lane::TARGET_RUN)
        };
        match msg {
            Ok(Msg::RunDone) => {}
            Ok(query @ Msg::Query(..)) => self.held.borrow_mut().push(query),
            Ok(other) => self.deferred.borrow_mut().push_back(other),
            Err(RecvTimeoutError::Timeout) if !done.load(Ordering::Acquire) => {
                let mut spare = self.spare.borrow_mut();
                if matches!(*spare, Spare::None) {
                    *spare = match self.load_model() {
                        Ok(m) => {
                            tracing::info!(
                                "a query waited behind the backlog: queries now have a model of their own until it is embedded"
                            );
                            Spare::Loaded(Box::new(m))
                        }
                        Err(why) => {
                            tracing::warn!("a model for queries did not load ({why}); they wait for the backlog's runs");
                            Spare::Failed
                        }
                    };
                }
                if let Spare::Loaded(m) = &mut *spare {
                    for query in self.held.take() {
                        self.handle(query, m, &mut None);
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            // The worker holds a sender: its channel never closes.
            Err(RecvTimeoutError::Disconnected) => {}
        }
    }

    /// Answers the queries held during a run and those waiting on the
    /// channel; other messages wait for the batch to end (`deferred`).
    fn answer_queries(&self, model: &mut Model) {
        for query in self.held.take() {
            self.handle(query, model, &mut None);
        }
        while let Ok(msg) = self.rx.try_recv() {
            match msg {
                Msg::Query(..) => {
                    let mut none = None;
                    self.handle(msg, model, &mut none);
                }
                other => self.deferred.borrow_mut().push_back(other),
            }
        }
    }

    /// Applies new rows of the stored vectors to the index; rebuilds it when
    /// they were cleared (`reindex`, here or on another engine).
    fn apply(&self) -> std::result::Result<(), String> {
        let source = self.source.as_ref();
        let (generation, last_n) = (source.generation(), source.last_n());
        let (generation, last_n) = (
            generation.map_err(|e| e.to_string())?,
            last_n.map_err(|e| e.to_string())?,
        );
        let (cleared, behind) = read(&self.shared.index)
            .as_ref()
            .map_or((false, false), |i| {
                (i.generation() != generation, last_n > i.applied())
            });
        if cleared {
            let fresh = VectorIndex::rebuild(source)?;
            *write(&self.shared.index) = Some(fresh);
            lock(&self.shared.cache).clear();
        } else if behind {
            if let Some(index) = write(&self.shared.index).as_mut() {
                index.catch_up(source)?;
            }
        }
        let applied = read(&self.shared.index).as_ref().map_or(0, |i| i.applied());
        let marks = source.marks(applied);
        self.shared.indexed.send_if_modified(|at| {
            let moved = *at != marks;
            *at = marks;
            moved
        });
        Ok(())
    }

    fn save(&self) {
        // Shared access: searches go on meanwhile (only this thread changes the index).
        let guard = read(&self.shared.index);
        let Some(index) = guard.as_ref().filter(|i| i.unsaved()) else {
            return;
        };
        match index.save(&self.data_dir) {
            Ok(()) => {
                let upto = index.applied();
                drop(guard);
                if let Err(e) = self.source.prune_tombstones(upto) {
                    tracing::warn!("pruning vector tombstones failed: {e}");
                }
            }
            Err(e) => tracing::warn!("{e}"),
        }
    }

    fn reindex(&self) -> Result<()> {
        let source = self.source.as_ref();
        source.clear()?;
        let fresh = VectorIndex::rebuild(source).map_err(Error::Internal)?;
        *write(&self.shared.index) = Some(fresh);
        lock(&self.shared.cache).clear();
        tracing::info!("re-embedding every entry");
        Ok(())
    }
}

/// A small LRU of query embeddings.
#[derive(Default)]
struct QueryCache {
    map: HashMap<String, Arc<[f32]>>,
    order: VecDeque<String>,
}

impl QueryCache {
    fn get(&mut self, q: &str) -> Option<Arc<[f32]>> {
        let v = self.map.get(q)?.clone();
        if let Some(at) = self.order.iter().position(|k| k == q) {
            let k = self.order.remove(at).expect("present");
            self.order.push_front(k);
        }
        Some(v)
    }

    fn put(&mut self, q: String, v: Arc<[f32]>) {
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
        let mut c = QueryCache::default();
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
