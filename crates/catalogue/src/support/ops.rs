//! The arithmetic kernels that `lat_ops`, `par_ops` and `mhz` time, generated
//! by `ops_table!` from one table (type × operation, at the end of the
//! macros) for each chain count (1 and 8).
//!
//! A kernel `f(n)` runs one `asm!` block `n` times. The block is `.rept R`
//! of an `.irp` over the chains (the assembler expands both) of a *unit*:
//! two operations that return the chain to its range, so a chain can run
//! for ever without overflow, underflow, denormals or division by zero
//! (each row's comment says how). One chain is `.rept 50`, 100 operations
//! per call, one dependent chain: its time per operation is the latency
//! (`lat_ops`, `mhz`). Eight chains are `.rept 8`, 128 operations per call,
//! the eight units interleaved: the chains are independent of each other,
//! so their time per operation shows the overlap (`par_ops`).
//!
//! What must survive the optimiser, and what keeps it:
//! - every operation: they are inline assembly, which the compiler never
//!   folds, strength-reduces, vectorises or reorders, and the block is not
//!   `pure`, so it is treated as having side effects: it runs exactly once
//!   per loop iteration and can be neither hoisted, merged nor deleted;
//! - the dependency: each chain is an `inout` register operand, so every
//!   operation reads the result of the one before it, across iterations;
//! - the values: start values and constants come through `black_box`, so
//!   nothing about them is known at compile time, and the chains' fold is
//!   returned (callers black-box it).
//!
//! `options(nomem, nostack)` promises only that the block touches neither
//! memory nor the stack, so the compiler keeps the chains in registers
//! across iterations. Not subtracted: the loop's counter and branch, which
//! run beside the chain. x86-64 only; elsewhere `kernel` finds nothing.

/// A kernel: `f(n)` runs `n` calls of `ops` operations.
#[derive(Clone, Copy)]
pub struct Kernel {
    pub f: fn(u64) -> u64,
    pub ops: f64,
}

/// The `asm!` template of a kernel: `.rept $rept` of an `.irp` that
/// substitutes each chain's register for `\x` in the unit's lines.
macro_rules! ops_template {
    ($rept:literal, [$($x:ident)+], $width:literal, [$([$($line:literal),+]),+]) => {
        concat!(
            ".rept ", $rept, "\n",
            ".irp x", $(", {", stringify!($x), $width, "}",)+ "\n",
            $($($line, "\n",)+)+
            ".endr\n",
            ".endr",
        )
    };
}

/// The chains' values folded into the kernel's result: integers xor-ed,
/// floating point summed in chain order.
macro_rules! ops_fold {
    (xor, $x0:ident $($x:ident)*) => { ($x0 as u64) $(^ ($x as u64))* };
    (sum, $x0:ident $($x:ident)*) => { ($x0 $(+ $x)*) as u64 };
}

/// One kernel function: `$rept` units on each of the chains `$x0 $x…`.
macro_rules! ops_kernel {
    (
        $f:ident, $chains:literal, $rept:literal, [$x0:ident $($x:ident)*],
        $t:ty, $class:ident, $width:literal, $fold:ident, $start:expr,
        [$($c:ident = $v:expr),*], [$([$($scratch:tt)+]),*], $unit:tt
    ) => {
        #[doc = concat!(
            $chains, " chain(s), `.rept ", $rept, "` of the unit: ",
            $chains, " × ", $rept, " × the unit's operations per call."
        )]
        pub fn $f(n: u64) -> u64 {
            let mut $x0: $t = ::std::hint::black_box($start);
            $(let mut $x: $t = ::std::hint::black_box($start);)*
            $(let $c: $t = ::std::hint::black_box($v);)*
            for _ in 0..n {
                // SAFETY: register-only arithmetic on values the unit keeps
                // bounded; div/mod never divide by zero (see the table).
                unsafe {
                    ::std::arch::asm!(
                        ops_template!($rept, [$x0 $($x)*], $width, $unit),
                        $x0 = inout($class) $x0,
                        $($x = inout($class) $x,)*
                        $($c = in($class) $c,)*
                        $($($scratch)+,)*
                        options(nomem, nostack),
                    );
                }
            }
            ops_fold!($fold, $x0 $($x)*)
        }
    };
}

/// The number of operations in a unit (its bracketed groups).
macro_rules! ops_count {
    ([$($op:tt),+]) => { 0 $(+ ops_count!(@one $op))+ };
    (@one $op:tt) => { 1 };
}

/// One row: a module named after the operation holding its kernel for each
/// chain count of the table's `chains` line.
macro_rules! ops_row {
    (
        [$(($f:ident = $chains:literal, rept $rept:literal, $xs:tt)),+],
        $(#[$doc:meta])* $name:ident, $ty:ident, $t:ty, $class:ident, $width:literal, $fold:ident,
        $start:expr, $consts:tt, $scratch:tt, $unit:tt
    ) => {
        $(#[$doc])*
        #[doc = concat!("\n\nOn ", stringify!($ty), " (`", stringify!($t), "` in `", stringify!($class), "`).")]
        pub mod $name {
            use super::super::Kernel;

            $(ops_kernel!($f, $chains, $rept, $xs, $t, $class, $width, $fold, $start, $consts, $scratch, $unit);)+

            /// The kernel for `chains` chains and its operations per call.
            pub fn kernel(chains: u32) -> Option<Kernel> {
                let per_unit = ops_count!($unit);
                match chains {
                    $($chains => Some(Kernel { f: $f, ops: ($chains * $rept * per_unit) as f64 }),)+
                    _ => None,
                }
            }

            /// The assembly template of the kernel for `chains` chains.
            #[cfg(test)]
            pub fn template(chains: u32) -> Option<&'static str> {
                match chains {
                    $($chains => Some(ops_template!($rept, $xs, $width, $unit)),)+
                    _ => None,
                }
            }
        }
    };
}

/// The table → `CHAINS`, `NAMES`, `kernels::<name>::chains_<n>` and
/// `kernel(name, chains)`. The `chains` line names each chain count's
/// kernel, its `.rept` and its chain operands; types carry the Rust type,
/// register class, operand width modifier and fold; rows carry the chain's
/// start value, the constants (`black_box`ed, in registers), scratch
/// registers, and the unit.
macro_rules! ops_table {
    (
        chains $variants:tt;
        $(
            $ty:ident: $t:ty, $class:ident, $width:literal, $fold:ident {
                $(
                    $(#[$doc:meta])*
                    $name:ident: start $start:expr, consts $consts:tt, scratch $scratch:tt,
                        unit $unit:tt;
                )+
            }
        )+
    ) => {
        ops_table!(@chains $variants);

        /// The operation names, type first (lmbench prints "int64 mul"), in
        /// the table's order.
        pub const NAMES: &[&str] = &[$($(stringify!($name),)+)+];

        #[cfg(target_arch = "x86_64")]
        pub mod kernels {
            $($(
                ops_row!($variants, $(#[$doc])* $name, $ty, $t, $class, $width, $fold, $start, $consts, $scratch, $unit);
            )+)+
        }

        /// The kernel for `name` with `chains` independent chains (see
        /// `CHAINS`).
        pub fn kernel(name: &str, chains: u32) -> Option<Kernel> {
            #[cfg(target_arch = "x86_64")]
            {
                $($(
                    if name == stringify!($name) {
                        return kernels::$name::kernel(chains);
                    }
                )+)+
            }
            let _ = (name, chains);
            None
        }

        /// The assembly template of a kernel, for the tests to count.
        #[cfg(all(test, target_arch = "x86_64"))]
        fn template(name: &str, chains: u32) -> Option<&'static str> {
            $($(
                if name == stringify!($name) {
                    return kernels::$name::template(chains);
                }
            )+)+
            None
        }
    };
    (@chains [$(($f:ident = $chains:literal, rept $rept:literal, $xs:tt)),+]) => {
        /// The chain counts every operation has a kernel for.
        pub const CHAINS: &[u32] = &[$($chains),+];
    };
}

// The table. `\x` is the chain's register; `{y}`, `{z}`, `{c}` the constants;
// `{t}` a scratch register. Each unit is two operations, each a bracketed
// group of lines; only the division and modulo units need more than the
// operation itself (the dividend in rax, sign-extended into rdx; or a copy of
// the constant that the divide overwrites). The `or` after each modulo rides
// on it (1 cycle against tens) and is not counted as an operation.
ops_table! {
    // One dependent chain, 50 units (100 operations) a call; eight
    // independent chains, 8 units each (128 operations) a call. About 100
    // operations a call keeps the loop's counter and branch to ~1 % of it.
    chains [(chains_1 = 1, rept 50, [x0]),
            (chains_8 = 8, rept 8, [x0 x1 x2 x3 x4 x5 x6 x7])];
    int: u32, reg, ":e", xor {
        /// x ^ y ^ y: x alternates 12345 and 12345 ^ 0x5a5a.
        int_bit: start 12345, consts [y = 0x5a5a], scratch [],
            unit [["xor \\x, {y:e}"], ["xor \\x, {y:e}"]];
        /// x + 1 − 1: x returns to 12345 after every unit.
        int_add: start 12345, consts [y = 1], scratch [],
            unit [["add \\x, {y:e}"], ["sub \\x, {y:e}"]];
        /// x × −1 × −1: x alternates 12345 and −12345.
        int_mul: start 12345, consts [y = u32::MAX], scratch [],
            unit [["imul \\x, {y:e}"], ["imul \\x, {y:e}"]];
        /// x = c / x with c = 2³¹ − 1 from 46341 ≈ √c: x alternates 46341 and
        /// 46340, never 0.
        int_div: start 46341, consts [c = 2147483647], scratch [[out("rax") _], [out("rdx") _]],
            unit [["mov eax, {c:e}", "cdq", "idiv \\x", "mov \\x, eax"],
                  ["mov eax, {c:e}", "cdq", "idiv \\x", "mov \\x, eax"]];
        /// x = (c mod x) | 2¹⁵ with c = 2³¹ − 1 from 40000: c mod x < x < 2¹⁶,
        /// so x stays in [2¹⁵, 2¹⁶), never 0.
        int_mod: start 40000, consts [y = 32768, c = 2147483647], scratch [[out("rax") _], [out("rdx") _]],
            unit [["mov eax, {c:e}", "cdq", "idiv \\x", "mov \\x, edx", "or \\x, {y:e}"],
                  ["mov eax, {c:e}", "cdq", "idiv \\x", "mov \\x, edx", "or \\x, {y:e}"]];
    }
    int64: u64, reg, "", xor {
        /// x ^ y ^ y: x alternates 12345 and 12345 ^ 0x5a5a.
        int64_bit: start 12345, consts [y = 0x5a5a], scratch [],
            unit [["xor \\x, {y}"], ["xor \\x, {y}"]];
        /// x + 1 − 1: x returns to 12345 after every unit.
        int64_add: start 12345, consts [y = 1], scratch [],
            unit [["add \\x, {y}"], ["sub \\x, {y}"]];
        /// x × −1 × −1: x alternates 12345 and −12345.
        int64_mul: start 12345, consts [y = u64::MAX], scratch [],
            unit [["imul \\x, {y}"], ["imul \\x, {y}"]];
        /// x = c / x with c = 10¹⁵ from 31622777 ≈ √c: x alternates 31622777
        /// and 31622776, never 0.
        int64_div: start 31622777, consts [c = 1000000000000000], scratch [[out("rax") _], [out("rdx") _]],
            unit [["mov rax, {c}", "cqo", "idiv \\x", "mov \\x, rax"],
                  ["mov rax, {c}", "cqo", "idiv \\x", "mov \\x, rax"]];
        /// x = (c mod x) | 2²⁰ with c = 10¹⁵ from 1500000: c mod x < x < 2²¹,
        /// so x stays in [2²⁰, 2²¹), never 0.
        int64_mod: start 1500000, consts [y = 1048576, c = 1000000000000000], scratch [[out("rax") _], [out("rdx") _]],
            unit [["mov rax, {c}", "cqo", "idiv \\x", "mov \\x, rdx", "or \\x, {y}"],
                  ["mov rax, {c}", "cqo", "idiv \\x", "mov \\x, rdx", "or \\x, {y}"]];
    }
    float: f32, xmm_reg, "", sum {
        /// x + 1 − 1 from 1.5: exact, x returns to 1.5 after every unit.
        float_add: start 1.5, consts [y = 1.0], scratch [],
            unit [["addss \\x, {y}"], ["subss \\x, {y}"]];
        /// x × 2 × 0.5 from 1.5: exact, x returns to 1.5 after every unit.
        float_mul: start 1.5, consts [y = 2.0, z = 0.5], scratch [],
            unit [["mulss \\x, {y}"], ["mulss \\x, {z}"]];
        /// x = 3 / x from 1.7: x alternates about 1.7 and 1.76, near √3.
        float_div: start 1.7, consts [c = 3.0], scratch [[t = out(xmm_reg) _]],
            unit [["movaps {t}, {c}", "divss {t}, \\x", "movaps \\x, {t}"],
                  ["movaps {t}, {c}", "divss {t}, \\x", "movaps \\x, {t}"]];
    }
    double: f64, xmm_reg, "", sum {
        /// x + 1 − 1 from 1.5: exact, x returns to 1.5 after every unit.
        double_add: start 1.5, consts [y = 1.0], scratch [],
            unit [["addsd \\x, {y}"], ["subsd \\x, {y}"]];
        /// x × 2 × 0.5 from 1.5: exact, x returns to 1.5 after every unit.
        double_mul: start 1.5, consts [y = 2.0, z = 0.5], scratch [],
            unit [["mulsd \\x, {y}"], ["mulsd \\x, {z}"]];
        /// x = 3 / x from 1.7: x alternates about 1.7 and 1.76, near √3.
        double_div: start 1.7, consts [c = 3.0], scratch [[t = out(xmm_reg) _]],
            unit [["movapd {t}, {c}", "divsd {t}, \\x", "movapd \\x, {t}"],
                  ["movapd {t}, {c}", "divsd {t}, \\x", "movapd \\x, {t}"]];
    }
}

/// `unsupported` for the families built on these kernels.
pub fn x86_64_only() -> Option<String> {
    if cfg!(target_arch = "x86_64") {
        None
    } else {
        Some("the operation chains are x86-64 assembly".into())
    }
}
