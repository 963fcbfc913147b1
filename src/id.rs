//! Entry ids: short, time-sortable, typeable — and the row's primary key.
//!
//! An id is a 60-bit number: milliseconds since 2020 (42 bits, good until
//! 2159) above an 18-bit counter that starts at a random point each
//! millisecond and counts up within it. It is the entry's SQLite rowid, so
//! looking an entry up by id (or by id prefix, a rowid range) needs no index
//! of its own. On the wire it is 12 characters of Crockford base32
//! (lowercase, no i/l/o/u). Ids from one store are strictly increasing, even
//! across restarts and a clock that steps back, so id order is write order.

pub const ID_LEN: usize = 12;
/// 2020-01-01T00:00:00Z: ids count milliseconds from here.
const EPOCH_MS: i64 = 1_577_836_800_000;
const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
const SEQ_BITS: u32 = 18;
/// Bits in 13 base32 characters.
const TEXT_BITS: u32 = 5 * ID_LEN as u32;

/// The smallest id an entry written at `ms` (Unix milliseconds) or later can
/// have: "entries since T" is the rowid range from here.
pub fn first_at(ms: i64) -> i64 {
    (ms - EPOCH_MS).max(0) << SEQ_BITS
}

/// Hands out increasing ids. Not thread-safe by itself: the store's journal
/// calls it under its lock, in append order, which is also commit order.
#[derive(Debug, Default)]
pub struct IdGen {
    last: i64,
}

impl IdGen {
    /// A generator whose ids all exceed `floor` (the largest id ever used).
    pub fn after(floor: i64) -> Self {
        IdGen { last: floor }
    }

    pub fn next(&mut self, now_ms: i64) -> i64 {
        let base = (now_ms - EPOCH_MS).max(0) << SEQ_BITS;
        let id = if base > self.last {
            // A random start, with headroom so a busy millisecond cannot overflow.
            base + fastrand::i64(0..(1 << (SEQ_BITS - 2)))
        } else {
            self.last + 1
        };
        self.last = id;
        id
    }
}

pub fn encode(id: i64) -> String {
    let v = id as u64;
    (0..ID_LEN)
        .map(|i| {
            let shift = 5 * (ID_LEN - 1 - i) as u32;
            let digit = (v >> shift) & 31;
            ALPHABET[digit as usize] as char
        })
        .collect()
}

/// The inclusive range of ids that start with `prefix`, or `None` if the text
/// cannot begin an id.
pub fn prefix_range(prefix: &str) -> Option<(i64, i64)> {
    if prefix.is_empty() || prefix.len() > ID_LEN {
        return None;
    }
    let mut v: u128 = 0;
    for b in prefix.bytes() {
        let digit = ALPHABET.iter().position(|a| *a == b)? as u128;
        v = (v << 5) | digit;
    }
    let rest = TEXT_BITS - 5 * prefix.len() as u32;
    let lo = v << rest;
    let hi = ((v + 1) << rest) - 1;
    if lo > i64::MAX as u128 {
        return None;
    }
    Some((lo as i64, hi.min(i64::MAX as u128) as i64))
}

/// The number behind a full id (all `ID_LEN` characters, any case); `None`
/// for a prefix or anything that is not an id.
pub fn decode(id: &str) -> Option<i64> {
    let id = id.trim().to_ascii_lowercase();
    if id.len() != ID_LEN {
        return None;
    }
    prefix_range(&id).map(|(lo, _)| lo)
}

/// Whether `s` can be (a prefix of) an id; used to reject junk early.
pub fn is_id_prefix(s: &str) -> bool {
    prefix_range(s).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_increase_and_survive_a_clock_step_back() {
        let mut g = IdGen::default();
        let a = g.next(1_700_000_000_000);
        let b = g.next(1_700_000_000_000);
        let c = g.next(1_700_000_000_001);
        let d = g.next(1_699_999_999_999); // clock stepped back
        assert!(a < b && b < c && c < d);
        let (ea, ed) = (encode(a), encode(d));
        assert_eq!(ea.len(), ID_LEN);
        assert!(ea < ed, "text order is id order");
        let mut after = IdGen::after(d);
        assert!(after.next(1) > d, "a new generator never reuses an id");
    }

    #[test]
    fn prefixes_map_to_ranges_that_hold_their_ids() {
        let id = IdGen::default().next(1_763_680_000_000);
        let text = encode(id);
        for len in 1..=ID_LEN {
            let (lo, hi) = prefix_range(&text[..len]).unwrap();
            assert!(lo <= id && id <= hi, "{len}");
        }
        assert_eq!(prefix_range(&text), Some((id, id)));
        assert!(prefix_range("../x").is_none());
        assert!(prefix_range("zzzzzzzzzzzzz").is_none(), "longer than an id");
        assert!(!is_id_prefix("") && !is_id_prefix("0000000000000"));
    }
}
