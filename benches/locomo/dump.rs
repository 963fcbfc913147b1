//! `BENCH_DUMP=<file>`: what each list scored, written as JSON lines — a
//! conversation's turns (speaker, text, the stored vector, the learned
//! sparse terms), then each of its questions (category, evidence, the
//! query's vector, BM25's score of every turn, the query's idf-weighted
//! pieces, the engine's hybrid ranking) — so a ranking idea can be tried
//! on the same lists in seconds, before it is built into the engine.

use std::io::Write;

use scratchpad::semantic::splade::Terms;
use serde_json::json;

use crate::data::Conversation;
use crate::score::Question;

pub struct Dump {
    out: std::io::BufWriter<std::fs::File>,
    conversation: String,
}

impl Dump {
    pub fn create(path: &str) -> Dump {
        let file =
            std::fs::File::create(path).expect("BENCH_DUMP names a file that can be written");
        Dump {
            out: std::io::BufWriter::new(file),
            conversation: String::new(),
        }
    }

    pub fn conversation(&mut self, conv: &Conversation, vectors: &[Vec<f32>], sparse: &[Terms]) {
        self.conversation = conv.id.clone();
        let turns: Vec<_> = conv
            .turns
            .iter()
            .zip(vectors)
            .zip(sparse)
            .map(|(((id, speaker, text), v), terms)| {
                json!({"id": id, "speaker": speaker, "text": text, "vector": v, "sparse": terms})
            })
            .collect();
        self.line(json!({"conversation": conv.id, "turns": turns}));
    }

    pub fn question(
        &mut self,
        q: &Question,
        vector: &[f32],
        words: &[f64],
        pieces: &Terms,
        engine: &[String],
    ) {
        self.line(json!({
            "conversation": self.conversation,
            "question": q.text,
            "category": q.category,
            "evidence": q.evidence,
            "vector": vector,
            "words": words,
            "pieces": pieces,
            "engine": engine,
        }));
    }

    fn line(&mut self, v: serde_json::Value) {
        serde_json::to_writer(&mut self.out, &v).expect("the dump is written");
        self.out.write_all(b"\n").expect("the dump is written");
    }
}

impl Drop for Dump {
    fn drop(&mut self) {
        let _ = self.out.flush();
    }
}
