//! Spend rows' request ids: random UUIDs (version 4), drawn by the database thread as it takes
//! a row in, from randomness seeded by the OS (two instances must never draw the same ids).

use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

use pointwork_core::Rng;

thread_local! {
    static IDS: RefCell<Rng> = RefCell::new(Rng::new(os_seed()));
}

/// A new request id.
pub(crate) fn new() -> String {
    IDS.with(|rng| uuid4(&mut rng.borrow_mut()))
}

fn os_seed() -> u64 {
    let mut seed = [0u8; 8];
    // Without the OS's randomness, the clock and the process still differ between instances.
    if ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut seed).is_err() {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        return nanos ^ u64::from(std::process::id()).rotate_left(32);
    }
    u64::from_le_bytes(seed)
}

fn uuid4(rng: &mut Rng) -> String {
    let (a, b) = (rng.next_u64(), rng.next_u64());
    // Version 4, variant 10.
    let bits = (u128::from((a & !0xf000) | 0x4000) << 64) | u128::from((b & !(0xc << 60)) | (0x8 << 60));
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut id = String::with_capacity(36);
    for nibble in 0..32 {
        if matches!(nibble, 8 | 12 | 16 | 20) {
            id.push('-');
        }
        id.push(HEX[(bits >> (124 - 4 * nibble)) as usize & 0xf] as char);
    }
    id
}

#[cfg(test)]
mod tests {
    #[test]
    fn request_ids_are_version_4_uuids() {
        let mut rng = pointwork_core::Rng::new(7);
        let id = super::uuid4(&mut rng);
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
        assert_ne!(id, super::uuid4(&mut rng));
        assert!(id.bytes().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit() && !c.is_ascii_uppercase(),
        }));
        assert_ne!(super::new(), super::new());
    }
}
