//! Small helpers: timestamps, random ids, token hashing.

use std::time::{SystemTime, UNIX_EPOCH};

use chatwire_schema::Id;
use rand::Rng;
use sha2::{Digest, Sha256};

/// Milliseconds since the Unix epoch (wall clock; deadlines are persisted in this unit).
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The current time as RFC 3339 UTC with milliseconds, e.g. `2026-11-22T01:50:19.123Z`.
pub fn rfc3339_now() -> String {
    rfc3339(now_ms())
}

/// Formats milliseconds since the epoch as RFC 3339 UTC.
pub fn rfc3339(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// A fresh random id `prefix-<hex>` with `bytes` bytes of randomness.
pub fn random_id(prefix: &str, bytes: usize) -> Id {
    let mut rng = rand::rng();
    let hex: String = (0..bytes).map(|_| format!("{:02x}", rng.random::<u8>())).collect();
    Id::new_unchecked_valid(format!("{prefix}-{hex}"))
}

/// The stored form of a resume token: its SHA-256, hex. The database never holds the token itself.
pub fn hash_token(token: &str) -> String {
    Sha256::digest(token.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares two equal-length secrets without an early exit.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(rfc3339(1_795_312_219_000), "2026-11-22T01:50:19.000Z");
    }

    #[test]
    fn ids_are_valid_and_distinct() {
        let a = random_id("s", 16);
        let b = random_id("s", 16);
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), 2 + 32);
    }

    #[test]
    fn token_hash_is_stable_and_comparison_exact() {
        assert_eq!(hash_token("x"), hash_token("x"));
        assert_ne!(hash_token("x"), hash_token("y"));
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
