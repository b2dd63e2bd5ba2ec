//! Files for the file and VM families (lat_mmap, lat_pagefault, lat_select,
//! bw_file_rd, bw_mmap_rd): a cached scratch
//! file that is unlinked as soon as it is open (so no file outlives the
//! benchmark, whatever happens), or kept by name for the `open2close`
//! modes that reopen it (inside the scratch directory, which the harness
//! removes, and the next run's stale sweep removes after a SIGKILL), and
//! read-only shared mappings of it; the file-size parameter the re-read
//! families share.

use std::ffi::CString;
use std::os::fd::RawFd;

use touchstone_harness::{BenchError, Context, Fallible};

use super::sys::{self, cstring, errno};
use crate::params::Param;

/// The file size of the re-read families (bw_file_rd, bw_mmap_rd).
pub const FILE_SIZE: Param = Param::size("size", 64 << 10, 1 << 30)
    .measured(&["1m", "8m", "64m"])
    .quick(&["8m"])
    .help("file size");

/// A `size`-byte file of non-zero bytes in the scratch directory, written
/// (so its pages are in the page cache), already unlinked; its descriptor.
pub fn cached_file(ctx: &Context, name: &str, size: usize) -> Fallible<RawFd> {
    Ok(cached_file_named_if(ctx, name, size, false)?.0)
}

/// A cached file the VM families map again and again (lat_mmap,
/// lat_pagefault): made and unlinked in setup, closed in cleanup.
pub struct MappedFile {
    pub size: usize,
    /// −1 until `open` and after `close`.
    pub fd: RawFd,
    /// The page size, read in `open`.
    pub page: usize,
}

impl MappedFile {
    /// A `size`-byte file, not made yet.
    pub fn of(size: usize) -> MappedFile {
        MappedFile {
            size,
            fd: -1,
            page: 4096,
        }
    }
    /// Make the file (`cached_file`).
    pub fn open(&mut self, ctx: &Context, name: &str) -> Fallible {
        self.page = sys::page_size();
        self.fd = cached_file(ctx, name, self.size)?;
        Ok(())
    }
    /// A new read-only mapping of the whole file (`map`).
    #[inline]
    pub fn map(&self) -> Fallible<*const u8> {
        map(self.fd, self.size)
    }
    pub fn close(&mut self) {
        sys::close_and_clear(&mut self.fd);
    }
}

/// As `cached_file`, but when `keep_name` the file keeps its name (returned)
/// for benchmarks that reopen it; `close_file` removes it.
pub fn cached_file_named_if(
    ctx: &Context,
    name: &str,
    size: usize,
    keep_name: bool,
) -> Fallible<(RawFd, Option<CString>)> {
    let (fd, c) = cached_named_file(ctx, name, size)?;
    if keep_name {
        return Ok((fd, Some(c)));
    }
    // SAFETY: removing the file just made; the descriptor keeps it alive.
    unsafe { libc::unlink(c.as_ptr()) };
    Ok((fd, None))
}

/// Close a file `cached_file_named_if` made, and remove it if it kept its
/// name.
pub fn close_file(fd: &mut RawFd, name: &mut Option<CString>) {
    sys::close(*fd);
    *fd = -1;
    if let Some(name) = name.take() {
        // SAFETY: removing our scratch file.
        unsafe { libc::unlink(name.as_ptr()) };
    }
}

fn cached_named_file(ctx: &Context, name: &str, size: usize) -> Fallible<(RawFd, CString)> {
    let path = ctx.scratch.join(format!("{name}.{}", ctx.process));
    let c = cstring(&path)?;
    let fd = sys::create_new(&path)?;
    let chunk: Vec<u8> = (0..1 << 16).map(|i| (i % 251 + 1) as u8).collect();
    let mut left = size;
    while left > 0 {
        let k = left.min(chunk.len());
        if let Err(e) = sys::write_all(fd, &chunk[..k]) {
            sys::close(fd);
            unsafe { libc::unlink(c.as_ptr()) };
            return Err(BenchError(format!("write {}: {e}", path.display())));
        }
        left -= k;
    }
    Ok((fd, c))
}

/// Map `len` bytes of `fd` read-only and shared. Inline: lat_mmap times it.
#[inline]
pub fn map(fd: RawFd, len: usize) -> Fallible<*const u8> {
    // SAFETY: a new read-only mapping of our file.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(errno("mmap"));
    }
    Ok(p as *const u8)
}

#[inline]
pub fn unmap(p: *const u8, len: usize) {
    // SAFETY: unmapping a mapping `map` returned with this length.
    unsafe { libc::munmap(p as *mut libc::c_void, len) };
}

/// Read one byte of every page of `[p, p+len)` (volatile: each read must
/// happen); returns their sum so the caller can keep it alive. Callers
/// pass a mapping `map` made and keep it mapped while they call.
#[inline]
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn touch_pages(p: *const u8, len: usize, page: usize) -> u64 {
    let mut s = 0u64;
    let mut off = 0;
    while off < len {
        // SAFETY: within the mapping.
        s = s.wrapping_add(unsafe { std::ptr::read_volatile(p.add(off)) } as u64);
        off += page;
    }
    s
}

/// Sum `[p, p+len)` as 64-bit words (len a multiple of 8); every word is
/// read, the sum is returned to be kept alive.
#[inline]
pub fn sum_words(p: *const u8, len: usize) -> u64 {
    // SAFETY: the region is mapped/allocated, 8-byte aligned, len/8 words.
    let words = unsafe { std::slice::from_raw_parts(p as *const u64, len / 8) };
    words.iter().fold(0u64, |a, &w| a.wrapping_add(w))
}
