//! How the LoCoMo bench scores a ranking: evidence recall@k and MRR over
//! the questions of categories 1–4 with evidence (our figures), per
//! category, and LoCoMo's own scoring beside the paper's DRAGON row.

use std::collections::{BTreeMap, HashSet};

pub const KS: [usize; 3] = [5, 10, 25];

/// The LoCoMo paper's dialog-level retrieval with DRAGON (recall@5/10/25,
/// all questions; Maharana et al., ACL 2024, Table 3).
pub const DRAGON: [f64; 3] = [56.7, 66.2, 76.7];

pub struct Question {
    pub text: String,
    pub category: i64,
    /// The answering turns as LoCoMo lists them ("D1:3"), the conversation
    /// prefixed ("26/D1:3"); possibly empty, possibly malformed.
    pub evidence: Vec<String>,
}

/// Recall@k for each of `KS` and the reciprocal rank, summed over questions.
#[derive(Default, Clone)]
pub struct Score {
    recall: [f64; 3],
    rr: f64,
    n: usize,
}

impl Score {
    /// Our recall: the share of distinct answering turns in the top k.
    fn add(&mut self, ranked: &[String], evidence: &HashSet<&str>) {
        for (i, k) in KS.iter().enumerate() {
            let found = ranked
                .iter()
                .take(*k)
                .filter(|t| evidence.contains(t.as_str()))
                .count();
            self.recall[i] += found as f64 / evidence.len() as f64;
        }
        if let Some(at) = ranked.iter().position(|t| evidence.contains(t.as_str())) {
            self.rr += 1.0 / (at + 1) as f64;
        }
        self.n += 1;
    }

    /// LoCoMo's (task_eval/evaluation.py): each listed evidence id found in
    /// the top k counts, over the list's length; a question without
    /// evidence counts as found.
    fn add_locomo(&mut self, ranked: &[String], evidence: &[String]) {
        for (i, k) in KS.iter().enumerate() {
            self.recall[i] += if evidence.is_empty() {
                1.0
            } else {
                let top: HashSet<&str> = ranked.iter().take(*k).map(String::as_str).collect();
                evidence.iter().filter(|e| top.contains(e.as_str())).count() as f64
                    / evidence.len() as f64
            };
        }
        self.n += 1;
    }

    pub fn recall(&self, at: usize) -> f64 {
        100.0 * self.recall[at] / self.n.max(1) as f64
    }

    pub fn row(&self, name: &str) {
        println!(
            "{name:<44} {:>6.1} {:>6.1} {:>6.1} {:>7.3}",
            self.recall(0),
            self.recall(1),
            self.recall(2),
            self.rr / self.n.max(1) as f64
        );
    }

    pub fn n(&self) -> usize {
        self.n
    }
}

/// One ranking's scores: ours (categories 1–4 with evidence), per
/// category, and LoCoMo's own.
#[derive(Default, Clone)]
pub struct Tally {
    pub ours: Score,
    pub by_category: BTreeMap<i64, Score>,
    pub locomo: Score,
}

impl Tally {
    pub fn add(&mut self, ranked: &[String], q: &Question) {
        self.locomo.add_locomo(ranked, &q.evidence);
        let evidence: HashSet<&str> = q.evidence.iter().map(String::as_str).collect();
        if evidence.is_empty() {
            return;
        }
        self.by_category
            .entry(q.category)
            .or_default()
            .add(ranked, &evidence);
        if (1..=4).contains(&q.category) {
            self.ours.add(ranked, &evidence);
        }
    }
}

/// The three tables: ours, recall@10 per category (the data set's
/// `categories`), LoCoMo's own scoring (with the paper's DRAGON row when
/// `dragon`: it was measured on LoCoMo).
pub fn print(rows: &[(&str, &Tally)], categories: super::data::Categories, dragon: bool) {
    let header = |first: &str| {
        println!(
            "{first:<44} {:>6} {:>6} {:>6} {:>7}",
            "R@5", "R@10", "R@25", "MRR"
        )
    };
    let n = rows.first().map_or(0, |r| r.1.ours.n());
    println!("\n{n} questions of categories 1-4 with evidence:");
    header("ranking");
    for (name, t) in rows {
        t.ours.row(name);
    }
    println!("\nrecall@10 per category (questions with evidence):");
    print!("{:<44}", "ranking");
    for &(c, name) in categories {
        let n = rows
            .first()
            .and_then(|r| r.1.by_category.get(&c))
            .map_or(0, Score::n);
        print!(" {:>14}", format!("{c} {name} ({n})"));
    }
    println!();
    for (name, t) in rows {
        print!("{name:<44}");
        for &(c, _) in categories {
            let r = t.by_category.get(&c).map_or(0.0, |s| s.recall(1));
            print!(" {r:>14.1}");
        }
        println!();
    }
    let n = rows.first().map_or(0, |r| r.1.locomo.n());
    println!(
        "\nLoCoMo's own scoring ({n} questions, all categories; no evidence counts as found):"
    );
    header("ranking");
    if dragon {
        println!(
            "{:<44} {:>6.1} {:>6.1} {:>6.1}",
            "DRAGON (LoCoMo paper, dialog level)", DRAGON[0], DRAGON[1], DRAGON[2]
        );
    }
    for (name, t) in rows {
        println!(
            "{name:<44} {:>6.1} {:>6.1} {:>6.1}",
            t.locomo.recall(0),
            t.locomo.recall(1),
            t.locomo.recall(2)
        );
    }
}
