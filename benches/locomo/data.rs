//! The conversations the LoCoMo bench ranks: LoCoMo's, REALTALK's (its
//! authors' second set: real 21-day chats in LoCoMo's layout), or our own
//! paraphrase set; each turn a note, each question with its answering turns.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use super::evidence::{self, Reading};
use super::paraphrases::{DISTRACTORS, PARAPHRASES};
use super::score::Question;

/// A data set's question categories, as its authors name them.
pub type Categories = &'static [(i64, &'static str)];

/// LoCoMo's, as its evaluation names them.
pub const LOCOMO_CATEGORIES: Categories = &[
    (1, "multi-hop"),
    (2, "temporal"),
    (3, "open-domain"),
    (4, "single-hop"),
    (5, "adversarial"),
];

/// REALTALK's (its README and paper).
pub const REALTALK_CATEGORIES: Categories = &[(1, "multi-hop"), (2, "temporal"), (3, "inference")];

pub struct Conversation {
    pub id: String,
    /// (turn id, speaker, text)
    pub turns: Vec<(String, String, String)>,
    pub questions: Vec<Question>,
}

/// What the bench ranks: the conversations, their data set's name (the
/// pads are named after it), its categories, and what reading its
/// evidence dropped (REALTALK's; LoCoMo's ids are taken as listed, as its
/// own evaluation takes them).
pub struct Set {
    pub name: &'static str,
    pub categories: Categories,
    pub conversations: Vec<Conversation>,
    pub evidence: Option<Reading>,
}

/// Our own small set (tests/common/paraphrases.rs) as one conversation:
/// its notes by "agent", each paraphrased question answered by its note.
pub fn paraphrases() -> Set {
    let notes = PARAPHRASES
        .iter()
        .map(|(_, note)| *note)
        .chain(DISTRACTORS.iter().copied());
    let conversation = Conversation {
        id: "paraphrases".into(),
        turns: notes
            .enumerate()
            .map(|(i, note)| (i.to_string(), "agent".into(), note.to_string()))
            .collect(),
        questions: PARAPHRASES
            .iter()
            .enumerate()
            .map(|(i, (question, _))| Question {
                text: question.to_string(),
                category: 4,
                evidence: vec![format!("paraphrases/{i}")],
            })
            .collect(),
    };
    Set {
        name: "paraphrases",
        categories: LOCOMO_CATEGORIES,
        conversations: vec![conversation],
        evidence: None,
    }
}

/// LoCoMo's conversations `wanted` ("26", …) from `path`: the zip unpacked
/// (a folder of `26.json` …) or `locomo10.json` (a list of them).
pub fn locomo(path: &Path, wanted: &[String]) -> Set {
    let mut raw: Vec<(String, Value)> = Vec::new();
    if path.is_dir() {
        for id in wanted {
            raw.push((id.clone(), json_file(&path.join(format!("{id}.json")))));
        }
    } else {
        let all = json_file(path);
        for c in all.as_array().expect("a list of conversations") {
            let id = c["sample_id"]
                .as_str()
                .unwrap_or("")
                .trim_start_matches("conv-");
            if wanted.iter().any(|w| w == id) {
                let mut sessions = c["conversation"].clone();
                sessions["qa"] = c["qa"].clone();
                raw.push((id.to_string(), sessions));
            }
        }
    }
    let conversations = raw
        .into_iter()
        .map(|(id, c)| {
            let questions = c["qa"]
                .as_array()
                .unwrap()
                .iter()
                .map(|q| Question {
                    text: q["question"].as_str().unwrap_or("").to_string(),
                    category: q["category"].as_i64().unwrap_or(0),
                    evidence: listed(q)
                        .into_iter()
                        .map(|s| format!("{id}/{}", s.trim()))
                        .collect(),
                })
                .collect();
            Conversation {
                turns: turns(&c, "text"),
                id,
                questions,
            }
        })
        .collect();
    Set {
        name: "locomo",
        categories: LOCOMO_CATEGORIES,
        conversations,
        evidence: None,
    }
}

/// REALTALK's chats `wanted` ("1", …) from `dir`, its `data` folder
/// (`Chat_1_Emi_Elise.json` …). A question's evidence is read with
/// `evidence::read`; a question left with none is dropped.
pub fn realtalk(dir: &Path, wanted: &[String]) -> Set {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|f| f.ok().map(|f| f.path()))
        .collect();
    let mut total = Reading::default();
    let conversations = wanted
        .iter()
        .map(|id| {
            let prefix = format!("Chat_{id}_");
            let file = files
                .iter()
                .find(|f| {
                    f.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".json"))
                })
                .unwrap_or_else(|| panic!("no {prefix}*.json in {}", dir.display()));
            let c = json_file(file);
            let turns = turns(&c, "clean_text");
            let ids: Vec<String> = turns.iter().map(|t| t.0.clone()).collect();
            let known: HashSet<&str> = ids.iter().map(String::as_str).collect();
            let mut questions = Vec::new();
            for q in c["qa"].as_array().unwrap() {
                let (evidence, reading) = evidence::read(&listed(q), &ids, &known);
                total.add(reading);
                if evidence.is_empty() {
                    continue;
                }
                questions.push(Question {
                    text: q["question"].as_str().unwrap_or("").to_string(),
                    category: q["category"].as_i64().unwrap_or(0),
                    evidence: evidence.into_iter().map(|e| format!("{id}/{e}")).collect(),
                });
            }
            Conversation {
                id: id.clone(),
                turns,
                questions,
            }
        })
        .collect();
    Set {
        name: "realtalk",
        categories: REALTALK_CATEGORIES,
        conversations,
        evidence: Some(total),
    }
}

fn json_file(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A question's evidence entries as listed.
fn listed(q: &Value) -> Vec<&str> {
    q["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The turns of every `session_N` in order of N, each (id, speaker, text):
/// the text from `field`, an image's caption kept as "(image: …)".
fn turns(c: &Value, field: &str) -> Vec<(String, String, String)> {
    let mut sessions: Vec<(u32, &Vec<Value>)> = c
        .as_object()
        .unwrap()
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix("session_")?.parse().ok()?, v.as_array()?)))
        .collect();
    sessions.sort_by_key(|s| s.0);
    let mut turns = Vec::new();
    for (_, session) in sessions {
        for t in session {
            let mut text = t[field].as_str().unwrap_or("").to_string();
            if let Some(caption) = t.get("blip_caption").and_then(Value::as_str) {
                text.push_str(&format!(" (image: {caption})"));
            }
            turns.push((
                t["dia_id"].as_str().unwrap().to_string(),
                t["speaker"].as_str().unwrap().to_string(),
                text,
            ));
        }
    }
    turns
}

/// The engine's author for a speaker: lower-cased, each run of what an
/// author may not hold (a space: REALTALK's "Fahim Khan") one '-'.
pub fn author_of(speaker: &str) -> String {
    let mut author = String::new();
    for c in speaker.trim().to_lowercase().chars() {
        match c.is_alphanumeric() || matches!(c, '.' | '_' | ':' | '@' | '-') {
            true => author.push(c),
            false if !author.ends_with('-') => author.push('-'),
            false => {}
        }
    }
    author
}
