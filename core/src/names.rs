//! The snapshot's name tables: string keys from the config, hashed with a fast unkeyed hash.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The snapshot's name tables. Their keys come from the config, so a fast unkeyed hash is
/// safe: a client chooses only what it looks up, and one lookup probes one bucket run of a
/// table it cannot shape. SipHash was a third of a small group's pick.
pub(crate) type NameMap<V> = HashMap<String, V, BuildHasherDefault<NameHasher>>;

/// FxHash (rustc's), eight bytes at a time, with rustc-hash 2's final rotation so that the
/// top bits hashbrown uses as tags depend on every byte.
#[derive(Default)]
pub(crate) struct NameHasher {
    hash: u64,
}

impl NameHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        // The length first, so that the shorter last word tells "a" from "a\0".
        self.add(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().unwrap_or_default()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            self.add(rest.iter().fold(0, |word, &b| word << 8 | u64::from(b)));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn finish(&self) -> u64 {
        self.hash.rotate_left(26)
    }
}
