//! The embedding worker: one thread owning the model. It answers query
//! embeddings first, embeds the backlog in batches on the lane
//! (`lane.rs`) — serving queries while a run is on its own thread, on a
//! model kept for them if the run is starved — applies the stored vectors
//! to the index and saves it.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use super::pace::{Next, Pace};
use super::splade::{self, Splade, Terms};
use super::{backlog, lane, lock, read, runtime, vector, write};
use super::{Ask, Encoded, Model, ModelSource, Msg, Note, Precision, SemanticConfig};
use super::{Shared, Status};
use super::{VectorIndex, VectorSource};
use crate::error::{Error, Result};

/// Starts the worker on a thread of its own (`pad-embed`).
pub(super) fn spawn(
    shared: Arc<Shared>,
    source: Arc<dyn VectorSource>,
    config: SemanticConfig,
    data_dir: PathBuf,
    rx: mpsc::Receiver<Msg>,
    wake: mpsc::Sender<Msg>,
) -> JoinHandle<()> {
    let helper = config.helper;
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
                sparse: RefCell::new(None),
                pace: RefCell::new(Pace::new(Instant::now())),
            }
            .run()
        })
        .expect("spawn the embedding worker")
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
    /// The learned sparse model (`splade.rs`), when its folder is beside
    /// the embedding model's: each note's terms are encoded with its vector.
    sparse: RefCell<Option<Splade>>,
    /// When a run may start (`pace.rs`): not while writes stream in.
    pace: RefCell<Pace>,
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
            Err(why) => return self.unavailable(why),
        };
        let mut saved_at = Instant::now();
        let mut faults = crate::faults::Faults::default();
        let mut seen_epoch = None;
        // When a write (or a wake) last gave the worker something to look
        // at: a store that counts its writes says so; for one that does not
        // (PostgreSQL), a batch that found something to embed.
        let mut changed_at = Instant::now();
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
            if epoch.is_some() && seen_epoch != epoch {
                changed_at = Instant::now();
            }
            let work = epoch.is_none() || seen_epoch != epoch;
            let limit = match work.then(|| self.next_run()) {
                Some(Next::Wait(d)) => {
                    // Writes are streaming: stay out of their way a while
                    // (saving the index, a minute's work, as usual).
                    self.save_when_due(&mut saved_at);
                    match self.rx.recv_timeout(d) {
                        Ok(msg) => match self.handle(msg, &mut model, &mut seen_epoch) {
                            true => continue,
                            false => break,
                        },
                        Err(RecvTimeoutError::Timeout) => continue,
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                Some(Next::Run(limit)) => limit,
                None => 0,
            };
            let more = work
                && match self.embed_batch(&mut model, limit) {
                    Ok(more) => {
                        faults.note::<Error>("embedding", Ok(()));
                        if more {
                            changed_at = Instant::now();
                        } else {
                            seen_epoch = epoch;
                            self.pace.borrow_mut().caught_up();
                        }
                        more
                    }
                    Err(e) => {
                        faults.note("embedding", Err(e));
                        false
                    }
                };
            faults.note("updating the vector index", self.apply());
            // Saved when due between batches too: a stream or a flood that
            // keeps a backlog for long does not keep the index unsaved.
            self.save_when_due(&mut saved_at);
            if more {
                continue;
            }
            let poll = if changed_at.elapsed() >= crate::clock::QUIET {
                crate::clock::QUIET.max(self.config.poll_every)
            } else {
                self.config.poll_every
            };
            match self.rx.recv_timeout(poll) {
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

    /// Says why semantic search is unavailable, and keeps answering until
    /// stopped, so callers get the reason rather than a hang.
    fn unavailable(&self, why: String) {
        tracing::warn!("semantic search unavailable: {why}");
        *write(&self.shared.status) = Status::Unavailable(why);
        let refused = || Error::Unavailable("semantic search is unavailable".into());
        while let Ok(msg) = self.rx.recv() {
            match msg {
                Msg::Stop => break,
                Msg::Query(Ask::Vector(_, _, reply)) => {
                    let _ = reply.send(Err(refused()));
                }
                Msg::Query(Ask::Terms(_, reply)) => {
                    let _ = reply.send(Err(refused()));
                }
                Msg::Reindex(reply) => {
                    let _ = reply.send(Err(refused()));
                }
                Msg::Wake(_) | Msg::RunDone => {}
            }
        }
    }

    /// Answers one message; `false` means stop.
    fn handle(&self, msg: Msg, model: &mut Model, seen_epoch: &mut Option<u64>) -> bool {
        match msg {
            Msg::Stop => return false,
            Msg::Query(Ask::Vector(text, as_query, reply)) => {
                let v = if as_query {
                    model.embed_query(&text)
                } else {
                    model.embed(&[text.as_str()]).map(|mut v| v.remove(0))
                };
                let v = v.map(Arc::from).map_err(Error::Internal);
                let _ = reply.send(v);
            }
            Msg::Query(Ask::Terms(text, reply)) => match self.sparse.try_borrow_mut() {
                // A batch's run has the sparse model: answered once it
                // ends (`answer_queries`), as a run is bounded.
                Err(_) => self
                    .held
                    .borrow_mut()
                    .push(Msg::Query(Ask::Terms(text, reply))),
                Ok(mut sparse) => {
                    let terms = match sparse.as_mut() {
                        None => Ok(None),
                        Some(splade) => splade
                            .encode_question(&text)
                            .map(|t| Some(Arc::new(t)))
                            .map_err(Error::Internal),
                    };
                    let _ = reply.send(terms);
                }
            },
            Msg::Reindex(reply) => {
                let _ = reply.send(self.reindex());
                *seen_epoch = None;
            }
            Msg::Wake(hurry) => {
                *seen_epoch = None;
                if hurry {
                    self.pace.borrow_mut().hurry(Instant::now());
                }
            }
            Msg::RunDone => {}
        }
        true
    }

    /// Loads ONNX Runtime, the model and the index.
    fn start(&self) -> std::result::Result<Model, String> {
        let runtime = runtime::init(&self.data_dir)?;
        let started = Instant::now();
        let model = self.load_model()?;
        let sparse = self.load_sparse();
        let source = self.source.as_ref();
        // The stored vectors and terms are remade when either model
        // changes: the key names the sparse model when one is configured,
        // loaded or not, so a sparse model that fails to load never costs
        // the stored vectors (its notes then have no terms until it loads
        // and `pad reindex` runs).
        let key = match &self.config.sparse {
            Some(_) => format!(
                "{} / {} + {} ({} pieces)",
                model.name,
                vector::EMBEDDED_AS,
                splade::NAME,
                splade::MAX_TOKENS
            ),
            None => format!("{} / {}", model.name, vector::EMBEDDED_AS),
        };
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
        *write(&self.shared.pieces) = sparse.as_ref().map(Splade::pieces);
        *self.sparse.borrow_mut() = sparse;
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

    /// The sparse model, when the configuration names its folder.
    fn load_sparse(&self) -> Option<Splade> {
        let dir = self.config.sparse.as_ref()?;
        match Splade::load(dir, self.config.threads) {
            Ok(s) => Some(s),
            Err(why) => {
                tracing::warn!(
                    "the sparse model did not load ({why}); search runs without the sparse list"
                );
                None
            }
        }
    }

    /// Whether a run may start now, by the engine's own writes (`pace.rs`).
    fn next_run(&self) -> Next {
        let now = Instant::now();
        let mut pace = self.pace.borrow_mut();
        pace.saw(self.source.own_writes(), now);
        pace.next(self.config.batch, now, || self.source.backlog())
    }

    /// Between two chunks of a batch: while writes stream, waits (answering
    /// queries; a search that waits hurries it), up to the pace's bound. Returns the most
    /// notes the next chunk may take. Only on a store no other engine
    /// shares (one that counts its writes, `write_epoch`): on PostgreSQL a
    /// batch holds its queue rows in a transaction, which other engines skip
    /// and their searches would wait for, so a batch taken runs whole.
    fn between_chunks(&self, model: &mut Model) -> usize {
        if self.source.write_epoch().is_none() {
            return self.config.batch;
        }
        loop {
            let wait = match self.next_run() {
                Next::Run(limit) => return limit,
                Next::Wait(d) => d,
            };
            match self.rx.recv_timeout(wait) {
                Ok(query @ Msg::Query(..)) => {
                    self.handle(query, model, &mut None);
                }
                Ok(Msg::RunDone) | Err(RecvTimeoutError::Timeout) => {}
                Ok(wake @ Msg::Wake(hurry)) => {
                    // A search waits: the rest of this batch goes at once.
                    if hurry {
                        self.pace.borrow_mut().hurry(Instant::now());
                    }
                    self.defer(wake);
                }
                Ok(other) => {
                    // A reindex or a stop: after this batch, at once.
                    self.defer(other);
                    return self.config.batch;
                }
                Err(RecvTimeoutError::Disconnected) => return self.config.batch,
            }
        }
    }

    /// Embeds one batch of at most `limit` new or edited entries; `true`
    /// if there may be more.
    fn embed_batch(&self, model: &mut Model, limit: usize) -> Result<bool> {
        let started = Instant::now();
        // Time spent waiting for writes to pause is not encoding time.
        let mut paused = std::time::Duration::ZERO;
        let mut backlog = self.backlog.borrow_mut();
        let embedded = {
            let mut copy = backlog.before_batch(self.config.threads, self.lane.escalated(), || {
                self.load_model()
            });
            let mut embed = |notes: &[Note]| -> Vec<Option<Encoded>> {
                // Texts of like length run together: a run is padded to its
                // longest text, so mixing a line with a page wastes the model
                // on padding. The results go back in the batch's order.
                let texts: Vec<String> = notes
                    .iter()
                    .map(|n| vector::embedded_text(n.author, n.content))
                    .collect();
                let mut order: Vec<usize> = (0..texts.len()).collect();
                order.sort_by_key(|&i| texts[i].len());
                let sorted: Vec<&str> = order.iter().map(|&i| texts[i].as_str()).collect();
                let contents: Vec<&str> = order.iter().map(|&i| notes[i].content).collect();
                let mut computed = Vec::with_capacity(texts.len());
                let mut done = 0;
                let mut chunks = lane::Chunks::new(&sorted, &self.chunk, self.config.batch);
                // After the first chunk, as many as the pace allows.
                let mut cap = limit;
                while let Some(chunk) = chunks.next_up_to(cap) {
                    let n = chunk.texts.len();
                    let vectors = self.embed_chunk(model, copy.as_deref_mut(), chunk.texts);
                    let terms = self.sparse_chunk(&contents[done..done + n]);
                    computed.extend(vectors.into_iter().zip(terms));
                    done += n;
                    chunk.done();
                    // A search waiting for its query's vector is answered now,
                    // at normal priority, not after the rest of the batch.
                    self.answer_queries(model);
                    if done < sorted.len() {
                        let pause = Instant::now();
                        cap = self.between_chunks(model);
                        paused += pause.elapsed();
                    }
                }
                let mut out: Vec<Option<Encoded>> = vec![None; texts.len()];
                for ((vector, terms), &i) in computed.into_iter().zip(&order) {
                    out[i] = vector.map(|vector| Encoded { vector, terms });
                }
                out
            };
            self.source.embed_next(limit, &mut embed)
        };
        let n = match embedded {
            Ok(n) => n,
            Err(e) => {
                backlog.after_batch(false);
                return Err(e);
            }
        };
        let more = n.is_some_and(|n| n >= limit);
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
        e.1 += started.elapsed().saturating_sub(paused);
        if n > 0 {
            self.shared.runs.fetch_add(1, Ordering::Relaxed);
        }
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
        let Some(copy) = copy.filter(|_| texts.len() >= 2) else {
            let vectors = self.on_lane(|lane, waiting| lane.run(|| model.embed(texts), waiting));
            return model.or_one_by_one(texts, vectors);
        };
        // Alternate texts, so both halves are alike in length.
        let (evens, odds): (Vec<&str>, Vec<&str>) = (
            texts.iter().step_by(2).copied().collect(),
            texts.iter().skip(1).step_by(2).copied().collect(),
        );
        let (a, b) = self.on_lane(|lane, waiting| {
            lane.run_pair(|| model.embed(&evens), || copy.embed(&odds), waiting)
        });
        let mut a = model.or_one_by_one(&evens, a).into_iter();
        let mut b = model.or_one_by_one(&odds, b).into_iter();
        self.shared
            .on_copy
            .fetch_add(odds.len() as u64, std::sync::atomic::Ordering::Relaxed);
        (0..texts.len())
            .map(|i| if i % 2 == 0 { a.next() } else { b.next() }.flatten())
            .collect()
    }

    /// Runs `run` on the lane, serving queries meanwhile (`meanwhile`).
    fn on_lane<T>(&self, run: impl FnOnce(&lane::Lane, &mut lane::Waiting) -> T) -> T {
        let wake = &self.wake;
        let wake = move || {
            let _ = wake.send(Msg::RunDone);
        };
        let mut serve = |done: &AtomicBool| self.meanwhile(done);
        let mut waiting = lane::Waiting {
            wake: &wake,
            serve: &mut serve,
        };
        run(&self.lane, &mut waiting)
    }

    /// The sparse terms of `texts` (the notes' contents), on the lane as
    /// the vectors are; none without the sparse model. A failed run is
    /// done again text by text; a text that still fails has no terms.
    fn sparse_chunk(&self, texts: &[&str]) -> Vec<Terms> {
        let mut sparse = self.sparse.borrow_mut();
        let Some(splade) = sparse.as_mut() else {
            return vec![Terms::new(); texts.len()];
        };
        let run = self.on_lane(|lane, waiting| lane.run(|| splade.encode(texts), waiting));
        match run.and_then(|terms| match terms.len() == texts.len() {
            true => Ok(terms),
            false => Err(format!("{} terms for {} texts", terms.len(), texts.len())),
        }) {
            Ok(terms) => terms,
            Err(e) => {
                tracing::warn!("sparse encoding of a batch failed ({e}); encoding one by one");
                texts
                    .iter()
                    .map(|t| match splade.encode(&[*t]) {
                        Ok(mut terms) => terms.remove(0),
                        Err(e) => {
                            tracing::warn!(
                                "an entry has no sparse terms ({e}); the sparse list leaves it out"
                            );
                            Terms::new()
                        }
                    })
                    .collect()
            }
        }
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
            Ok(other) => {
                // A search waits: the chunks after this run go at once.
                if matches!(other, Msg::Wake(true)) {
                    self.pace.borrow_mut().hurry(Instant::now());
                }
                self.defer(other)
            }
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
                other => self.defer(other),
            }
        }
    }

    /// Keeps a message for after the batch; a search that waits hurries
    /// the batch too.
    fn defer(&self, msg: Msg) {
        if matches!(msg, Msg::Wake(true)) {
            self.pace.borrow_mut().hurry(Instant::now());
        }
        self.deferred.borrow_mut().push_back(msg);
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

    /// Saves the index when `save_every` has passed since `saved_at`.
    fn save_when_due(&self, saved_at: &mut Instant) {
        if saved_at.elapsed() >= self.config.save_every {
            self.save();
            *saved_at = Instant::now();
        }
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
