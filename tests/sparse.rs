//! The learned sparse model (SPLADE-tiny, the ONNX graph scripts/model.sh
//! builds from the PyPI wheel) with real ONNX Runtime.

mod common;

use std::collections::BTreeMap;

use common::splade_model_dir;
use scratchpad::semantic::runtime;
use scratchpad::semantic::splade::{score, Splade};
use serde_json::Value;

fn load() -> Splade {
    let data = tempfile::tempdir().unwrap();
    runtime::init(data.path()).expect("ONNX Runtime loads (run scripts/setup.sh)");
    Splade::load(&splade_model_dir(), 1).expect("SPLADE-tiny loads")
}

/// The engine's term weights against tests/data/splade-reference.json,
/// computed from the original fp32 weights in numpy by
/// scripts/splade_reference.py (no ONNX, no fastembed): the same terms, the
/// same weights — one text at a time and padded in one batch.
#[test]
fn term_weights_match_the_reference_model() {
    let reference: Value =
        serde_json::from_str(include_str!("data/splade-reference.json")).unwrap();
    let sentences: Vec<&str> = reference["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let expected: Vec<BTreeMap<u32, f32>> = reference["weights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            w.as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.parse().unwrap(), v.as_f64().unwrap() as f32))
                .collect()
        })
        .collect();
    let mut model = load();
    let batched = model.encode(&sentences).unwrap();
    let mut worst = 0f32;
    for (i, want) in expected.iter().enumerate() {
        let single = model.encode(&[sentences[i]]).unwrap().remove(0);
        for got in [&single, &batched[i]] {
            let got: BTreeMap<u32, f32> = got.iter().copied().collect();
            // A term at the edge of zero may fall either side in fp32.
            for id in got.keys().chain(want.keys()) {
                let (g, w) = (got.get(id).copied(), want.get(id).copied());
                let diff = (g.unwrap_or(0.0) - w.unwrap_or(0.0)).abs();
                assert!(
                    diff < 1e-3,
                    "{:?}: term {id} ({:?}) weighs {g:?}, the reference {w:?}",
                    sentences[i],
                    model.piece(*id)
                );
                worst = worst.max(diff);
            }
        }
    }
    println!("largest difference from the reference: {worst:.2e}");
}

/// What makes the list worth having: a note scores for a word it does not
/// contain but means, and not for an unrelated one.
#[test]
fn a_note_scores_for_words_it_means() {
    let mut model = load();
    let note = "I adopted a puppy from the shelter last weekend";
    let terms = model.encode(&[note]).unwrap().remove(0);
    let dog = model.query_terms("dog");
    assert_eq!(dog.len(), 1, "one word piece, no [CLS]/[SEP]: {dog:?}");
    assert!(!note.contains("dog"));
    assert!(
        score(&dog, &terms) > 0.5,
        "'dog' in {note:?}: {}",
        score(&dog, &terms)
    );
    assert_eq!(score(&model.query_terms("password"), &terms), 0.0);
    let puppy = model.query_terms("puppy shelter");
    assert!(score(&puppy, &terms) > score(&dog, &terms));
}

/// Encoding in runs bounded by `RUN_PIECES` changes nothing: long and short
/// notes together give each the terms it has alone.
#[test]
fn runs_bounded_by_pieces_give_each_note_its_own_terms() {
    let mut model = load();
    let long = "the staging database moved to a new host after the disk filled up; ".repeat(12);
    let texts: Vec<String> = (0..6)
        .map(|i| match i % 3 {
            0 => format!("short note {i} about a puppy"),
            1 => format!("{long} note {i}"),
            _ => format!("a medium note {i}: the deploy failed twice and was rolled back"),
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let together = model.encode(&refs).unwrap();
    assert_eq!(together.len(), texts.len());
    for (text, terms) in refs.iter().zip(&together) {
        let alone = model.encode(&[*text]).unwrap().remove(0);
        assert_eq!(terms.len(), alone.len(), "{text}");
        for ((a, wa), (b, wb)) in terms.iter().zip(&alone) {
            assert_eq!(a, b, "{text}");
            assert!((wa - wb).abs() < 1e-4, "{text}: {wa} against {wb}");
        }
    }
}
