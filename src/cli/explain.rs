//! `pad search --explain`: why each hit ranked where it did, in the
//! engine's figures (the `explain` of `search`). The reply comes here
//! terminal-safe already (`render::terminal_safe`).

use serde_json::Value;

fn list(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

fn weights(words: &Value) -> String {
    words
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| {
            format!(
                "{} ({:.2}, in {})",
                w["word"].as_str().unwrap_or(""),
                w["weight"].as_f64().unwrap_or(0.0),
                w["entries"]
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the query became.
pub fn query(q: &Value) {
    println!("query read as {}", q["reads_as"].as_str().unwrap_or(""));
    if q["words"].as_array().is_some_and(|w| !w.is_empty()) {
        println!(
            "  words ranked by (weight, entries holding it): {}",
            weights(&q["words"])
        );
    }
    for (key, what) in [
        ("dropped_common", "common words dropped"),
        (
            "dropped_over_budget",
            "too common to rank every match of, dropped",
        ),
        ("filter", "narrowed by"),
    ] {
        let l = list(&q[key]);
        if !l.is_empty() {
            println!("  {what}: {}", l.join("; "));
        }
    }
    if q["newest_only"] == true {
        println!("  every word too common: only the newest matches of the rarest were ranked");
    }
    if let Some(w) = q["words_weight"].as_f64() {
        println!(
            "  fused: {w:.1} × words + {:.1} × meaning (each scaled 0–1 in its list)",
            1.0 - w
        );
    }
    for (key, side) in [("text", "words"), ("meaning", "meaning")] {
        if let Some(c) = q.get(key) {
            let floor = match (c["below_floor"].as_u64(), q["meaning_floor"].as_f64()) {
                (Some(n), Some(f)) if n > 0 => format!(", {n} under cosine {f} left out"),
                _ => String::new(),
            };
            println!(
                "  {side}: {} found of {} asked{floor}",
                c["found"], c["asked"]
            );
        }
    }
    for (key, what) in [
        ("superseded_left_out", "superseded notes left out"),
        (
            "copies_folded",
            "copies folded into the first of their text",
        ),
    ] {
        if q[key].as_u64().is_some_and(|n| n > 0) {
            println!("  {what}: {}", q[key]);
        }
    }
    println!();
}

/// Why one hit ranked where it did.
pub fn hit(why: &Value, h: &Value) {
    let mut parts = vec![format!("score {:.3}", why["score"].as_f64().unwrap_or(0.0))];
    for (key, side) in [("text", "words"), ("meaning", "meaning")] {
        if let Some(r) = why.get(key) {
            let scaled = r["scaled"]
                .as_f64()
                .map(|s| format!(", scaled {s:.2}"))
                .unwrap_or_default();
            parts.push(format!(
                "{side} #{} ({:.3}{scaled})",
                r["rank"],
                r["score"].as_f64().unwrap_or(0.0)
            ));
        }
    }
    if let Some(n) = why["neighbours"].as_f64().filter(|n| *n > 0.0) {
        parts.push(format!("+{n:.3} from a neighbour"));
    }
    println!("    why: {}", parts.join(" · "));
    if why["words"].as_array().is_some_and(|w| !w.is_empty()) {
        println!("    holds: {}", weights(&why["words"]));
    }
    let copies = list(&h["copies"]);
    if !copies.is_empty() {
        println!("    copies folded in: {}", copies.join(", "));
    }
}
