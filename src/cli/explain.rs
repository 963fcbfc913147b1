//! `pad search --explain`: why each hit ranked where it did, in the
//! engine's figures (the `explain` of `search`). The reply comes here
//! terminal-safe already (`render::safe`).

use crate::protocol::{HitExplain, QueryExplain, SearchHit, WordWeight};

fn weights(words: &[WordWeight]) -> String {
    words
        .iter()
        .map(|w| format!("{} ({:.2}, in {})", w.word, w.weight, w.entries))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the query became.
pub fn query(q: &QueryExplain) {
    println!("query read as {}", q.reads_as);
    if !q.words.is_empty() {
        println!(
            "  words ranked by (weight, entries holding it): {}",
            weights(&q.words)
        );
    }
    for (l, what) in [
        (&q.dropped_common, "common words dropped"),
        (
            &q.dropped_over_budget,
            "too common to rank every match of, dropped",
        ),
        (&q.filter, "narrowed by"),
    ] {
        if !l.is_empty() {
            println!("  {what}: {}", l.join("; "));
        }
    }
    if q.newest_only {
        println!("  every word too common: only the newest matches of the rarest were ranked");
    }
    if let Some(from) = &q.pieces_from {
        println!("  related words: {from}");
    }
    if !q.pieces.is_empty() {
        println!(
            "  related words ranked by (weight, notes holding it): {}",
            weights(&q.pieces)
        );
    }
    if let Some(scores) = &q.meaning_scores {
        println!("  meaning scored by: {scores}");
    }
    if !q.pieces_left_out.is_empty() {
        println!(
            "  related words left out (in no note, or too common): {}",
            q.pieces_left_out.join("; ")
        );
    }
    if let Some(w) = q.words_weight {
        let sparse = q.sparse_weight.unwrap_or(0.0);
        let related = match q.sparse_weight {
            Some(s) => format!(" + {s:.2} × related words"),
            None => String::new(),
        };
        println!(
            "  fused: {w:.2} × words + {:.2} × meaning{related} (each scaled 0–1 in its list)",
            1.0 - w - sparse
        );
    }
    for (c, side) in [
        (&q.text, "words"),
        (&q.meaning, "meaning"),
        (&q.sparse, "related words"),
    ] {
        if let Some(c) = c {
            let floor = match (c.below_floor, q.meaning_floor) {
                (n, Some(f)) if n > 0 => format!(", {n} scoring under {f} left out"),
                _ => String::new(),
            };
            println!("  {side}: {} found of {} asked{floor}", c.found, c.asked);
        }
    }
    for (n, what) in [
        (q.superseded_left_out, "superseded notes left out"),
        (
            q.copies_folded,
            "copies folded into the first of their text",
        ),
    ] {
        if n > 0 {
            println!("  {what}: {n}");
        }
    }
    println!();
}

/// Why one hit ranked where it did.
pub fn hit(why: &HitExplain, h: &SearchHit) {
    let mut parts = vec![format!("score {:.3}", why.score)];
    for (r, side) in [
        (&why.text, "words"),
        (&why.meaning, "meaning"),
        (&why.sparse, "related words"),
    ] {
        if let Some(r) = r {
            let scaled = r
                .scaled
                .map(|s| format!(", scaled {s:.2}"))
                .unwrap_or_default();
            parts.push(format!("{side} #{} ({:.3}{scaled})", r.rank, r.score));
        }
    }
    if why.author_named > 0.0 {
        parts.push(format!(
            "+{:.3}: the query names its author",
            why.author_named
        ));
    }
    if why.neighbours > 0.0 {
        parts.push(format!("+{:.3} from a neighbour", why.neighbours));
    }
    println!("    why: {}", parts.join(" · "));
    if !why.words.is_empty() {
        println!("    holds: {}", weights(&why.words));
    }
    if !h.copies.is_empty() {
        println!("    copies folded in: {}", h.copies.join(", "));
    }
}
