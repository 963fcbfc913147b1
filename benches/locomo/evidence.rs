//! REALTALK's evidence ids, read with care: a question's `evidence` lists
//! dialog turns as LoCoMo does ("D5:12"), but some entries hold several
//! ("D5:12;D5:16", "D13:4. D14:4"), a range ("D12:3-D12:5", "D12:3-5"),
//! a trailing dot ("D5:3."), a semicolon for the colon ("D17;39"), or
//! nothing; and some name a turn the conversation does not have (past a
//! session's end, or a turn left out of the published data). What names
//! no turn is dropped and counted, so a ranking is never charged for a
//! turn it could not return.

use std::collections::HashSet;

/// A turn id as (dialog, turn): "D12:3" is (12, 3).
type Turn = (u32, u32);

/// What reading a conversation's evidence kept and dropped.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// Evidence entries as listed (strings).
    pub listed: usize,
    /// Turn ids read from them (a range counts each turn it spans).
    pub ids: usize,
    /// Entries in which no turn id could be read ("", "see above").
    pub unreadable: usize,
    /// Ids read that name no turn of the conversation: dropped.
    pub no_such_turn: usize,
    /// Questions left with no evidence: dropped from the scores.
    pub questions_without: usize,
}

impl Reading {
    pub fn add(&mut self, other: Reading) {
        self.listed += other.listed;
        self.ids += other.ids;
        self.unreadable += other.unreadable;
        self.no_such_turn += other.no_such_turn;
        self.questions_without += other.questions_without;
    }
}

/// The turns one evidence entry names, in the order written: single ids,
/// lists, ranges (every turn of `turns` from one end to the other, in
/// conversation order), as "D12:3".
fn read_entry(entry: &str, turns: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (from, to) in scan(entry) {
        match to {
            Some(to) => {
                let (lo, hi) = (from.min(to), from.max(to));
                out.extend(
                    turns
                        .iter()
                        .filter(|t| parse_one(t).is_some_and(|x| lo <= x && x <= hi))
                        .cloned(),
                );
            }
            None => out.push(format!("D{}:{}", from.0, from.1)),
        }
    }
    out
}

/// Every id in `entry`, each with the end of its range when a `-` follows.
fn scan(entry: &str) -> Vec<(Turn, Option<Turn>)> {
    let s: Vec<char> = entry.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < s.len() {
        let Some((turn, next)) = id_at(&s, at) else {
            at += 1;
            continue;
        };
        at = next;
        let mut end = None;
        let dash = skip_spaces(&s, at);
        if s.get(dash) == Some(&'-') {
            let after = skip_spaces(&s, dash + 1);
            if let Some((to, next)) = id_at(&s, after) {
                end = Some(to);
                at = next;
            } else if let Some((n, next)) = number_at(&s, after) {
                // "D12:3-5": the same dialog.
                end = Some((turn.0, n));
                at = next;
            }
        }
        out.push((turn, end));
    }
    out
}

/// "D12:3" (or "D12;3", "d12 : 3") starting at `at`: the turn and where it ends.
fn id_at(s: &[char], at: usize) -> Option<(Turn, usize)> {
    if !matches!(s.get(at), Some('D' | 'd')) {
        return None;
    }
    let (dialog, next) = number_at(s, at + 1)?;
    let sep = skip_spaces(s, next);
    if !matches!(s.get(sep), Some(':' | ';')) {
        return None;
    }
    let (turn, next) = number_at(s, skip_spaces(s, sep + 1))?;
    Some(((dialog, turn), next))
}

fn number_at(s: &[char], at: usize) -> Option<(u32, usize)> {
    let digits: String = s[at.min(s.len())..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    Some((digits.parse().ok()?, at + digits.len()))
}

fn skip_spaces(s: &[char], mut at: usize) -> usize {
    while s.get(at).is_some_and(|c| c.is_whitespace()) {
        at += 1;
    }
    at
}

fn parse_one(id: &str) -> Option<Turn> {
    let s: Vec<char> = id.chars().collect();
    let (turn, end) = id_at(&s, 0)?;
    (end == s.len()).then_some(turn)
}

/// A question's evidence as turn ids of `turns` (the conversation's, in
/// order), each once, and what was kept and dropped.
pub fn read(listed: &[&str], turns: &[String], known: &HashSet<&str>) -> (Vec<String>, Reading) {
    let mut reading = Reading {
        listed: listed.len(),
        ..Reading::default()
    };
    let mut kept: Vec<String> = Vec::new();
    for entry in listed {
        let ids = read_entry(entry, turns);
        if ids.is_empty() && scan(entry).is_empty() {
            reading.unreadable += 1;
        }
        reading.ids += ids.len();
        for id in ids {
            if !known.contains(id.as_str()) {
                reading.no_such_turn += 1;
            } else if !kept.contains(&id) {
                kept.push(id);
            }
        }
    }
    if kept.is_empty() {
        reading.questions_without = 1;
    }
    (kept, reading)
}
