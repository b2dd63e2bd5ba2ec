//! whetstone: the Whetstone synthetic benchmark in double precision, after
//! Curnow and Wichmann's published description (Computer Journal 19(1), 1976)
//! of its modules and their weights. `whetstone/all` times a whole weighted
//! pass and reports MWIPS (millions of Whetstone instructions per second);
//! `whetstone/n1` … `whetstone/n8` time each module on its own (the module
//! timings), numbered and counted as Longbottom's later double-precision
//! version prints them: MFLOPS for the floating-point modules, millions of
//! operations per second (reported as ops/s) for the others.
//!
//! The build is stated with every figure (extra figures `fast_math` = 0,
//! `fma` = 1 when the compiler may contract to fused multiply-adds,
//! `avx2` = 1 when built with AVX2 enabled): strict IEEE arithmetic in
//! program order, the default x86-64 target. UnixBench builds its
//! `whetstone-double` with `-O3 -ffast-math -march=native`, which lets the
//! compiler reassociate, contract to FMA and call vectorised maths
//! routines; that is where its N2, N6 and N7 (and so its MWIPS) run ahead.
//! docs/validation.md compares the two module by module.
//!
//! Every module starts from its published initial values each time it runs,
//! so its end state depends only on its loop count; after every interval
//! that end state is checked against an independent computation (a closed
//! form, a matrix power, or the module rewritten with trigonometric
//! identities). A mismatch is an error: no figure is reported.

use std::hint::black_box;

use touchstone_harness::{Benchmark, Fallible, Shape};
use touchstone_results::Unit;

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};

/// The published constants.
const T: f64 = 0.499975;
const T1: f64 = 0.50025;
const T2: f64 = 2.0;

/// Loop scale of one pass: with I = 10 a pass is one million Whetstone
/// instructions (the benchmark's definition of its unit).
const SCALE: u64 = 10;
const WI_PER_PASS: f64 = 100_000.0 * SCALE as f64;

/// A module: its name, Curnow–Wichmann weight (iterations per unit of the
/// loop scale), what it exercises, and how many operations one of its
/// iterations counts for its own rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Module {
    /// Array elements: four chained 4-term updates (C-W module 2).
    N1,
    /// Array as parameter: a procedure doing the N1 update six times (module 3).
    N2,
    /// Conditional jumps (module 4).
    N3,
    /// Integer arithmetic and indexing (module 6).
    N4,
    /// Trigonometric functions (module 7).
    N5,
    /// Procedure calls with floating-point arguments (module 8).
    N6,
    /// Array references: assignments through a procedure (module 9).
    N7,
    /// Standard functions sqrt, exp, log (module 11).
    N8,
}

const MODULES: [Module; 8] = [
    Module::N1,
    Module::N2,
    Module::N3,
    Module::N4,
    Module::N5,
    Module::N6,
    Module::N7,
    Module::N8,
];

impl Module {
    fn weight(self) -> u64 {
        match self {
            Module::N1 => 12,
            Module::N2 => 14,
            Module::N3 => 345,
            Module::N4 => 210,
            Module::N5 => 32,
            Module::N6 => 899,
            Module::N7 => 616,
            Module::N8 => 93,
        }
    }
    /// Iterations of this module in one pass.
    fn count(self) -> u64 {
        self.weight() * SCALE
    }
    /// Operations per iteration, counted from the source statements:
    /// floating-point operations for N1, N2, N6; for the others every
    /// statement's arithmetic, comparison or call.
    fn ops(self) -> f64 {
        match self {
            Module::N1 => 16.0, // 4 statements × (3 add/sub + 1 mul)
            Module::N2 => 96.0, // 6 × 16
            Module::N3 => 3.0,  // 3 compare-and-assign
            Module::N4 => 15.0, // integer +, −, × in five statements
            Module::N5 => 26.0, // 2 × (sin, cos, 3 cos, atan, 7 arithmetic)
            Module::N6 => 6.0,  // 3 statements × (1 add + 1 mul or div)
            Module::N7 => 3.0,  // 3 indexed assignments
            Module::N8 => 4.0,  // log, divide, exp, sqrt
        }
    }
    fn is_flops(self) -> bool {
        matches!(self, Module::N1 | Module::N2 | Module::N6)
    }
    fn name(self) -> &'static str {
        match self {
            Module::N1 => "n1",
            Module::N2 => "n2",
            Module::N3 => "n3",
            Module::N4 => "n4",
            Module::N5 => "n5",
            Module::N6 => "n6",
            Module::N7 => "n7",
            Module::N8 => "n8",
        }
    }
}

/// The end state of one module after `count` iterations, as numbers.
type State = [f64; 4];

/// The module's update applied `count` times from its published start
/// (one pass of a module is `count()` iterations: run longer, the states of
/// N1, N2 and N5 decay towards zero and then into slow subnormals).
/// Inputs pass through `black_box` so a pass cannot be hoisted out of the
/// loop of passes, and the caller black-boxes the result.
#[inline(never)]
fn run_module(m: Module, count: u64) -> State {
    let (t, t1, t2) = (black_box(T), black_box(T1), black_box(T2));
    let count = black_box(count);
    match m {
        Module::N1 => {
            let mut e = black_box([1.0, -1.0, -1.0, -1.0]);
            for _ in 0..count {
                e = n1_step(e, t);
            }
            e
        }
        Module::N2 => {
            let mut e = black_box([1.0, -1.0, -1.0, -1.0]);
            for _ in 0..count {
                pa(&mut e, t, t2);
            }
            e
        }
        Module::N3 => {
            let mut j: i64 = 1;
            for _ in 0..count {
                // J only alternates 0 and 1: without this (a store and a
                // load) the optimiser replaces the loop by its closed form.
                j = black_box(j);
                j = if j == 1 { 2 } else { 3 };
                j = if j > 2 { 0 } else { 1 };
                j = if j < 1 { 1 } else { 0 };
            }
            [j as f64, 0.0, 0.0, 0.0]
        }
        Module::N4 => {
            let (mut j, mut k, mut l): (i64, i64, i64) = black_box((1, 2, 3));
            let mut e = [0.0f64; 4];
            for _ in 0..count {
                j = j * (k - j) * (l - k);
                k = l * k - (l - j) * k;
                l = (l - k) * (k + j);
                e[(l - 2).clamp(0, 3) as usize] = (j + k + l) as f64;
                e[(k - 2).clamp(0, 3) as usize] = (j * k * l) as f64;
            }
            [j as f64, k as f64, l as f64, e[0] + e[1]]
        }
        Module::N5 => {
            let (mut x, mut y) = black_box((0.5f64, 0.5f64));
            for _ in 0..count {
                x = t * (t2 * x.sin() * x.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
                y = t * (t2 * y.sin() * y.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
            }
            [x, y, 0.0, 0.0]
        }
        Module::N6 => {
            let mut v = black_box([1.0f64, 1.0, 1.0, 0.0]);
            for _ in 0..count {
                p3(&mut v, t, t1, t2);
            }
            v
        }
        Module::N7 => {
            let mut e = black_box([0.0, 1.0, 2.0, 3.0]);
            let (j, k, l): (usize, usize, usize) = black_box((1, 2, 3));
            for _ in 0..count {
                p0(&mut e, j, k, l);
            }
            e
        }
        Module::N8 => {
            let mut x = black_box(0.75f64);
            for _ in 0..count {
                x = (x.ln() / t1).exp().sqrt();
            }
            [x, 0.0, 0.0, 0.0]
        }
    }
}

/// The four chained updates of modules 1 and 2.
#[inline(always)]
fn n1_step(mut e: State, t: f64) -> State {
    e[0] = (e[0] + e[1] + e[2] - e[3]) * t;
    e[1] = (e[0] + e[1] - e[2] + e[3]) * t;
    e[2] = (e[0] - e[1] + e[2] + e[3]) * t;
    e[3] = (-e[0] + e[1] + e[2] + e[3]) * t;
    e
}

/// Module 3's procedure: the update six times, the last term divided by T2.
#[inline(never)]
fn pa(e: &mut State, t: f64, t2: f64) {
    for _ in 0..6 {
        e[0] = (e[0] + e[1] + e[2] - e[3]) * t;
        e[1] = (e[0] + e[1] - e[2] + e[3]) * t;
        e[2] = (e[0] - e[1] + e[2] + e[3]) * t;
        e[3] = (-e[0] + e[1] + e[2] + e[3]) / t2;
    }
}

/// Module 8's procedure on (X, Y, Z). In the 1976 form X and Y never
/// change, so every call computes the same Z and all but the last call
/// are dead code to an optimiser; as in Longbottom's double-precision
/// version, each call here starts from the previous call's results
/// (X ← T (Y + Z), Y ← T1 (X + Z), Z ← (X + Y) / T2), a dependent chain.
#[inline(never)]
fn p3(v: &mut State, t: f64, t1: f64, t2: f64) {
    let x = t * (v[1] + v[2]);
    let y = t1 * (x + v[2]);
    v[2] = (x + y) / t2;
    v[0] = x;
    v[1] = y;
}

/// Module 9's procedure: three assignments through indices.
#[inline(never)]
fn p0(e: &mut State, j: usize, k: usize, l: usize) {
    e[j] = e[k];
    e[k] = e[l];
    e[l] = e[j];
}

// ---- independent checks -------------------------------------------------

/// The linear map one application of `step` performs, as a 4×4 matrix
/// (found by applying it to the unit vectors: the updates are linear).
fn matrix_of(step: impl Fn(State) -> State) -> [[f64; 4]; 4] {
    let mut m = [[0.0; 4]; 4];
    for c in 0..4 {
        let mut u = [0.0; 4];
        u[c] = 1.0;
        let col = step(u);
        for r in 0..4 {
            m[r][c] = col[r];
        }
    }
    m
}

fn mat_mul(a: &[[f64; 4]; 4], b: &[[f64; 4]; 4]) -> [[f64; 4]; 4] {
    let mut c = [[0.0; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            c[i][j] = (0..4).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    c
}

/// M^n v by repeated squaring: a different order of operations from the
/// module's n sequential updates, so agreement checks the work was done.
fn mat_pow_apply(m: [[f64; 4]; 4], mut n: u64, v: State) -> State {
    let mut result = [[0.0; 4]; 4];
    for (i, row) in result.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    let mut base = m;
    while n > 0 {
        if n & 1 == 1 {
            result = mat_mul(&result, &base);
        }
        base = mat_mul(&base, &base);
        n >>= 1;
    }
    let mut out = [0.0; 4];
    for (i, o) in out.iter_mut().enumerate() {
        *o = (0..4).map(|k| result[i][k] * v[k]).sum();
    }
    out
}

/// What `run_module(m, count)` must return, computed another way.
fn expected(m: Module, count: u64) -> State {
    match m {
        Module::N1 => mat_pow_apply(matrix_of(|e| n1_step(e, T)), count, [1.0, -1.0, -1.0, -1.0]),
        Module::N2 => mat_pow_apply(
            matrix_of(|mut e| {
                pa(&mut e, T, T2);
                e
            }),
            count,
            [1.0, -1.0, -1.0, -1.0],
        ),
        // J alternates 0 (after odd counts) and 1 (after even counts).
        Module::N3 => [if count % 2 == 1 { 0.0 } else { 1.0 }, 0.0, 0.0, 0.0],
        // (1, 2, 3) is a fixed point; each iteration stores 6 in e[1] and e[0].
        Module::N4 => {
            if count == 0 {
                [1.0, 2.0, 3.0, 0.0]
            } else {
                [1.0, 2.0, 3.0, 12.0]
            }
        }
        // The same recurrence through cos(a+b)+cos(a−b) = 2 cos a cos b and
        // 2 sin a cos a = sin 2a.
        Module::N5 => {
            let (mut x, mut y) = (0.5f64, 0.5f64);
            for _ in 0..count {
                x = T * ((2.0 * x).sin() / (2.0 * x.cos() * y.cos() - 1.0)).atan();
                y = T * ((2.0 * y).sin() / (2.0 * x.cos() * y.cos() - 1.0)).atan();
            }
            [x, y, 0.0, 0.0]
        }
        // The chain is linear in (X, Y, Z) too.
        Module::N6 => mat_pow_apply(
            matrix_of(|mut v| {
                p3(&mut v, T, T1, T2);
                v
            }),
            count,
            [1.0, 1.0, 1.0, 0.0],
        ),
        // (e1, e2, e3) = (1, 2, 3) → (2, 3, 2) → (3, 2, 3) → (2, 3, 2) …
        Module::N7 => match count {
            0 => [0.0, 1.0, 2.0, 3.0],
            c if c % 2 == 1 => [0.0, 2.0, 3.0, 2.0],
            _ => [0.0, 3.0, 2.0, 3.0],
        },
        // x ← sqrt(exp(ln x / T1)) = x^(1/(2 T1)), so x_n = 0.75^((1/(2 T1))^n).
        Module::N8 => {
            let p = (1.0 / (2.0 * T1)).powf(count as f64);
            [0.75f64.powf(p), 0.0, 0.0, 0.0]
        }
    }
}

/// Agreement within a relative tolerance (absolute near zero).
#[cfg(test)]
fn check(m: Module, count: u64, got: &State) -> Fallible {
    compare(m, count, got, &expected(m, count))
}

fn compare(m: Module, count: u64, got: &State, want: &State) -> Fallible {
    for (g, w) in got.iter().zip(want.iter()) {
        let tol = 1e-9 * w.abs().max(1e-6);
        if !g.is_finite() || (g - w).abs() > tol {
            return Err(format!(
                "whetstone module {}: wrong result after {count} iterations: got {got:?}, expected {want:?}; refusing to report a figure",
                m.name()
            )
            .into());
        }
    }
    Ok(())
}

// ---- the benchmark -----------------------------------------------------

/// What one case runs: a whole pass, or one module.
#[derive(Clone, Copy, Debug)]
enum Which {
    All,
    One(Module),
}

pub struct Whetstone {
    which: Which,
    /// End states of the last pass (checked in `conclude`).
    last: [State; 8],
    /// What each module's pass must end with, computed independently in
    /// `build` (a pass always starts from the published initial values).
    want: [State; 8],
}

impl Whetstone {
    fn modules(&self) -> &'static [Module] {
        match self.which {
            Which::All => &MODULES,
            Which::One(m) => match m {
                Module::N1 => &MODULES[0..1],
                Module::N2 => &MODULES[1..2],
                Module::N3 => &MODULES[2..3],
                Module::N4 => &MODULES[3..4],
                Module::N5 => &MODULES[4..5],
                Module::N6 => &MODULES[5..6],
                Module::N7 => &MODULES[6..7],
                Module::N8 => &MODULES[7..8],
            },
        }
    }
}

impl Benchmark for Whetstone {
    /// Timed: `n` passes. For `all` a pass is every module with its
    /// Curnow–Wichmann iteration count at loop scale 10 (one million
    /// Whetstone instructions); for a single module, that module's share of
    /// a pass. Every module starts from its published initial values, which
    /// enter through `black_box` (so no pass can be hoisted out of the loop
    /// as loop-invariant), and its end state is stored through `black_box`
    /// and checked afterwards (so no pass can be deleted). Nothing else is
    /// inside the interval.
    fn run(&mut self, n: u64) -> Fallible {
        let modules = self.modules();
        for _ in 0..n {
            for (i, &m) in modules.iter().enumerate() {
                self.last[i] = black_box(run_module(m, m.count()));
            }
        }
        Ok(())
    }

    /// The build the figures come from (see the file header): read by
    /// reports next to UnixBench's fast-math figures.
    fn extras(&mut self) -> Vec<(String, f64)> {
        build_flags()
    }

    /// Untimed: check every module's end state against its independent
    /// computation; a mismatch fails the measurement.
    fn conclude(&mut self, _n: u64) -> Fallible {
        for (i, &m) in self.modules().iter().enumerate() {
            let idx = MODULES.iter().position(|&x| x == m).unwrap_or(0);
            compare(m, m.count(), &self.last[i], &self.want[idx])?;
        }
        Ok(())
    }
}

/// How this binary's floating point was compiled: never with fast-math
/// (Rust has no such switch for ordinary arithmetic), FMA contraction and
/// host-specific instructions only if the build enabled those features.
fn build_flags() -> Vec<(String, f64)> {
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    vec![
        ("fast_math".into(), 0.0),
        ("fma".into(), flag(cfg!(target_feature = "fma"))),
        ("avx2".into(), flag(cfg!(target_feature = "avx2"))),
    ]
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let name = p.text("module");
    let which = if name == "all" {
        Which::All
    } else {
        Which::One(
            *MODULES
                .iter()
                .find(|m| m.name() == name)
                .ok_or_else(|| format!("unknown module {name}"))?,
        )
    };
    let shape = match which {
        // One iteration = one pass = 10^6 Whetstone instructions.
        Which::All => Shape::rate(WI_PER_PASS, Unit::Mwips, 1e6),
        Which::One(m) => {
            let ops = m.ops() * m.count() as f64;
            if m.is_flops() {
                Shape::rate(ops, Unit::Mflops, 1e6)
            } else {
                Shape::rate(ops, Unit::OpsPerSec, 1.0)
            }
        }
    };
    Ok(Built::new(
        Whetstone {
            which,
            last: [[0.0; 4]; 8],
            want: MODULES.map(|m| expected(m, m.count())),
        },
        shape,
    ))
}

pub const FAMILY: Family = Family {
    params: &[Param::choice("module", &["all", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"])
        .positional()
        .quick(&["all", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"])
        .help("all (MWIPS) or one module n1..n8 (MFLOPS for n1, n2, n6; ops/s otherwise)")],
    ..Family::new(
        "whetstone",
        "cpu",
        "Whetstone (double precision, strict IEEE, no fast-math): MWIPS for a weighted pass, and each module's rate (N1-N8)",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_matches_its_independent_check() {
        for m in MODULES {
            for count in [0, 1, 2, 7, m.count(), 3 * m.count()] {
                check(m, count, &run_module(m, count)).unwrap();
            }
        }
    }

    #[test]
    fn a_wrong_result_is_refused() {
        let mut got = run_module(Module::N8, 930);
        got[0] *= 1.0 + 1e-6;
        assert!(check(Module::N8, 930, &got).is_err());
        let got = run_module(Module::N1, 120);
        assert!(check(Module::N1, 121, &got).is_err());
    }

    #[test]
    fn each_case_reports_in_its_unit() {
        let sel = crate::select(&["whetstone".into()], &RunContext::default(), 1).unwrap();
        for c in sel.cases {
            let unit = FAMILY
                .make(&c.point, &RunContext::default())
                .unwrap()
                .shape
                .unit();
            let want = match c.name.as_str() {
                "whetstone/all" => Unit::Mwips,
                "whetstone/n1" | "whetstone/n2" | "whetstone/n6" => Unit::Mflops,
                _ => Unit::OpsPerSec,
            };
            assert_eq!(unit, want, "{}", c.name);
        }
    }

    /// Every figure states its build (no fast-math), and the quick suite
    /// reports the modules as well as MWIPS: the figures a reader needs to
    /// see why UnixBench's fast-math build reads higher.
    #[test]
    fn figures_state_the_build_and_the_modules_are_reported() {
        let quick = &RunContext::new(true);
        let sel = crate::select(&["whetstone".into()], quick, 1).unwrap();
        let names: Vec<&str> = sel.cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names.len(), 9, "{names:?}");
        assert!(names.contains(&"whetstone/n6"));
        let ms = crate::testing::measure_tiny("whetstone/n1").unwrap();
        assert_eq!(ms[0].extra.get("fast_math"), Some(&0.0));
        assert!(ms[0].extra.contains_key("fma"));
    }
}
