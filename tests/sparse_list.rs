//! Hybrid search's third list through the engine, on SQLite and (with
//! `PAD_TEST_BACKEND=postgres`) PostgreSQL: the learned sparse terms the
//! embedding worker stores beside each vector (SPLADE-tiny, real model,
//! real ONNX Runtime), searched by the question encoded by the same model.

mod common;

use common::*;
use scratchpad::client::Client;
use scratchpad::semantic::splade::Splade;
use scratchpad::semantic::{runtime, Precision};
use serde_json::{json, Value};

const PUPPY: &str = "I adopted a puppy from the shelter last weekend";
const OTHERS: [&str; 4] = [
    "the deploy failed on staging because the disk was full",
    "password rotation for the database is due on friday",
    "lunch order: two salads and a soup for the review meeting",
    "the printer on the third floor jams on double-sided pages",
];

async fn search(c: &mut Client, query: &str) -> Value {
    ok(
        c,
        "search",
        json!({"query": query, "mode": "hybrid", "explain": true, "limit": 5}),
    )
    .await
}

fn hit<'a>(r: &'a Value, content: &str) -> Option<&'a Value> {
    r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["entry"]["content"] == content)
}

/// Whether the sparse list found the hit.
fn by_sparse(hit: &Value) -> bool {
    hit["found_by"]
        .as_array()
        .unwrap()
        .contains(&json!("sparse"))
}

/// The piece `word` as the sparse list weighed it: (notes holding it, weight).
fn piece(r: &Value, word: &str) -> Option<(u64, f64)> {
    r["explain"]["pieces"]
        .as_array()?
        .iter()
        .find(|p| p["word"] == word)
        .map(|p| {
            (
                p["entries"].as_u64().unwrap(),
                p["weight"].as_f64().unwrap(),
            )
        })
}

/// The weight SPLADE-tiny gives `piece` when it encodes `question` (the
/// model loaded here, apart from the engine's).
fn encoded_weight(question: &str, piece: &str) -> f64 {
    let data = tempfile::tempdir().unwrap();
    runtime::init(data.path()).expect("ONNX Runtime loads (run scripts/setup.sh)");
    let mut splade = Splade::load(&splade_model_dir(), 1).expect("SPLADE-tiny loads");
    let terms = splade.encode(&[question]).unwrap().remove(0);
    terms
        .iter()
        .find(|(id, _)| splade.piece(*id).as_deref() == Some(piece))
        .map(|(_, w)| *w as f64)
        .unwrap_or_else(|| panic!("{question:?} encodes {piece:?}"))
}

/// "dog" is in no note; the note about a puppy holds it among its terms,
/// and the sparse list ranks it first by that (the words cannot). Editing the note away from
/// pets takes the term (and its count) away; deleting a note takes its
/// terms away.
#[tokio::test]
async fn a_note_is_found_by_a_word_it_means_and_loses_it_when_edited() {
    let h = Harness::with(|c| c.semantic = Some(sparse_config())).await;
    let mut c = h.client().await;
    let puppy = add(&mut c, "pets", PUPPY).await;
    for other in OTHERS {
        add(&mut c, "work", other).await;
    }
    embedded_all(&mut c).await;

    let r = search(&mut c, "dog").await;
    let found = hit(&r, PUPPY).unwrap_or_else(|| panic!("the puppy note is a hit: {r}"));
    assert!(by_sparse(found), "{found}");
    assert!(found["explain"]["text"].is_null(), "no word 'dog': {found}");
    assert_eq!(found["explain"]["sparse"]["rank"], 1, "{found}");
    assert!(found["explain"]["sparse"]["score"].as_f64().unwrap() > 0.0);
    let explain = &r["explain"];
    assert_eq!(explain["sparse_weight"], 0.4, "{explain}");
    assert_eq!(explain["words_weight"], 0.35, "{explain}");
    assert!(
        explain["sparse"]["found"].as_u64().unwrap() >= 1,
        "{explain}"
    );
    let (held, weight) =
        piece(&r, "dog").unwrap_or_else(|| panic!("'dog' is ranked by: {explain}"));
    assert!(held >= 1 && weight > 0.0, "{explain}");
    // Its weight is the model's weight for it in the encoded question
    // times its idf over the five notes that have terms.
    assert_eq!(
        explain["pieces_from"],
        "the question encoded by the sparse model: each term its model weight × its idf",
        "{explain}"
    );
    let dog = encoded_weight("dog", "dog");
    let idf = (1.0 + 5.0 / held as f64).ln();
    assert!(
        (weight - dog * idf).abs() < 1e-4,
        "{weight} against {dog} × {idf}: {explain}"
    );

    // Within a pad, the idf is over the pad's notes: "pets" holds one.
    let r = ok(
        &mut c,
        "search",
        json!({"query": "dog", "mode": "hybrid", "explain": true, "pad": "pets"}),
    )
    .await;
    let (in_pad, weight) = piece(&r, "dog").unwrap_or_else(|| panic!("{}", r["explain"]));
    assert_eq!(in_pad, 1, "{}", r["explain"]);
    assert!(
        (weight - dog * 2f64.ln()).abs() < 1e-4,
        "{weight}: {}",
        r["explain"]
    );
    let r = ok(
        &mut c,
        "search",
        json!({"query": "dog", "mode": "hybrid", "explain": true, "pad": "work"}),
    )
    .await;
    assert!(hit(&r, PUPPY).is_none(), "the filter holds: {r}");

    // Edited to be about printers: no longer found by "dog", and the
    // piece's count falls by one.
    let id = puppy["id"].as_str().unwrap();
    ok(
        &mut c,
        "entry.update",
        json!({"id": id, "content": "the label printer needs new ribbon"}),
    )
    .await;
    embedded_all(&mut c).await;
    let r = search(&mut c, "dog").await;
    let by_sparse: Vec<&Value> = r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| by_sparse(h))
        .collect();
    assert!(
        by_sparse.iter().all(|h| h["entry"]["id"] != id),
        "the edited note lost 'dog': {r}"
    );
    let after = piece(&r, "dog").map_or(0, |p| p.0);
    assert_eq!(
        after,
        held - 1,
        "the count follows the edit: {}",
        r["explain"]
    );

    // Deleted: its terms go, and the notes-with-terms count falls.
    let before = search(&mut c, "printer ribbon").await;
    let (ribbon, _) = piece(&before, "ribbon").expect("'ribbon' is held by the edited note");
    ok(&mut c, "entry.delete", json!({"id": id})).await;
    embedded_all(&mut c).await;
    let r = search(&mut c, "printer ribbon").await;
    assert_eq!(
        piece(&r, "ribbon").map_or(0, |p| p.0),
        ribbon - 1,
        "{}",
        r["explain"]
    );
    assert!(
        hit(&r, "the label printer needs new ribbon").is_none(),
        "{r}"
    );
    h.stop().await;
}

/// "Which pets does Sam have?" shares no word piece with the note about a
/// puppy, not even among the note's learned terms ("pets" and "sam"
/// … are not among them). Encoded, the question means "dog" and "dogs",
/// which the note's terms hold: the sparse list finds it, and says the
/// question's terms came from the model. Ranked by the question's own
/// pieces, as before the question was encoded, it would not.
#[tokio::test]
async fn an_encoded_question_reaches_a_note_sharing_no_word_piece_with_it() {
    let h = Harness::with(|c| c.semantic = Some(sparse_config())).await;
    let mut c = h.client().await;
    add(&mut c, "pets", PUPPY).await;
    for other in OTHERS {
        add(&mut c, "pets", other).await;
    }
    embedded_all(&mut c).await;
    let question = "Which pets does Sam have?";
    let r = search(&mut c, question).await;
    let found = hit(&r, PUPPY).unwrap_or_else(|| panic!("the puppy note is a hit: {r}"));
    assert!(by_sparse(found), "{found}");
    assert_eq!(found["explain"]["sparse"]["rank"], 1, "{found}");
    let explain = &r["explain"];
    for own in ["pets", "sam"] {
        assert_eq!(piece(&r, own), None, "no note holds {own:?}: {explain}");
    }
    let (held, weight) =
        piece(&r, "dog").unwrap_or_else(|| panic!("'dog' is ranked by: {explain}"));
    assert_eq!(held, 1, "{explain}");
    let dog = encoded_weight(question, "dog");
    assert!(
        (weight - dog * 6f64.ln()).abs() < 1e-4,
        "{weight} against {dog} × ln 6: {explain}"
    );
    h.stop().await;
}

/// A token that reads one pad: the sparse list's hits, its pieces' counts
/// and weights are over that pad alone — a note elsewhere holding the
/// piece changes nothing the token sees.
#[tokio::test]
async fn a_tokens_sparse_list_counts_only_its_pads() {
    let h = Harness::with(|c| c.semantic = Some(sparse_config())).await;
    let mut owner = h.client().await;
    add(&mut owner, "pets", PUPPY).await;
    add(&mut owner, "pets", OTHERS[0]).await;
    let secret = ok(
        &mut owner,
        "token.create",
        json!({"name": "agent-a", "pads": ["pets"]}),
    )
    .await;
    let mut token = Client::connect(&h.socket).await.unwrap();
    ok(&mut token, "hello", json!({"token": secret["secret"]})).await;
    embedded_all(&mut owner).await;
    let before = search(&mut token, "dog").await;
    let (held, weight) = piece(&before, "dog").unwrap_or_else(|| panic!("{before}"));
    assert_eq!(held, 1, "{}", before["explain"]);
    // Another pad gains notes holding "dog": the owner sees them counted,
    // the token does not.
    for n in 0..3 {
        add(
            &mut owner,
            "secret-kennel",
            &format!("kennel log {n}: walked the puppy and fed the dogs"),
        )
        .await;
    }
    embedded_all(&mut owner).await;
    let theirs = search(&mut owner, "dog").await;
    assert!(
        piece(&theirs, "dog").unwrap().0 > 1,
        "{}",
        theirs["explain"]
    );
    let after = search(&mut token, "dog").await;
    assert_eq!(
        piece(&after, "dog"),
        Some((held, weight)),
        "{}",
        after["explain"]
    );
    assert_eq!(
        after["explain"]["pieces_left_out"], before["explain"]["pieces_left_out"],
        "{after}"
    );
    assert!(
        after["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["entry"]["pad"] == "pets"),
        "{after}"
    );
    h.stop().await;
}

/// A store embedded without the sparse model, restarted with it: every
/// note is encoded again in the background (vectors and terms), and notes
/// written while meaning search was off are encoded too.
#[tokio::test]
async fn a_restart_with_the_sparse_model_encodes_the_backlog() {
    let h = Harness::with(|c| c.semantic = Some(semantic_config(Precision::Int8))).await;
    let mut c = h.client().await;
    add(&mut c, "pets", PUPPY).await;
    embedded_all(&mut c).await;
    let r = search(&mut c, "dog").await;
    assert!(r["explain"]["sparse"].is_null(), "no sparse model yet: {r}");
    let stats = ok(&mut c, "stats", json!({})).await;
    assert!(stats["semantic"].get("sparse_model").is_none(), "{stats}");
    drop(c);
    let h = h.restart_with(|c| c.semantic = None).await;
    let mut c = h.client().await;
    for other in OTHERS {
        add(&mut c, "work", other).await;
    }
    drop(c);
    let h = h.restart_with(|c| c.semantic = Some(sparse_config())).await;
    let mut c = h.client().await;
    let stats = embedded_all(&mut c).await;
    assert_eq!(stats["semantic"]["vectors"], 5, "{stats}");
    assert_eq!(stats["semantic"]["sparse_model"], "splade-tiny", "{stats}");
    let r = search(&mut c, "dog").await;
    let found = hit(&r, PUPPY).unwrap_or_else(|| panic!("found after the restart: {r}"));
    assert!(by_sparse(found), "{found}");
    let r = search(&mut c, "salads soup").await;
    let lunch = hit(&r, OTHERS[2]).unwrap_or_else(|| panic!("{r}"));
    assert_eq!(lunch["explain"]["sparse"]["rank"], 1, "{lunch}");
    assert_eq!(piece(&r, "soup").map(|p| p.0), Some(1), "{}", r["explain"]);
    h.stop().await;
}
