//! The LoCoMo bench's reading of REALTALK's evidence ids
//! (`benches/locomo/evidence.rs`): lists, ranges, stray punctuation, and
//! ids that name no turn, dropped and counted.

#[allow(dead_code)]
#[path = "../benches/locomo/evidence.rs"]
mod evidence;

use std::collections::HashSet;

use evidence::{read, Reading};

fn conversation() -> Vec<String> {
    // Dialog 12 lacks turn 4 (left out of the data, as REALTALK's are).
    [
        "D5:3", "D5:12", "D5:16", "D12:3", "D12:5", "D12:6", "D13:4", "D14:4", "D17:39",
    ]
    .map(String::from)
    .to_vec()
}

fn read_all(listed: &[&str]) -> (Vec<String>, Reading) {
    let turns = conversation();
    let known: HashSet<&str> = turns.iter().map(String::as_str).collect();
    read(listed, &turns, &known)
}

#[test]
fn lists_ranges_dots_and_semicolons_become_turns() {
    let (ids, r) = read_all(&["D5:12;D5:16", "D12:3-D12:5", "D5:3.", "D17;39"]);
    assert_eq!(ids, ["D5:12", "D5:16", "D12:3", "D12:5", "D5:3", "D17:39"]);
    assert_eq!(
        (r.listed, r.ids, r.no_such_turn, r.unreadable),
        (4, 6, 0, 0)
    );
    let (ids, _) = read_all(&["D13:4. D14:4", "D12:5-6"]);
    assert_eq!(ids, ["D13:4", "D14:4", "D12:5", "D12:6"]);
}

#[test]
fn what_names_no_turn_is_dropped_and_counted() {
    let (ids, r) = read_all(&["D5:12", "D12:4", "D5:99", "", "see D5"]);
    assert_eq!(ids, ["D5:12"]);
    assert_eq!((r.ids, r.no_such_turn, r.unreadable), (3, 2, 2));
    assert_eq!(r.questions_without, 0);
    let (ids, r) = read_all(&["D2:7", ""]);
    assert!(ids.is_empty());
    assert_eq!(r.questions_without, 1);
}

#[test]
fn a_turn_named_twice_counts_once() {
    let (ids, _) = read_all(&["D5:12", "D5:12;D5:3", "D5:3-D5:12"]);
    assert_eq!(ids, ["D5:12", "D5:3"]);
}
