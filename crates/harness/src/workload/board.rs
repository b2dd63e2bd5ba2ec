//! The shared mapping of one trial, made before anything is forked: a
//! header the supervisor writes (the measurement window, the stop flags)
//! and one slot per client that the client writes (progress, its record,
//! an error message, its latency histograms in the HdrHistogram V2
//! encoding). One mapping whatever the load, read by the supervisor only
//! after a writer has marked its slot finished (or has died).
//!
//! The histogram area of a slot is sized for the largest V2 encoding a
//! latency histogram can have (9 bytes per bucket), so it always fits; the
//! mapping is MAP_NORESERVE and only the pages written are ever touched.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use touchstone_results::curve::latency_histogram;

use super::client::{ClientRecord, OpCpu};
use super::MAX_OP_TYPES;
use crate::parallel::shared::{map_shared, read_text};

pub const ERROR_BYTES: usize = 1024;

/// Written by the supervisor, read by everyone.
#[repr(C)]
pub struct Header {
    /// The window [start, end), CLOCK_MONOTONIC ns; 0 until fixed. `end`
    /// is stored first and `start` published with Release.
    pub window_start: AtomicU64,
    pub window_end: AtomicU64,
    /// Clients leave their loop.
    pub stop: AtomicU32,
    /// The server should return.
    pub server_stop: AtomicU32,
    pub server_error_len: AtomicU32,
    pub server_error: [AtomicU8; ERROR_BYTES],
}

/// Written by one client, read by the supervisor.
#[repr(C)]
pub struct Slot {
    /// Operations completed so far (stall detection).
    pub progress: AtomicU64,
    pub first_start: AtomicU64,
    pub last_end: AtomicU64,
    pub window_ops: AtomicU64,
    pub total_ops: AtomicU64,
    pub window_bytes: AtomicU64,
    /// 1 while the client waits at the start barrier.
    pub waiting: AtomicU32,
    /// 1 once record and histograms are written.
    pub finished: AtomicU32,
    pub hist_len: [AtomicU32; MAX_OP_TYPES],
    /// The record's CPU time per operation type (`ClientRecord::cpu`).
    pub cpu_ns: [AtomicU64; MAX_OP_TYPES],
    pub cpu_ops: [AtomicU64; MAX_OP_TYPES],
    pub error_len: AtomicU32,
    pub error: [AtomicU8; ERROR_BYTES],
}

pub struct Board {
    base: *mut u8,
    len: usize,
    clients: usize,
    types: usize,
    hist_bytes: usize,
    slot_size: usize,
}

// Shared memory of atomics and plain bytes each written by one owner.
unsafe impl Send for Board {}
unsafe impl Sync for Board {}

/// Bytes the V2 encoding of a latency histogram can take at most.
pub fn max_histogram_bytes() -> usize {
    40 + 9 * latency_histogram().distinct_values()
}

fn header_size() -> usize {
    std::mem::size_of::<Header>().div_ceil(64) * 64
}

impl Board {
    pub fn new(clients: usize, types: usize) -> std::io::Result<Board> {
        assert!((1..=MAX_OP_TYPES).contains(&types));
        let hist_bytes = max_histogram_bytes().div_ceil(64) * 64;
        let slot_size = (std::mem::size_of::<Slot>().div_ceil(64) * 64) + types * hist_bytes;
        let len = header_size() + slot_size * clients;
        Ok(Board {
            base: map_shared(len, libc::MAP_NORESERVE)?,
            len,
            clients,
            types,
            hist_bytes,
            slot_size,
        })
    }

    pub fn header(&self) -> &Header {
        // SAFETY: the header lies at the start of the mapping, aligned.
        unsafe { &*(self.base as *const Header) }
    }

    fn slot_base(&self, i: usize) -> *mut u8 {
        assert!(i < self.clients);
        // SAFETY: in bounds of the mapping.
        unsafe { self.base.add(header_size() + i * self.slot_size) }
    }

    pub fn slot(&self, i: usize) -> &Slot {
        // SAFETY: 64-byte aligned and in bounds; Slot is all atomics.
        unsafe { &*(self.slot_base(i) as *const Slot) }
    }

    fn hist_area(&self, i: usize, ty: usize) -> *mut u8 {
        assert!(ty < self.types);
        let off = std::mem::size_of::<Slot>().div_ceil(64) * 64 + ty * self.hist_bytes;
        // SAFETY: in bounds of client i's slot.
        unsafe { self.slot_base(i).add(off) }
    }

    /// The window, once the supervisor has published it.
    pub fn window(&self) -> Option<(u64, u64)> {
        let h = self.header();
        let w0 = h.window_start.load(Ordering::Acquire);
        (w0 != 0).then(|| (w0, h.window_end.load(Ordering::Relaxed)))
    }

    pub fn publish_window(&self, w0: u64, w1: u64) {
        let h = self.header();
        h.window_end.store(w1, Ordering::Relaxed);
        h.window_start.store(w0, Ordering::Release);
    }

    /// Client `i` writes its record and histograms, then marks itself finished.
    pub fn finish(
        &self,
        i: usize,
        rec: &ClientRecord,
        hists: &[Histogram<u64>],
    ) -> Result<(), String> {
        let s = self.slot(i);
        let mut buf = Vec::with_capacity(4096);
        for (ty, h) in hists.iter().enumerate() {
            buf.clear();
            V2Serializer::new()
                .serialize(h, &mut buf)
                .map_err(|e| format!("cannot encode the latency histogram: {e:?}"))?;
            if buf.len() > self.hist_bytes {
                return Err(format!(
                    "latency histogram of {} bytes exceeds its slot of {}",
                    buf.len(),
                    self.hist_bytes
                ));
            }
            // SAFETY: the area is this client's own and large enough.
            unsafe {
                std::ptr::copy_nonoverlapping(buf.as_ptr(), self.hist_area(i, ty), buf.len())
            };
            s.hist_len[ty].store(buf.len() as u32, Ordering::Relaxed);
        }
        s.first_start.store(rec.first_start_ns, Ordering::Relaxed);
        s.last_end.store(rec.last_end_ns, Ordering::Relaxed);
        s.window_ops.store(rec.window_ops, Ordering::Relaxed);
        s.total_ops.store(rec.total_ops, Ordering::Relaxed);
        s.window_bytes.store(rec.window_bytes, Ordering::Relaxed);
        for t in 0..MAX_OP_TYPES {
            s.cpu_ns[t].store(rec.cpu.ns[t], Ordering::Relaxed);
            s.cpu_ops[t].store(rec.cpu.ops[t], Ordering::Relaxed);
        }
        s.finished.store(1, Ordering::Release);
        Ok(())
    }

    pub fn finished(&self, i: usize) -> bool {
        self.slot(i).finished.load(Ordering::Acquire) == 1
    }

    /// A finished client's record.
    pub fn record(&self, i: usize) -> ClientRecord {
        let s = self.slot(i);
        ClientRecord {
            client: i as u32,
            first_start_ns: s.first_start.load(Ordering::Relaxed),
            last_end_ns: s.last_end.load(Ordering::Relaxed),
            window_ops: s.window_ops.load(Ordering::Relaxed),
            total_ops: s.total_ops.load(Ordering::Relaxed),
            window_bytes: s.window_bytes.load(Ordering::Relaxed),
            cpu: OpCpu {
                ns: std::array::from_fn(|t| s.cpu_ns[t].load(Ordering::Relaxed)),
                ops: std::array::from_fn(|t| s.cpu_ops[t].load(Ordering::Relaxed)),
            },
        }
    }

    /// A finished client's histogram of type `ty`.
    pub fn histogram(&self, i: usize, ty: usize) -> Result<Histogram<u64>, String> {
        let n = self.slot(i).hist_len[ty].load(Ordering::Relaxed) as usize;
        // SAFETY: the writer finished (Acquire in `finished`) before this read.
        let bytes = unsafe { std::slice::from_raw_parts(self.hist_area(i, ty), n) };
        Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| format!("client {i}: unreadable latency histogram: {e:?}"))
    }

    pub fn set_client_error(&self, i: usize, msg: &str) {
        let s = self.slot(i);
        write_text(&s.error, &s.error_len, msg);
    }

    pub fn client_error(&self, i: usize) -> Option<String> {
        let s = self.slot(i);
        read_text(&s.error, &s.error_len)
    }

    pub fn set_server_error(&self, msg: &str) {
        let h = self.header();
        write_text(&h.server_error, &h.server_error_len, msg);
    }

    pub fn server_error(&self) -> Option<String> {
        let h = self.header();
        read_text(&h.server_error, &h.server_error_len)
    }
}

fn write_text(area: &[AtomicU8], len: &AtomicU32, msg: &str) {
    let b = msg.as_bytes();
    let n = b.len().min(area.len());
    for (k, &c) in b[..n].iter().enumerate() {
        area[k].store(c, Ordering::Relaxed);
    }
    len.store(n as u32, Ordering::Release);
}

impl Drop for Board {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what new() mapped.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_and_records_travel_through_the_slots_exactly() {
        let board = Board::new(3, 2).unwrap();
        let mut hs = vec![latency_histogram(), latency_histogram()];
        for v in [1, 2, 3, 1000, 1_000_000, 99_000_000_000] {
            hs[0].record(v).unwrap();
        }
        // The worst case: every bucket holds a distinct count.
        for (k, v) in hs[1].clone().iter_all().enumerate() {
            hs[1]
                .record_n(v.value_iterated_to(), 1 + k as u64 * 7919)
                .unwrap();
        }
        assert!(hs[1].iter_recorded().count() > 1000, "not the worst case");
        let rec = ClientRecord {
            client: 1,
            first_start_ns: 10,
            last_end_ns: 20,
            window_ops: 5,
            total_ops: 9,
            window_bytes: 7,
            cpu: OpCpu {
                ns: std::array::from_fn(|t| 1000 * t as u64),
                ops: std::array::from_fn(|t| t as u64 % 3),
            },
        };
        assert!(!board.finished(1));
        board.finish(1, &rec, &hs).unwrap();
        assert!(board.finished(1));
        assert_eq!(board.record(1), rec);
        assert_eq!(board.histogram(1, 0).unwrap(), hs[0]);
        assert_eq!(board.histogram(1, 1).unwrap(), hs[1]);
        assert!(!board.finished(0) && !board.finished(2));
        board.set_client_error(2, "broken pipe");
        assert_eq!(board.client_error(2).as_deref(), Some("broken pipe"));
        assert_eq!(board.client_error(0), None);
        assert_eq!(board.window(), None);
        board.publish_window(5, 9);
        assert_eq!(board.window(), Some((5, 9)));
    }
}
