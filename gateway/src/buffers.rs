//! Byte buffers a shard reuses from request to request: the upstream request, the upstream
//! answer's read buffer and the client's response go back here when a request ends well, so
//! a request on a warm shard allocates none of them (an allocation of their size took the
//! allocator's slow path, ~200 instructions each).

use std::cell::RefCell;

/// Buffers kept per shard: enough for the requests one shard has in flight at once on a busy
/// gateway; past it a returned buffer is freed.
const MAX_KEPT: usize = 256;
/// A buffer grown past this (a large body) is freed rather than kept.
const MAX_KEPT_CAPACITY: usize = 256 * 1024;

#[derive(Default)]
pub struct Buffers {
    free: RefCell<Vec<Vec<u8>>>,
}

impl Buffers {
    /// An empty buffer with room for at least `capacity` bytes.
    pub fn take(&self, capacity: usize) -> Vec<u8> {
        match self.free.borrow_mut().pop() {
            Some(mut buf) => {
                buf.reserve(capacity);
                buf
            }
            None => Vec::with_capacity(capacity),
        }
    }

    /// Returns a buffer for a later [`Buffers::take`] (emptied; freed if it grew too large or
    /// enough are kept).
    pub fn give(&self, mut buf: Vec<u8>) {
        let mut free = self.free.borrow_mut();
        if buf.capacity() <= MAX_KEPT_CAPACITY && free.len() < MAX_KEPT {
            buf.clear();
            free.push(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_returned_buffer_is_taken_again_empty_and_large_ones_are_not_kept() {
        let buffers = Buffers::default();
        let mut buf = buffers.take(100);
        assert!(buf.capacity() >= 100);
        buf.extend_from_slice(b"abc");
        let ptr = buf.as_ptr();
        buffers.give(buf);
        let again = buffers.take(10);
        assert_eq!((again.as_ptr(), again.len()), (ptr, 0));
        assert!(buffers.take(5000).capacity() >= 5000, "grown when taken for more");

        buffers.give(Vec::with_capacity(MAX_KEPT_CAPACITY + 1));
        assert!(buffers.free.borrow().is_empty());
        for _ in 0..MAX_KEPT + 10 {
            buffers.give(Vec::with_capacity(8));
        }
        assert_eq!(buffers.free.borrow().len(), MAX_KEPT);
    }
}
