//! Entry ids: short, time-sortable, typeable.
//!
//! An id is 13 characters of Crockford base32 (lowercase, no i/l/o/u): 9 for
//! the creation time in milliseconds (good until the year 3084) and 4 for a
//! 20-bit sequence that starts at a random point each millisecond and counts
//! up within it. Ids from one engine are strictly increasing even if the
//! clock steps back, so sorting by id is sorting by creation.

use std::sync::Mutex;

const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
pub const ID_LEN: usize = 13;
const SEQ_BITS: u32 = 20;

#[derive(Debug, Default)]
pub struct IdGen {
    last: Mutex<(i64, u32)>,
}

impl IdGen {
    pub fn next(&self, now_ms: i64) -> String {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let (ms, seq) = if now_ms > last.0 {
            // Random start, leaving headroom so a busy millisecond cannot overflow.
            (now_ms, fastrand::u32(0..(1 << (SEQ_BITS - 1))))
        } else if last.1 + 1 < (1 << SEQ_BITS) {
            (last.0, last.1 + 1)
        } else {
            (last.0 + 1, 0)
        };
        *last = (ms, seq);
        encode(ms, seq)
    }
}

fn encode(ms: i64, seq: u32) -> String {
    let v: u128 = ((ms as u128) << SEQ_BITS) | seq as u128;
    let mut out = [0u8; ID_LEN];
    for (i, slot) in out.iter_mut().enumerate() {
        let shift = 5 * (ID_LEN - 1 - i);
        *slot = ALPHABET[((v >> shift) & 31) as usize];
    }
    String::from_utf8(out.to_vec()).expect("alphabet is ASCII")
}

/// Whether `s` can be (a prefix of) an id; used to reject junk before it
/// reaches the store.
pub fn is_id_prefix(s: &str) -> bool {
    !s.is_empty() && s.len() <= ID_LEN && s.bytes().all(|b| ALPHABET.contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_by_time_and_stay_unique_within_a_millisecond() {
        let g = IdGen::default();
        let a = g.next(1_700_000_000_000);
        let b = g.next(1_700_000_000_000);
        let c = g.next(1_700_000_000_001);
        let d = g.next(1_699_999_999_999); // clock stepped back
        assert_eq!(a.len(), ID_LEN);
        assert!(a < b && b < c && c < d, "{a} {b} {c} {d}");
        assert!(is_id_prefix(&a) && is_id_prefix(&a[..4]));
        assert!(!is_id_prefix("../x") && !is_id_prefix(""));
    }
}
