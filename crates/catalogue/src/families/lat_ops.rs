//! lat_ops: the latency of basic arithmetic (lmbench's lat_ops): add, mul,
//! div, mod and bit (xor) on int (32-bit) and int64, add, mul and div on
//! float and double. Each kernel is a dependent chain of one instruction in
//! inline assembly, so the optimiser can neither fold nor reorder it, with
//! values that stay bounded: add/sub pairs, multiply by -1 (int) or by 2
//! then 0.5 (float), x = c / x (oscillates near sqrt(c)), x = (c mod x) | m
//! (stays in [m, 2m); one 1-cycle `or` rides on each mod), xor twice. No
//! overflow, underflow, denormal or division by zero can occur. x86-64 only.

use touchstone_harness::{Benchmark, Fallible, Shape};
use touchstone_results::Statistic;

use crate::family::{Built, Family, Mode};
use crate::params::{Kind, Param, Point};

/// The operation names, type first (lmbench prints "int64 mul").
pub const NAMES: &[&str] = &[
    "int_bit",
    "int_add",
    "int_mul",
    "int_div",
    "int_mod",
    "int64_bit",
    "int64_add",
    "int64_mul",
    "int64_div",
    "int64_mod",
    "float_add",
    "float_mul",
    "float_div",
    "double_add",
    "double_mul",
    "double_div",
];

/// A kernel: `f(n)` runs `n` calls of `ops` operations.
#[derive(Clone, Copy)]
pub struct Kernel {
    pub f: fn(u64) -> u64,
    pub ops: f64,
}

#[cfg(target_arch = "x86_64")]
#[rustfmt::skip]
pub mod kernels {
    //! Generated shape: `.rept` of the chain's unit, operands in registers.
    use std::arch::asm;
    use std::hint::black_box;

    /// 1 chain(s) of add on int: 100 operations per call.
    pub fn add_int_1(n: u64) -> u64 {
        let mut x: u32 = black_box(12345);
        let y: u32 = black_box(1);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 50",
                    "add {x:e}, {y:e}",
                    "sub {x:e}, {y:e}",
                    ".endr",
                    x = inout(reg) x,
                    y = in(reg) y,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of add on int: 128 operations per call.
    pub fn add_int_8(n: u64) -> u64 {
        let mut x0: u32 = black_box(12345);
        let mut x1: u32 = black_box(12345);
        let mut x2: u32 = black_box(12345);
        let mut x3: u32 = black_box(12345);
        let mut x4: u32 = black_box(12345);
        let mut x5: u32 = black_box(12345);
        let mut x6: u32 = black_box(12345);
        let mut x7: u32 = black_box(12345);
        let y: u32 = black_box(1);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 8",
                    "add {x0:e}, {y:e}",
                    "sub {x0:e}, {y:e}",
                    "add {x1:e}, {y:e}",
                    "sub {x1:e}, {y:e}",
                    "add {x2:e}, {y:e}",
                    "sub {x2:e}, {y:e}",
                    "add {x3:e}, {y:e}",
                    "sub {x3:e}, {y:e}",
                    "add {x4:e}, {y:e}",
                    "sub {x4:e}, {y:e}",
                    "add {x5:e}, {y:e}",
                    "sub {x5:e}, {y:e}",
                    "add {x6:e}, {y:e}",
                    "sub {x6:e}, {y:e}",
                    "add {x7:e}, {y:e}",
                    "sub {x7:e}, {y:e}",
                    ".endr",
                    x0 = inout(reg) x0,
                    x1 = inout(reg) x1,
                    x2 = inout(reg) x2,
                    x3 = inout(reg) x3,
                    x4 = inout(reg) x4,
                    x5 = inout(reg) x5,
                    x6 = inout(reg) x6,
                    x7 = inout(reg) x7,
                    y = in(reg) y,
                    options(nomem, nostack),
                );
            }
        }
        (x0 as u64) ^ (x1 as u64) ^ (x2 as u64) ^ (x3 as u64) ^ (x4 as u64) ^ (x5 as u64) ^ (x6 as u64) ^ (x7 as u64)
    }

    /// 1 chain(s) of mul on int: 100 operations per call.
    pub fn mul_int_1(n: u64) -> u64 {
        let mut x: u32 = black_box(12345);
        let y: u32 = black_box(u64::MAX as u32);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 50",
                    "imul {x:e}, {y:e}",
                    "imul {x:e}, {y:e}",
                    ".endr",
                    x = inout(reg) x,
                    y = in(reg) y,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of mul on int: 128 operations per call.
    pub fn mul_int_8(n: u64) -> u64 {
        let mut x0: u32 = black_box(12345);
        let mut x1: u32 = black_box(12345);
        let mut x2: u32 = black_box(12345);
        let mut x3: u32 = black_box(12345);
        let mut x4: u32 = black_box(12345);
        let mut x5: u32 = black_box(12345);
        let mut x6: u32 = black_box(12345);
        let mut x7: u32 = black_box(12345);
        let y: u32 = black_box(u64::MAX as u32);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 8",
                    "imul {x0:e}, {y:e}",
                    "imul {x0:e}, {y:e}",
                    "imul {x1:e}, {y:e}",
                    "imul {x1:e}, {y:e}",
                    "imul {x2:e}, {y:e}",
                    "imul {x2:e}, {y:e}",
                    "imul {x3:e}, {y:e}",
                    "imul {x3:e}, {y:e}",
                    "imul {x4:e}, {y:e}",
                    "imul {x4:e}, {y:e}",
                    "imul {x5:e}, {y:e}",
                    "imul {x5:e}, {y:e}",
                    "imul {x6:e}, {y:e}",
                    "imul {x6:e}, {y:e}",
                    "imul {x7:e}, {y:e}",
                    "imul {x7:e}, {y:e}",
                    ".endr",
                    x0 = inout(reg) x0,
                    x1 = inout(reg) x1,
                    x2 = inout(reg) x2,
                    x3 = inout(reg) x3,
                    x4 = inout(reg) x4,
                    x5 = inout(reg) x5,
                    x6 = inout(reg) x6,
                    x7 = inout(reg) x7,
                    y = in(reg) y,
                    options(nomem, nostack),
                );
            }
        }
        (x0 as u64) ^ (x1 as u64) ^ (x2 as u64) ^ (x3 as u64) ^ (x4 as u64) ^ (x5 as u64) ^ (x6 as u64) ^ (x7 as u64)
    }

    /// 1 chain(s) of div on int: 100 operations per call.
    pub fn div_int_1(n: u64) -> u64 {
        let mut x: u32 = black_box(46341);
        let c: u32 = black_box(2147483647 as u32);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 50",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x:e}",
                    "mov {x:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x:e}",
                    "mov {x:e}, eax",
                    ".endr",
                    x = inout(reg) x,
                    c = in(reg) c,
                    out("rax") _,
                    out("rdx") _,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of div on int: 128 operations per call.
    pub fn div_int_8(n: u64) -> u64 {
        let mut x0: u32 = black_box(46341);
        let mut x1: u32 = black_box(46341);
        let mut x2: u32 = black_box(46341);
        let mut x3: u32 = black_box(46341);
        let mut x4: u32 = black_box(46341);
        let mut x5: u32 = black_box(46341);
        let mut x6: u32 = black_box(46341);
        let mut x7: u32 = black_box(46341);
        let c: u32 = black_box(2147483647 as u32);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 8",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x0:e}",
                    "mov {x0:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x0:e}",
                    "mov {x0:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x1:e}",
                    "mov {x1:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x1:e}",
                    "mov {x1:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x2:e}",
                    "mov {x2:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x2:e}",
                    "mov {x2:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x3:e}",
                    "mov {x3:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x3:e}",
                    "mov {x3:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x4:e}",
                    "mov {x4:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x4:e}",
                    "mov {x4:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x5:e}",
                    "mov {x5:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x5:e}",
                    "mov {x5:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x6:e}",
                    "mov {x6:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x6:e}",
                    "mov {x6:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x7:e}",
                    "mov {x7:e}, eax",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x7:e}",
                    "mov {x7:e}, eax",
                    ".endr",
                    x0 = inout(reg) x0,
                    x1 = inout(reg) x1,
                    x2 = inout(reg) x2,
                    x3 = inout(reg) x3,
                    x4 = inout(reg) x4,
                    x5 = inout(reg) x5,
                    x6 = inout(reg) x6,
                    x7 = inout(reg) x7,
                    c = in(reg) c,
                    out("rax") _,
                    out("rdx") _,
                    options(nomem, nostack),
                );
            }
        }
        (x0 as u64) ^ (x1 as u64) ^ (x2 as u64) ^ (x3 as u64) ^ (x4 as u64) ^ (x5 as u64) ^ (x6 as u64) ^ (x7 as u64)
    }

    /// 1 chain(s) of mod on int: 100 operations per call.
    pub fn mod_int_1(n: u64) -> u64 {
        let mut x: u32 = black_box(40000);
        let y: u32 = black_box(32768);
        let c: u32 = black_box(2147483647 as u32);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 50",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x:e}",
                    "mov {x:e}, edx",
                    "or {x:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x:e}",
                    "mov {x:e}, edx",
                    "or {x:e}, {y:e}",
                    ".endr",
                    x = inout(reg) x,
                    y = in(reg) y,
                    c = in(reg) c,
                    out("rax") _,
                    out("rdx") _,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of mod on int: 128 operations per call.
    pub fn mod_int_8(n: u64) -> u64 {
        let mut x0: u32 = black_box(40000);
        let mut x1: u32 = black_box(40000);
        let mut x2: u32 = black_box(40000);
        let mut x3: u32 = black_box(40000);
        let mut x4: u32 = black_box(40000);
        let mut x5: u32 = black_box(40000);
        let mut x6: u32 = black_box(40000);
        let mut x7: u32 = black_box(40000);
        let y: u32 = black_box(32768);
        let c: u32 = black_box(2147483647 as u32);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 8",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x0:e}",
                    "mov {x0:e}, edx",
                    "or {x0:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x0:e}",
                    "mov {x0:e}, edx",
                    "or {x0:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x1:e}",
                    "mov {x1:e}, edx",
                    "or {x1:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x1:e}",
                    "mov {x1:e}, edx",
                    "or {x1:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x2:e}",
                    "mov {x2:e}, edx",
                    "or {x2:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x2:e}",
                    "mov {x2:e}, edx",
                    "or {x2:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x3:e}",
                    "mov {x3:e}, edx",
                    "or {x3:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x3:e}",
                    "mov {x3:e}, edx",
                    "or {x3:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x4:e}",
                    "mov {x4:e}, edx",
                    "or {x4:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x4:e}",
                    "mov {x4:e}, edx",
                    "or {x4:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x5:e}",
                    "mov {x5:e}, edx",
                    "or {x5:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x5:e}",
                    "mov {x5:e}, edx",
                    "or {x5:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x6:e}",
                    "mov {x6:e}, edx",
                    "or {x6:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x6:e}",
                    "mov {x6:e}, edx",
                    "or {x6:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x7:e}",
                    "mov {x7:e}, edx",
                    "or {x7:e}, {y:e}",
                    "mov eax, {c:e}",
                    "cdq",
                    "idiv {x7:e}",
                    "mov {x7:e}, edx",
                    "or {x7:e}, {y:e}",
                    ".endr",
                    x0 = inout(reg) x0,
                    x1 = inout(reg) x1,
                    x2 = inout(reg) x2,
                    x3 = inout(reg) x3,
                    x4 = inout(reg) x4,
                    x5 = inout(reg) x5,
                    x6 = inout(reg) x6,
                    x7 = inout(reg) x7,
                    y = in(reg) y,
                    c = in(reg) c,
                    out("rax") _,
                    out("rdx") _,
                    options(nomem, nostack),
                );
            }
        }
        (x0 as u64) ^ (x1 as u64) ^ (x2 as u64) ^ (x3 as u64) ^ (x4 as u64) ^ (x5 as u64) ^ (x6 as u64) ^ (x7 as u64)
    }

    /// 1 chain(s) of bit on int: 100 operations per call.
    pub fn bit_int_1(n: u64) -> u64 {
        let mut x: u32 = black_box(12345);
        let y: u32 = black_box(0x5a5a);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 50",
                    "xor {x:e}, {y:e}",
                    "xor {x:e}, {y:e}",
                    ".endr",
                    x = inout(reg) x,
                    y = in(reg) y,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of bit on int: 128 operations per call.
    pub fn bit_int_8(n: u64) -> u64 {
        let mut x0: u32 = black_box(12345);
        let mut x1: u32 = black_box(12345);
        let mut x2: u32 = black_box(12345);
        let mut x3: u32 = black_box(12345);
        let mut x4: u32 = black_box(12345);
        let mut x5: u32 = black_box(12345);
        let mut x6: u32 = black_box(12345);
        let mut x7: u32 = black_box(12345);
        let y: u32 = black_box(0x5a5a);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 8",
                    "xor {x0:e}, {y:e}",
                    "xor {x0:e}, {y:e}",
                    "xor {x1:e}, {y:e}",
                    "xor {x1:e}, {y:e}",
                    "xor {x2:e}, {y:e}",
                    "xor {x2:e}, {y:e}",
                    "xor {x3:e}, {y:e}",
                    "xor {x3:e}, {y:e}",
                    "xor {x4:e}, {y:e}",
                    "xor {x4:e}, {y:e}",
                    "xor {x5:e}, {y:e}",
                    "xor {x5:e}, {y:e}",
                    "xor {x6:e}, {y:e}",
                    "xor {x6:e}, {y:e}",
                    "xor {x7:e}, {y:e}",
                    "xor {x7:e}, {y:e}",
                    ".endr",
                    x0 = inout(reg) x0,
                    x1 = inout(reg) x1,
                    x2 = inout(reg) x2,
                    x3 = inout(reg) x3,
                    x4 = inout(reg) x4,
                    x5 = inout(reg) x5,
                    x6 = inout(reg) x6,
                    x7 = inout(reg) x7,
                    y = in(reg) y,
                    options(nomem, nostack),
                );
            }
        }
        (x0 as u64) ^ (x1 as u64) ^ (x2 as u64) ^ (x3 as u64) ^ (x4 as u64) ^ (x5 as u64) ^ (x6 as u64) ^ (x7 as u64)
    }

    /// 1 chain(s) of add on int64: 100 operations per call.
    pub fn add_int64_1(n: u64) -> u64 {
        let mut x: u64 = black_box(12345);
        let y: u64 = black_box(1);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 50",
                    "add {x}, {y}",
                    "sub {x}, {y}",
                    ".endr",
                    x = inout(reg) x,
                    y = in(reg) y,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of add on int64: 128 operations per call.
    pub fn add_int64_8(n: u64) -> u64 {
        let mut x0: u64 = black_box(12345);
        let mut x1: u64 = black_box(12345);
        let mut x2: u64 = black_box(12345);
        let mut x3: u64 = black_box(12345);
        let mut x4: u64 = black_box(12345);
        let mut x5: u64 = black_box(12345);
        let mut x6: u64 = black_box(12345);
        let mut x7: u64 = black_box(12345);
        let y: u64 = black_box(1);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 8",
                    "add {x0}, {y}",
                    "sub {x0}, {y}",
                    "add {x1}, {y}",
                    "sub {x1}, {y}",
                    "add {x2}, {y}",
                    "sub {x2}, {y}",
                    "add {x3}, {y}",
                    "sub {x3}, {y}",
                    "add {x4}, {y}",
                    "sub {x4}, {y}",
                    "add {x5}, {y}",
                    "sub {x5}, {y}",
                    "add {x6}, {y}",
                    "sub {x6}, {y}",
                    "add {x7}, {y}",
                    "sub {x7}, {y}",
                    ".endr",
                    x0 = inout(reg) x0,
                    x1 = inout(reg) x1,
                    x2 = inout(reg) x2,
                    x3 = inout(reg) x3,
                    x4 = inout(reg) x4,
                    x5 = inout(reg) x5,
                    x6 = inout(reg) x6,
                    x7 = inout(reg) x7,
                    y = in(reg) y,
                    options(nomem, nostack),
                );
            }
        }
        (x0 as u64) ^ (x1 as u64) ^ (x2 as u64) ^ (x3 as u64) ^ (x4 as u64) ^ (x5 as u64) ^ (x6 as u64) ^ (x7 as u64)
    }

    /// 1 chain(s) of mul on int64: 100 operations per call.
    pub fn mul_int64_1(n: u64) -> u64 {
        let mut x: u64 = black_box(12345);
        let y: u64 = black_box(u64::MAX as u64);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 50",
                    "imul {x}, {y}",
                    "imul {x}, {y}",
                    ".endr",
                    x = inout(reg) x,
                    y = in(reg) y,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of mul on int64: 128 operations per call.
    pub fn mul_int64_8(n: u64) -> u64 {
        let mut x0: u64 = black_box(12345);
        let mut x1: u64 = black_box(12345);
        let mut x2: u64 = black_box(12345);
        let mut x3: u64 = black_box(12345);
        let mut x4: u64 = black_box(12345);
        let mut x5: u64 = black_box(12345);
        let mut x6: u64 = black_box(12345);
        let mut x7: u64 = black_box(12345);
        let y: u64 = black_box(u64::MAX as u64);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 8",
                    "imul {x0}, {y}",
                    "imul {x0}, {y}",
                    "imul {x1}, {y}",
                    "imul {x1}, {y}",
                    "imul {x2}, {y}",
                    "imul {x2}, {y}",
                    "imul {x3}, {y}",
                    "imul {x3}, {y}",
                    "imul {x4}, {y}",
                    "imul {x4}, {y}",
                    "imul {x5}, {y}",
                    "imul {x5}, {y}",
                    "imul {x6}, {y}",
                    "imul {x6}, {y}",
                    "imul {x7}, {y}",
                    "imul {x7}, {y}",
                    ".endr",
                    x0 = inout(reg) x0,
                    x1 = inout(reg) x1,
                    x2 = inout(reg) x2,
                    x3 = inout(reg) x3,
                    x4 = inout(reg) x4,
                    x5 = inout(reg) x5,
                    x6 = inout(reg) x6,
                    x7 = inout(reg) x7,
                    y = in(reg) y,
                    options(nomem, nostack),
                );
            }
        }
        (x0 as u64) ^ (x1 as u64) ^ (x2 as u64) ^ (x3 as u64) ^ (x4 as u64) ^ (x5 as u64) ^ (x6 as u64) ^ (x7 as u64)
    }

    /// 1 chain(s) of div on int64: 100 operations per call.
    pub fn div_int64_1(n: u64) -> u64 {
        let mut x: u64 = black_box(31622777);
        let c: u64 = black_box(1000000000000000 as u64);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 50",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x}",
                    "mov {x}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x}",
                    "mov {x}, rax",
                    ".endr",
                    x = inout(reg) x,
                    c = in(reg) c,
                    out("rax") _,
                    out("rdx") _,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of div on int64: 128 operations per call.
    pub fn div_int64_8(n: u64) -> u64 {
        let mut x0: u64 = black_box(31622777);
        let mut x1: u64 = black_box(31622777);
        let mut x2: u64 = black_box(31622777);
        let mut x3: u64 = black_box(31622777);
        let mut x4: u64 = black_box(31622777);
        let mut x5: u64 = black_box(31622777);
        let mut x6: u64 = black_box(31622777);
        let mut x7: u64 = black_box(31622777);
        let c: u64 = black_box(1000000000000000 as u64);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 8",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x0}",
                    "mov {x0}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x0}",
                    "mov {x0}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x1}",
                    "mov {x1}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x1}",
                    "mov {x1}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x2}",
                    "mov {x2}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x2}",
                    "mov {x2}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x3}",
                    "mov {x3}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x3}",
                    "mov {x3}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x4}",
                    "mov {x4}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x4}",
                    "mov {x4}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x5}",
                    "mov {x5}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x5}",
                    "mov {x5}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x6}",
                    "mov {x6}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x6}",
                    "mov {x6}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x7}",
                    "mov {x7}, rax",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x7}",
                    "mov {x7}, rax",
                    ".endr",
                    x0 = inout(reg) x0,
                    x1 = inout(reg) x1,
                    x2 = inout(reg) x2,
                    x3 = inout(reg) x3,
                    x4 = inout(reg) x4,
                    x5 = inout(reg) x5,
                    x6 = inout(reg) x6,
                    x7 = inout(reg) x7,
                    c = in(reg) c,
                    out("rax") _,
                    out("rdx") _,
                    options(nomem, nostack),
                );
            }
        }
        (x0 as u64) ^ (x1 as u64) ^ (x2 as u64) ^ (x3 as u64) ^ (x4 as u64) ^ (x5 as u64) ^ (x6 as u64) ^ (x7 as u64)
    }

    /// 1 chain(s) of mod on int64: 100 operations per call.
    pub fn mod_int64_1(n: u64) -> u64 {
        let mut x: u64 = black_box(1500000);
        let y: u64 = black_box(1048576);
        let c: u64 = black_box(1000000000000000 as u64);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 50",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x}",
                    "mov {x}, rdx",
                    "or {x}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x}",
                    "mov {x}, rdx",
                    "or {x}, {y}",
                    ".endr",
                    x = inout(reg) x,
                    y = in(reg) y,
                    c = in(reg) c,
                    out("rax") _,
                    out("rdx") _,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of mod on int64: 128 operations per call.
    pub fn mod_int64_8(n: u64) -> u64 {
        let mut x0: u64 = black_box(1500000);
        let mut x1: u64 = black_box(1500000);
        let mut x2: u64 = black_box(1500000);
        let mut x3: u64 = black_box(1500000);
        let mut x4: u64 = black_box(1500000);
        let mut x5: u64 = black_box(1500000);
        let mut x6: u64 = black_box(1500000);
        let mut x7: u64 = black_box(1500000);
        let y: u64 = black_box(1048576);
        let c: u64 = black_box(1000000000000000 as u64);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 8",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x0}",
                    "mov {x0}, rdx",
                    "or {x0}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x0}",
                    "mov {x0}, rdx",
                    "or {x0}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x1}",
                    "mov {x1}, rdx",
                    "or {x1}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x1}",
                    "mov {x1}, rdx",
                    "or {x1}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x2}",
                    "mov {x2}, rdx",
                    "or {x2}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x2}",
                    "mov {x2}, rdx",
                    "or {x2}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x3}",
                    "mov {x3}, rdx",
                    "or {x3}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x3}",
                    "mov {x3}, rdx",
                    "or {x3}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x4}",
                    "mov {x4}, rdx",
                    "or {x4}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x4}",
                    "mov {x4}, rdx",
                    "or {x4}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x5}",
                    "mov {x5}, rdx",
                    "or {x5}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x5}",
                    "mov {x5}, rdx",
                    "or {x5}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x6}",
                    "mov {x6}, rdx",
                    "or {x6}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x6}",
                    "mov {x6}, rdx",
                    "or {x6}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x7}",
                    "mov {x7}, rdx",
                    "or {x7}, {y}",
                    "mov rax, {c}",
                    "cqo",
                    "idiv {x7}",
                    "mov {x7}, rdx",
                    "or {x7}, {y}",
                    ".endr",
                    x0 = inout(reg) x0,
                    x1 = inout(reg) x1,
                    x2 = inout(reg) x2,
                    x3 = inout(reg) x3,
                    x4 = inout(reg) x4,
                    x5 = inout(reg) x5,
                    x6 = inout(reg) x6,
                    x7 = inout(reg) x7,
                    y = in(reg) y,
                    c = in(reg) c,
                    out("rax") _,
                    out("rdx") _,
                    options(nomem, nostack),
                );
            }
        }
        (x0 as u64) ^ (x1 as u64) ^ (x2 as u64) ^ (x3 as u64) ^ (x4 as u64) ^ (x5 as u64) ^ (x6 as u64) ^ (x7 as u64)
    }

    /// 1 chain(s) of bit on int64: 100 operations per call.
    pub fn bit_int64_1(n: u64) -> u64 {
        let mut x: u64 = black_box(12345);
        let y: u64 = black_box(0x5a5a);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 50",
                    "xor {x}, {y}",
                    "xor {x}, {y}",
                    ".endr",
                    x = inout(reg) x,
                    y = in(reg) y,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of bit on int64: 128 operations per call.
    pub fn bit_int64_8(n: u64) -> u64 {
        let mut x0: u64 = black_box(12345);
        let mut x1: u64 = black_box(12345);
        let mut x2: u64 = black_box(12345);
        let mut x3: u64 = black_box(12345);
        let mut x4: u64 = black_box(12345);
        let mut x5: u64 = black_box(12345);
        let mut x6: u64 = black_box(12345);
        let mut x7: u64 = black_box(12345);
        let y: u64 = black_box(0x5a5a);
        for _ in 0..n {
            // SAFETY: register-only arithmetic; div/mod never divide by zero (see module doc).
            unsafe {
                asm!(
                    ".rept 8",
                    "xor {x0}, {y}",
                    "xor {x0}, {y}",
                    "xor {x1}, {y}",
                    "xor {x1}, {y}",
                    "xor {x2}, {y}",
                    "xor {x2}, {y}",
                    "xor {x3}, {y}",
                    "xor {x3}, {y}",
                    "xor {x4}, {y}",
                    "xor {x4}, {y}",
                    "xor {x5}, {y}",
                    "xor {x5}, {y}",
                    "xor {x6}, {y}",
                    "xor {x6}, {y}",
                    "xor {x7}, {y}",
                    "xor {x7}, {y}",
                    ".endr",
                    x0 = inout(reg) x0,
                    x1 = inout(reg) x1,
                    x2 = inout(reg) x2,
                    x3 = inout(reg) x3,
                    x4 = inout(reg) x4,
                    x5 = inout(reg) x5,
                    x6 = inout(reg) x6,
                    x7 = inout(reg) x7,
                    y = in(reg) y,
                    options(nomem, nostack),
                );
            }
        }
        (x0 as u64) ^ (x1 as u64) ^ (x2 as u64) ^ (x3 as u64) ^ (x4 as u64) ^ (x5 as u64) ^ (x6 as u64) ^ (x7 as u64)
    }

    /// 1 chain(s) of add on float: 100 operations per call.
    pub fn add_float_1(n: u64) -> u64 {
        let mut x: f32 = black_box(1.5);
        let y: f32 = black_box(1.0);
        for _ in 0..n {
            // SAFETY: register-only arithmetic on normal, bounded values.
            unsafe {
                asm!(
                    ".rept 50",
                    "addss {x}, {y}",
                    "subss {x}, {y}",
                    ".endr",
                    x = inout(xmm_reg) x,
                    y = in(xmm_reg) y,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of add on float: 128 operations per call.
    pub fn add_float_8(n: u64) -> u64 {
        let mut x0: f32 = black_box(1.5);
        let mut x1: f32 = black_box(1.5);
        let mut x2: f32 = black_box(1.5);
        let mut x3: f32 = black_box(1.5);
        let mut x4: f32 = black_box(1.5);
        let mut x5: f32 = black_box(1.5);
        let mut x6: f32 = black_box(1.5);
        let mut x7: f32 = black_box(1.5);
        let y: f32 = black_box(1.0);
        for _ in 0..n {
            // SAFETY: register-only arithmetic on normal, bounded values.
            unsafe {
                asm!(
                    ".rept 8",
                    "addss {x0}, {y}",
                    "subss {x0}, {y}",
                    "addss {x1}, {y}",
                    "subss {x1}, {y}",
                    "addss {x2}, {y}",
                    "subss {x2}, {y}",
                    "addss {x3}, {y}",
                    "subss {x3}, {y}",
                    "addss {x4}, {y}",
                    "subss {x4}, {y}",
                    "addss {x5}, {y}",
                    "subss {x5}, {y}",
                    "addss {x6}, {y}",
                    "subss {x6}, {y}",
                    "addss {x7}, {y}",
                    "subss {x7}, {y}",
                    ".endr",
                    x0 = inout(xmm_reg) x0,
                    x1 = inout(xmm_reg) x1,
                    x2 = inout(xmm_reg) x2,
                    x3 = inout(xmm_reg) x3,
                    x4 = inout(xmm_reg) x4,
                    x5 = inout(xmm_reg) x5,
                    x6 = inout(xmm_reg) x6,
                    x7 = inout(xmm_reg) x7,
                    y = in(xmm_reg) y,
                    options(nomem, nostack),
                );
            }
        }
        (x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7) as u64
    }

    /// 1 chain(s) of mul on float: 100 operations per call.
    pub fn mul_float_1(n: u64) -> u64 {
        let mut x: f32 = black_box(1.5);
        let y: f32 = black_box(2.0);
        let z: f32 = black_box(0.5);
        for _ in 0..n {
            // SAFETY: register-only arithmetic on normal, bounded values.
            unsafe {
                asm!(
                    ".rept 50",
                    "mulss {x}, {y}",
                    "mulss {x}, {z}",
                    ".endr",
                    x = inout(xmm_reg) x,
                    y = in(xmm_reg) y,
                    z = in(xmm_reg) z,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of mul on float: 128 operations per call.
    pub fn mul_float_8(n: u64) -> u64 {
        let mut x0: f32 = black_box(1.5);
        let mut x1: f32 = black_box(1.5);
        let mut x2: f32 = black_box(1.5);
        let mut x3: f32 = black_box(1.5);
        let mut x4: f32 = black_box(1.5);
        let mut x5: f32 = black_box(1.5);
        let mut x6: f32 = black_box(1.5);
        let mut x7: f32 = black_box(1.5);
        let y: f32 = black_box(2.0);
        let z: f32 = black_box(0.5);
        for _ in 0..n {
            // SAFETY: register-only arithmetic on normal, bounded values.
            unsafe {
                asm!(
                    ".rept 8",
                    "mulss {x0}, {y}",
                    "mulss {x0}, {z}",
                    "mulss {x1}, {y}",
                    "mulss {x1}, {z}",
                    "mulss {x2}, {y}",
                    "mulss {x2}, {z}",
                    "mulss {x3}, {y}",
                    "mulss {x3}, {z}",
                    "mulss {x4}, {y}",
                    "mulss {x4}, {z}",
                    "mulss {x5}, {y}",
                    "mulss {x5}, {z}",
                    "mulss {x6}, {y}",
                    "mulss {x6}, {z}",
                    "mulss {x7}, {y}",
                    "mulss {x7}, {z}",
                    ".endr",
                    x0 = inout(xmm_reg) x0,
                    x1 = inout(xmm_reg) x1,
                    x2 = inout(xmm_reg) x2,
                    x3 = inout(xmm_reg) x3,
                    x4 = inout(xmm_reg) x4,
                    x5 = inout(xmm_reg) x5,
                    x6 = inout(xmm_reg) x6,
                    x7 = inout(xmm_reg) x7,
                    y = in(xmm_reg) y,
                    z = in(xmm_reg) z,
                    options(nomem, nostack),
                );
            }
        }
        (x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7) as u64
    }

    /// 1 chain(s) of div on float: 100 operations per call.
    pub fn div_float_1(n: u64) -> u64 {
        let mut x: f32 = black_box(1.7);
        let c: f32 = black_box(3.0);
        for _ in 0..n {
            // SAFETY: register-only arithmetic on normal, bounded values.
            unsafe {
                asm!(
                    ".rept 50",
                    "movaps {t}, {c}",
                    "divss {t}, {x}",
                    "movaps {x}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x}",
                    "movaps {x}, {t}",
                    ".endr",
                    x = inout(xmm_reg) x,
                    c = in(xmm_reg) c,
                    t = out(xmm_reg) _,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of div on float: 128 operations per call.
    pub fn div_float_8(n: u64) -> u64 {
        let mut x0: f32 = black_box(1.7);
        let mut x1: f32 = black_box(1.7);
        let mut x2: f32 = black_box(1.7);
        let mut x3: f32 = black_box(1.7);
        let mut x4: f32 = black_box(1.7);
        let mut x5: f32 = black_box(1.7);
        let mut x6: f32 = black_box(1.7);
        let mut x7: f32 = black_box(1.7);
        let c: f32 = black_box(3.0);
        for _ in 0..n {
            // SAFETY: register-only arithmetic on normal, bounded values.
            unsafe {
                asm!(
                    ".rept 8",
                    "movaps {t}, {c}",
                    "divss {t}, {x0}",
                    "movaps {x0}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x0}",
                    "movaps {x0}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x1}",
                    "movaps {x1}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x1}",
                    "movaps {x1}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x2}",
                    "movaps {x2}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x2}",
                    "movaps {x2}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x3}",
                    "movaps {x3}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x3}",
                    "movaps {x3}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x4}",
                    "movaps {x4}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x4}",
                    "movaps {x4}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x5}",
                    "movaps {x5}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x5}",
                    "movaps {x5}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x6}",
                    "movaps {x6}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x6}",
                    "movaps {x6}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x7}",
                    "movaps {x7}, {t}",
                    "movaps {t}, {c}",
                    "divss {t}, {x7}",
                    "movaps {x7}, {t}",
                    ".endr",
                    x0 = inout(xmm_reg) x0,
                    x1 = inout(xmm_reg) x1,
                    x2 = inout(xmm_reg) x2,
                    x3 = inout(xmm_reg) x3,
                    x4 = inout(xmm_reg) x4,
                    x5 = inout(xmm_reg) x5,
                    x6 = inout(xmm_reg) x6,
                    x7 = inout(xmm_reg) x7,
                    c = in(xmm_reg) c,
                    t = out(xmm_reg) _,
                    options(nomem, nostack),
                );
            }
        }
        (x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7) as u64
    }

    /// 1 chain(s) of add on double: 100 operations per call.
    pub fn add_double_1(n: u64) -> u64 {
        let mut x: f64 = black_box(1.5);
        let y: f64 = black_box(1.0);
        for _ in 0..n {
            // SAFETY: register-only arithmetic on normal, bounded values.
            unsafe {
                asm!(
                    ".rept 50",
                    "addsd {x}, {y}",
                    "subsd {x}, {y}",
                    ".endr",
                    x = inout(xmm_reg) x,
                    y = in(xmm_reg) y,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of add on double: 128 operations per call.
    pub fn add_double_8(n: u64) -> u64 {
        let mut x0: f64 = black_box(1.5);
        let mut x1: f64 = black_box(1.5);
        let mut x2: f64 = black_box(1.5);
        let mut x3: f64 = black_box(1.5);
        let mut x4: f64 = black_box(1.5);
        let mut x5: f64 = black_box(1.5);
        let mut x6: f64 = black_box(1.5);
        let mut x7: f64 = black_box(1.5);
        let y: f64 = black_box(1.0);
        for _ in 0..n {
            // SAFETY: register-only arithmetic on normal, bounded values.
            unsafe {
                asm!(
                    ".rept 8",
                    "addsd {x0}, {y}",
                    "subsd {x0}, {y}",
                    "addsd {x1}, {y}",
                    "subsd {x1}, {y}",
                    "addsd {x2}, {y}",
                    "subsd {x2}, {y}",
                    "addsd {x3}, {y}",
                    "subsd {x3}, {y}",
                    "addsd {x4}, {y}",
                    "subsd {x4}, {y}",
                    "addsd {x5}, {y}",
                    "subsd {x5}, {y}",
                    "addsd {x6}, {y}",
                    "subsd {x6}, {y}",
                    "addsd {x7}, {y}",
                    "subsd {x7}, {y}",
                    ".endr",
                    x0 = inout(xmm_reg) x0,
                    x1 = inout(xmm_reg) x1,
                    x2 = inout(xmm_reg) x2,
                    x3 = inout(xmm_reg) x3,
                    x4 = inout(xmm_reg) x4,
                    x5 = inout(xmm_reg) x5,
                    x6 = inout(xmm_reg) x6,
                    x7 = inout(xmm_reg) x7,
                    y = in(xmm_reg) y,
                    options(nomem, nostack),
                );
            }
        }
        (x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7) as u64
    }

    /// 1 chain(s) of mul on double: 100 operations per call.
    pub fn mul_double_1(n: u64) -> u64 {
        let mut x: f64 = black_box(1.5);
        let y: f64 = black_box(2.0);
        let z: f64 = black_box(0.5);
        for _ in 0..n {
            // SAFETY: register-only arithmetic on normal, bounded values.
            unsafe {
                asm!(
                    ".rept 50",
                    "mulsd {x}, {y}",
                    "mulsd {x}, {z}",
                    ".endr",
                    x = inout(xmm_reg) x,
                    y = in(xmm_reg) y,
                    z = in(xmm_reg) z,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of mul on double: 128 operations per call.
    pub fn mul_double_8(n: u64) -> u64 {
        let mut x0: f64 = black_box(1.5);
        let mut x1: f64 = black_box(1.5);
        let mut x2: f64 = black_box(1.5);
        let mut x3: f64 = black_box(1.5);
        let mut x4: f64 = black_box(1.5);
        let mut x5: f64 = black_box(1.5);
        let mut x6: f64 = black_box(1.5);
        let mut x7: f64 = black_box(1.5);
        let y: f64 = black_box(2.0);
        let z: f64 = black_box(0.5);
        for _ in 0..n {
            // SAFETY: register-only arithmetic on normal, bounded values.
            unsafe {
                asm!(
                    ".rept 8",
                    "mulsd {x0}, {y}",
                    "mulsd {x0}, {z}",
                    "mulsd {x1}, {y}",
                    "mulsd {x1}, {z}",
                    "mulsd {x2}, {y}",
                    "mulsd {x2}, {z}",
                    "mulsd {x3}, {y}",
                    "mulsd {x3}, {z}",
                    "mulsd {x4}, {y}",
                    "mulsd {x4}, {z}",
                    "mulsd {x5}, {y}",
                    "mulsd {x5}, {z}",
                    "mulsd {x6}, {y}",
                    "mulsd {x6}, {z}",
                    "mulsd {x7}, {y}",
                    "mulsd {x7}, {z}",
                    ".endr",
                    x0 = inout(xmm_reg) x0,
                    x1 = inout(xmm_reg) x1,
                    x2 = inout(xmm_reg) x2,
                    x3 = inout(xmm_reg) x3,
                    x4 = inout(xmm_reg) x4,
                    x5 = inout(xmm_reg) x5,
                    x6 = inout(xmm_reg) x6,
                    x7 = inout(xmm_reg) x7,
                    y = in(xmm_reg) y,
                    z = in(xmm_reg) z,
                    options(nomem, nostack),
                );
            }
        }
        (x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7) as u64
    }

    /// 1 chain(s) of div on double: 100 operations per call.
    pub fn div_double_1(n: u64) -> u64 {
        let mut x: f64 = black_box(1.7);
        let c: f64 = black_box(3.0);
        for _ in 0..n {
            // SAFETY: register-only arithmetic on normal, bounded values.
            unsafe {
                asm!(
                    ".rept 50",
                    "movapd {t}, {c}",
                    "divsd {t}, {x}",
                    "movapd {x}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x}",
                    "movapd {x}, {t}",
                    ".endr",
                    x = inout(xmm_reg) x,
                    c = in(xmm_reg) c,
                    t = out(xmm_reg) _,
                    options(nomem, nostack),
                );
            }
        }
        x as u64
    }

    /// 8 chain(s) of div on double: 128 operations per call.
    pub fn div_double_8(n: u64) -> u64 {
        let mut x0: f64 = black_box(1.7);
        let mut x1: f64 = black_box(1.7);
        let mut x2: f64 = black_box(1.7);
        let mut x3: f64 = black_box(1.7);
        let mut x4: f64 = black_box(1.7);
        let mut x5: f64 = black_box(1.7);
        let mut x6: f64 = black_box(1.7);
        let mut x7: f64 = black_box(1.7);
        let c: f64 = black_box(3.0);
        for _ in 0..n {
            // SAFETY: register-only arithmetic on normal, bounded values.
            unsafe {
                asm!(
                    ".rept 8",
                    "movapd {t}, {c}",
                    "divsd {t}, {x0}",
                    "movapd {x0}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x0}",
                    "movapd {x0}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x1}",
                    "movapd {x1}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x1}",
                    "movapd {x1}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x2}",
                    "movapd {x2}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x2}",
                    "movapd {x2}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x3}",
                    "movapd {x3}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x3}",
                    "movapd {x3}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x4}",
                    "movapd {x4}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x4}",
                    "movapd {x4}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x5}",
                    "movapd {x5}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x5}",
                    "movapd {x5}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x6}",
                    "movapd {x6}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x6}",
                    "movapd {x6}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x7}",
                    "movapd {x7}, {t}",
                    "movapd {t}, {c}",
                    "divsd {t}, {x7}",
                    "movapd {x7}, {t}",
                    ".endr",
                    x0 = inout(xmm_reg) x0,
                    x1 = inout(xmm_reg) x1,
                    x2 = inout(xmm_reg) x2,
                    x3 = inout(xmm_reg) x3,
                    x4 = inout(xmm_reg) x4,
                    x5 = inout(xmm_reg) x5,
                    x6 = inout(xmm_reg) x6,
                    x7 = inout(xmm_reg) x7,
                    c = in(xmm_reg) c,
                    t = out(xmm_reg) _,
                    options(nomem, nostack),
                );
            }
        }
        (x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7) as u64
    }

}

/// The kernel for `name` with 1 or 8 independent chains.
pub fn kernel(name: &str, chains: u32) -> Option<Kernel> {
    #[cfg(target_arch = "x86_64")]
    {
        use kernels::*;
        macro_rules! pick {
            ($($n:literal => $one:ident, $eight:ident;)*) => {
                match (name, chains) {
                    $(($n, 1) => Some(Kernel { f: $one, ops: 100.0 }),
                      ($n, 8) => Some(Kernel { f: $eight, ops: 128.0 }),)*
                    _ => None,
                }
            };
        }
        pick! {
            "int_bit" => bit_int_1, bit_int_8;
            "int_add" => add_int_1, add_int_8;
            "int_mul" => mul_int_1, mul_int_8;
            "int_div" => div_int_1, div_int_8;
            "int_mod" => mod_int_1, mod_int_8;
            "int64_bit" => bit_int64_1, bit_int64_8;
            "int64_add" => add_int64_1, add_int64_8;
            "int64_mul" => mul_int64_1, mul_int64_8;
            "int64_div" => div_int64_1, div_int64_8;
            "int64_mod" => mod_int64_1, mod_int64_8;
            "float_add" => add_float_1, add_float_8;
            "float_mul" => mul_float_1, mul_float_8;
            "float_div" => div_float_1, div_float_8;
            "double_add" => add_double_1, add_double_8;
            "double_mul" => mul_double_1, mul_double_8;
            "double_div" => div_double_1, div_double_8;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (name, chains);
        None
    }
}

pub fn x86_64_only() -> Option<String> {
    if cfg!(target_arch = "x86_64") {
        None
    } else {
        Some("the operation chains are x86-64 assembly".into())
    }
}

/// Runs a kernel `n` times; what `lat_ops` and `par_ops` time.
pub struct Ops {
    pub k: Kernel,
    pub sink: u64,
}

impl Benchmark for Ops {
    /// Timed: `n` calls of the kernel, each a fixed number of dependent
    /// (lat_ops) or 8-way independent (par_ops) register operations in
    /// inline assembly. The result is black_boxed. The loop's own
    /// increment and branch run beside the chain and are not subtracted.
    fn run(&mut self, n: u64) -> Fallible {
        self.sink ^= (self.k.f)(n);
        self.sink = std::hint::black_box(self.sink);
        Ok(())
    }
}

fn build(p: &Point, _: Mode) -> Result<Built, String> {
    let name = p.text("op");
    let k = kernel(name, 1).ok_or_else(|| format!("no kernel for {name} here"))?;
    Ok(Built::new(
        Ops { k, sink: 0 },
        // The chain's latency is a physical limit: the fastest interval.
        Shape::latency(k.ops).with_statistic(Statistic::Min),
    ))
}

pub const FAMILY: Family = Family {
    params: &[Param {
        name: "op",
        help: "type and operation",
        kind: Kind::Choice(NAMES),
        default: NAMES,
        quick: &[
            "int64_add",
            "int64_mul",
            "int64_div",
            "double_add",
            "double_mul",
            "double_div",
        ],
        positional: true,
    }],
    unsupported: x86_64_only,
    ..Family::new(
        "lat_ops",
        "proc",
        "latency of add, mul, div, mod, bit on int, int64, float, double (dependent chains)",
        build,
    )
};

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::testing::{assert_sane, measure_spec, tiny_plan};

    #[test]
    fn every_kernel_exists_and_runs() {
        for n in NAMES {
            for c in [1, 8] {
                let k = kernel(n, c).unwrap();
                let _ = (k.f)(3);
            }
        }
    }

    #[test]
    fn results_are_positive_and_division_is_slower_than_addition() {
        let ms = measure_spec("lat_ops", &tiny_plan(1), Mode::default()).unwrap();
        let get = |n: &str| {
            ms.iter()
                .find(|m| m.name == format!("lat_ops/{n}"))
                .unwrap()
                .value()
        };
        for m in &ms {
            assert_sane(m);
        }
        for ty in ["int", "int64", "float", "double"] {
            let (add, div) = (get(&format!("{ty}_add")), get(&format!("{ty}_div")));
            assert!(div > add, "{ty}: div {div} ns not slower than add {add} ns");
        }
    }
}
