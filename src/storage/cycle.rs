//! Finding a dependency loop (`depends_on`), the same for both stores: a
//! breadth-first walk that asks its caller to read each entry's links, so
//! SQLite reads them inline and PostgreSQL awaits them.

use std::collections::{HashMap, VecDeque};

use crate::id;

/// What the walk needs next.
pub enum Step {
    /// Read the `depends_on` of this entry (its id and seq) and pass them to
    /// `reached`.
    Read(String, i64),
    /// `id` would close this loop: `[a, b, a]`.
    Loop(Vec<String>),
}

pub struct CycleSearch {
    id: String,
    /// How each id was reached.
    came_from: HashMap<String, String>,
    queue: VecDeque<String>,
}

impl CycleSearch {
    /// A walk from `id` along `deps` (what it is about to depend on).
    pub fn new(id: &str, deps: &[String]) -> CycleSearch {
        let mut s = CycleSearch {
            id: id.to_string(),
            came_from: HashMap::new(),
            queue: VecDeque::new(),
        };
        s.reached(id, deps.to_vec());
        s
    }

    /// The next step; `None` when the walk is over without a loop.
    pub fn step(&mut self) -> Option<Step> {
        while let Some(cur) = self.queue.pop_front() {
            if cur == self.id {
                let mut path = vec![self.id.clone()];
                let mut at = self.came_from[&self.id].clone();
                while at != self.id {
                    path.push(at.clone());
                    at = self.came_from[&at].clone();
                }
                path.push(self.id.clone());
                path.reverse();
                return Some(Step::Loop(path));
            }
            if let Some((seq, _)) = id::prefix_range(&cur).filter(|(lo, hi)| lo == hi) {
                return Some(Step::Read(cur, seq));
            }
        }
        None
    }

    /// `from` depends on `next`.
    pub fn reached(&mut self, from: &str, next: Vec<String>) {
        for n in next {
            if !self.came_from.contains_key(&n) {
                self.came_from.insert(n.clone(), from.to_string());
                self.queue.push_back(n);
            }
        }
    }
}
