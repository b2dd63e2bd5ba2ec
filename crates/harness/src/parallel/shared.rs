//! Per-process result slots in one shared anonymous mapping, made before the
//! fork. Children write their timings here; the parent reads them after the
//! children have exited. One mapping whatever N (lmbench3's "equivalent
//! design alternative" to sending results down the shared pipe).

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

pub const ERROR_BYTES: usize = 1024;

#[repr(C)]
pub struct Header {
    pub heartbeat: AtomicU64,
    pub iterations: AtomicU64,
    pub running_since: AtomicU64,
    pub running_until: AtomicU64,
    pub recorded: AtomicU32,
    /// 1 while the process waits at a barrier: waiting is not stalling.
    pub waiting: AtomicU32,
    pub error_len: AtomicU32,
    pub error: [AtomicU8; ERROR_BYTES],
    pub extras_len: AtomicU32,
    pub extras: [Extra; crate::bench::MAX_EXTRAS],
}

pub const EXTRA_NAME_BYTES: usize = 48;

#[repr(C)]
pub struct Extra {
    pub value: AtomicU64,
    pub name: [AtomicU8; EXTRA_NAME_BYTES],
}

#[repr(C)]
pub struct RawInterval {
    pub start: AtomicU64,
    pub end: AtomicU64,
    pub iterations: AtomicU64,
    pub preemptions: AtomicU32,
}

/// A fresh anonymous mapping of `len` bytes that forked children share,
/// zero-filled by the kernel (all-zero bytes are valid atomics); `flags`
/// add to MAP_SHARED | MAP_ANONYMOUS. The owner unmaps it when dropped.
pub fn map_shared(len: usize, flags: libc::c_int) -> std::io::Result<*mut u8> {
    // SAFETY: a new mapping at an address the kernel chooses.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS | flags,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(p as *mut u8)
}

pub struct Slots {
    base: *mut u8,
    len: usize,
    slot_size: usize,
    count: usize,
    reps: usize,
}

// The mapping is shared memory of atomics; handing it to another thread of
// the parent is as safe as handing it to another process.
unsafe impl Send for Slots {}

impl Slots {
    pub fn new(count: usize, reps: usize) -> std::io::Result<Slots> {
        let raw = std::mem::size_of::<Header>() + reps * std::mem::size_of::<RawInterval>();
        let slot_size = raw.div_ceil(64) * 64; // own cache lines per process
        let len = (slot_size * count).max(1);
        Ok(Slots {
            base: map_shared(len, 0)?,
            len,
            slot_size,
            count,
            reps,
        })
    }

    pub fn header(&self, i: usize) -> &Header {
        assert!(i < self.count);
        // SAFETY: in bounds and 64-byte aligned; Header is all atomics.
        unsafe { &*(self.base.add(i * self.slot_size) as *const Header) }
    }

    pub fn interval(&self, i: usize, rep: usize) -> &RawInterval {
        assert!(i < self.count && rep < self.reps);
        let off = i * self.slot_size
            + std::mem::size_of::<Header>()
            + rep * std::mem::size_of::<RawInterval>();
        // SAFETY: in bounds; RawInterval is 8-byte aligned atomics.
        unsafe { &*(self.base.add(off) as *const RawInterval) }
    }

    pub fn set_error(&self, i: usize, msg: &str) {
        let h = self.header(i);
        let bytes = msg.as_bytes();
        let n = bytes.len().min(ERROR_BYTES);
        for (k, &b) in bytes[..n].iter().enumerate() {
            h.error[k].store(b, Ordering::Relaxed);
        }
        h.error_len.store(n as u32, Ordering::Release);
    }

    pub fn set_extras(&self, i: usize, extras: &[(String, f64)]) {
        let h = self.header(i);
        let n = extras.len().min(h.extras.len());
        for (slot, (name, v)) in h.extras.iter().zip(extras) {
            let b = name.as_bytes();
            for k in 0..EXTRA_NAME_BYTES {
                slot.name[k].store(
                    if k < b.len().min(EXTRA_NAME_BYTES - 1) {
                        b[k]
                    } else {
                        0
                    },
                    Ordering::Relaxed,
                );
            }
            slot.value.store(v.to_bits(), Ordering::Relaxed);
        }
        h.extras_len.store(n as u32, Ordering::Release);
    }

    pub fn extras(&self, i: usize) -> Vec<(String, f64)> {
        let h = self.header(i);
        let n = h.extras_len.load(Ordering::Acquire) as usize;
        h.extras[..n]
            .iter()
            .map(|e| {
                let b: Vec<u8> = e
                    .name
                    .iter()
                    .map(|c| c.load(Ordering::Relaxed))
                    .take_while(|&c| c != 0)
                    .collect();
                (
                    String::from_utf8_lossy(&b).into_owned(),
                    f64::from_bits(e.value.load(Ordering::Relaxed)),
                )
            })
            .collect()
    }

    pub fn error(&self, i: usize) -> Option<String> {
        let h = self.header(i);
        read_text(&h.error, &h.error_len)
    }
}

/// The text of `len` bytes written into a shared `area`, if any.
pub(crate) fn read_text(area: &[AtomicU8], len: &AtomicU32) -> Option<String> {
    let n = len.load(Ordering::Acquire) as usize;
    (n > 0).then(|| {
        let v: Vec<u8> = area[..n]
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        String::from_utf8_lossy(&v).into_owned()
    })
}

impl Drop for Slots {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what new() mapped.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}
