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

use crate::params::Param;

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

/// The `op` parameter of lat_ops and par_ops: a kernel by type and
/// operation (the quick run: add, mul and div on int64 and double).
pub const OP: Param = Param::choice("op", NAMES)
    .positional()
    .quick(&[
        "int64_add",
        "int64_mul",
        "int64_div",
        "double_add",
        "double_mul",
        "double_div",
    ])
    .help("type and operation");

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn every_name_and_chain_count_has_a_kernel_and_nothing_else_does() {
        assert_eq!(NAMES.len(), 16);
        for name in NAMES {
            for &chains in CHAINS {
                assert!(kernel(name, chains).is_some(), "{name} × {chains}");
            }
            assert!(kernel(name, 2).is_none(), "{name} × 2");
        }
        assert!(kernel("int_pow", 1).is_none());
        assert!(kernel("", 8).is_none());
    }

    /// What a chain's value is after `units` units, computed in Rust from
    /// the table's comments, each value checked against the documented
    /// bounds on the way.
    fn model(name: &str, units: u64) -> Chain {
        let (c31, c15) = (2_147_483_647i32, 1_000_000_000_000_000i64);
        fn run<T: Copy>(mut x: T, units: u64, unit: impl Fn(T) -> T, ok: impl Fn(T) -> bool) -> T {
            for _ in 0..units {
                x = unit(x);
                assert!(ok(x), "left its bounds");
            }
            x
        }
        match name {
            "int_bit" => {
                Chain::Int(run(12345u32, units, |x| x ^ 0x5a5a ^ 0x5a5a, |x| x == 12345) as u64)
            }
            "int_add" => Chain::Int(run(
                12345u32,
                units,
                |x| x.wrapping_add(1).wrapping_sub(1),
                |x| x == 12345,
            ) as u64),
            "int_mul" => Chain::Int(run(
                12345u32,
                units,
                |x| x.wrapping_mul(u32::MAX).wrapping_mul(u32::MAX),
                |x| x == 12345,
            ) as u64),
            "int_div" => {
                Chain::Int(run(46341i32, units, |x| c31 / (c31 / x), |x| x == 46341) as u32 as u64)
            }
            "int_mod" => Chain::Int(run(
                40000i32,
                units,
                |x| (c31 % ((c31 % x) | 32768)) | 32768,
                |x| (32768..65536).contains(&x),
            ) as u32 as u64),
            "int64_bit" => Chain::Int(run(
                12345u64,
                units,
                |x| x ^ 0x5a5a ^ 0x5a5a,
                |x| x == 12345,
            )),
            "int64_add" => Chain::Int(run(
                12345u64,
                units,
                |x| x.wrapping_add(1).wrapping_sub(1),
                |x| x == 12345,
            )),
            "int64_mul" => Chain::Int(run(
                12345u64,
                units,
                |x| x.wrapping_mul(u64::MAX).wrapping_mul(u64::MAX),
                |x| x == 12345,
            )),
            "int64_div" => Chain::Int(run(
                31_622_777i64,
                units,
                |x| c15 / (c15 / x),
                |x| x == 31_622_777,
            ) as u64),
            "int64_mod" => Chain::Int(run(
                1_500_000i64,
                units,
                |x| (c15 % ((c15 % x) | 1 << 20)) | 1 << 20,
                |x| (1 << 20..1 << 21).contains(&x),
            ) as u64),
            "float_add" => Chain::Float(run(1.5f32, units, |x| x + 1.0 - 1.0, |x| x == 1.5) as f64),
            "float_mul" => Chain::Float(run(1.5f32, units, |x| x * 2.0 * 0.5, |x| x == 1.5) as f64),
            "float_div" => Chain::Float(run(
                1.7f32,
                units,
                |x| 3.0 / (3.0 / x),
                |x| (1.69..1.71).contains(&x),
            ) as f64),
            "double_add" => Chain::Float(run(1.5f64, units, |x| x + 1.0 - 1.0, |x| x == 1.5)),
            "double_mul" => Chain::Float(run(1.5f64, units, |x| x * 2.0 * 0.5, |x| x == 1.5)),
            "double_div" => Chain::Float(run(
                1.7f64,
                units,
                |x| 3.0 / (3.0 / x),
                |x| (1.69..1.71).contains(&x),
            )),
            _ => panic!("no model for {name}"),
        }
    }

    /// One chain's value, as the kernel folds it.
    enum Chain {
        Int(u64),
        Float(f64),
    }

    /// What a kernel of `chains` equal chains returns: integers xor-ed (so
    /// an even count of equal chains is 0), floating point summed.
    fn folded(chain: &Chain, chains: u32, single: bool) -> u64 {
        match *chain {
            Chain::Int(x) => (1..chains).fold(x, |acc, _| acc ^ x),
            // f32 chains are summed in f32, in chain order, then truncated.
            Chain::Float(x) if single => (1..chains).fold(x as f32, |acc, _| acc + x as f32) as u64,
            Chain::Float(x) => (1..chains).fold(x, |acc, _| acc + x) as u64,
        }
    }

    /// Each kernel computes what its row's comment says, the same every
    /// time: the 1-chain kernel runs 50 units a call, the 8-chain 8 units
    /// on each chain.
    #[test]
    fn kernels_compute_what_the_table_says_and_stay_bounded() {
        for name in NAMES {
            let single = name.starts_with("float");
            for calls in [0u64, 1, 3, 200] {
                let one = (kernel(name, 1).unwrap().f)(calls);
                let expected = folded(&model(name, 50 * calls), 1, single);
                assert_eq!(one, expected, "{name}, 1 chain, {calls} calls");
                let eight = (kernel(name, 8).unwrap().f)(calls);
                let expected = folded(&model(name, 8 * calls), 8, single);
                assert_eq!(eight, expected, "{name}, 8 chains, {calls} calls");
                assert_eq!(
                    (kernel(name, 8).unwrap().f)(calls),
                    eight,
                    "{name} not deterministic"
                );
            }
        }
    }

    /// The instructions that do a row's operation: what `ops` must count.
    fn timed_mnemonics(name: &str) -> &'static [&'static str] {
        match name.rsplit('_').next().unwrap() {
            "bit" => &["xor"],
            "add" => &["add", "sub", "addss", "subss", "addsd", "subsd"],
            "mul" => &["imul", "mulss", "mulsd"],
            "div" | "mod" => &["idiv", "divss", "divsd"],
            other => panic!("unknown operation {other}"),
        }
    }

    /// Expands a template's `.rept` and `.irp` the way the assembler does
    /// and counts the instructions with one of `mnemonics`.
    fn count_in_template(template: &str, mnemonics: &[&str]) -> usize {
        let lines: Vec<&str> = template.lines().map(str::trim).collect();
        let rept: usize = lines[0].strip_prefix(".rept ").unwrap().parse().unwrap();
        let irp = lines[1].strip_prefix(".irp x,").unwrap();
        let chains = irp.split(',').count();
        assert_eq!(&lines[lines.len() - 2..], [".endr", ".endr"]);
        let body = &lines[2..lines.len() - 2];
        for line in body {
            assert!(!line.starts_with('.'), "unexpected directive {line}");
        }
        let per_unit = body
            .iter()
            .filter(|l| mnemonics.contains(&l.split_whitespace().next().unwrap()))
            .count();
        rept * chains * per_unit
    }

    #[test]
    fn ops_per_call_counts_the_timed_instructions() {
        for name in NAMES {
            for &chains in CHAINS {
                let k = kernel(name, chains).unwrap();
                let t = template(name, chains).unwrap();
                assert_eq!(t.matches("{x").count(), chains as usize, "{name}: {t}");
                let counted = count_in_template(t, timed_mnemonics(name));
                assert_eq!(k.ops, counted as f64, "{name} × {chains}:\n{t}");
            }
            // The figures depend on these: 100 dependent, 128 overlapped.
            assert_eq!(kernel(name, 1).unwrap().ops, 100.0);
            assert_eq!(kernel(name, 8).unwrap().ops, 128.0);
        }
    }

    #[test]
    fn every_unit_line_uses_the_chain_or_a_fixed_register() {
        // A unit that forgot `\x` would time a constant, not the chain.
        for name in NAMES {
            let t = template(name, 1).unwrap();
            let body: Vec<&str> = t.lines().skip(2).filter(|l| !l.starts_with('.')).collect();
            let timed = timed_mnemonics(name);
            for line in body {
                let mnemonic = line.split_whitespace().next().unwrap();
                if timed.contains(&mnemonic) {
                    assert!(
                        line.contains("\\x"),
                        "{name}: `{line}` does not use the chain"
                    );
                }
            }
        }
    }
}
