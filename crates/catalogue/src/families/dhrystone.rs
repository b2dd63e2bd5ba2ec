//! dhrystone: Weicker's Dhrystone 2.1 integer benchmark (CACM 27(10), 1984;
//! version 2 described in SIGPLAN Notices 23(8), 1988), written afresh in
//! Rust from that description: records reached through pointers (here
//! indices into two records), structure assignment, 30-character string
//! copies and comparisons, a one- and a two-dimensional array, and the
//! procedures Proc_1…Proc_8 and Func_1…Func_3 with their published
//! semantics. Reported as Dhrystones per second (`dhrystone`); the derived
//! `dhrystone/dmips` divides by 1757, the Dhrystones/s of the VAX 11/780
//! that defines 1 MIPS.
//!
//! Version 1.0's known flaw was that a compiler could delete work whose
//! results nobody used. Version 2 prints its final values; here they are
//! checked after every interval against the values the published program
//! says they must have (including `Arr_2_Glob[8][7] = runs + 10`, which
//! counts the loops actually executed), and the procedures that version 2
//! keeps in a separately compiled file are `#[inline(never)]`, as that
//! separate compilation intends.

use std::hint::black_box;

use touchstone_harness::{Benchmark, Fallible, Shape};
use touchstone_results::{Measurement, Summary, Unit};

use crate::family::{Built, Family, RunContext};

/// Dhrystones per second of the VAX 11/780 (1 MIPS by definition).
pub const VAX_DHRYSTONES_PER_SEC: f64 = 1757.0;

/// The published enumeration; Ident_5 is part of it but the program never
/// produces it (Proc_6 still has its case).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
#[allow(dead_code)]
enum Enumeration {
    Ident1 = 0,
    Ident2 = 1,
    Ident3 = 2,
    Ident4 = 3,
    Ident5 = 4,
}
use Enumeration::*;

type Str30 = [u8; 31];

const fn s30(text: &[u8; 30]) -> Str30 {
    let mut out = [0u8; 31];
    let mut i = 0;
    while i < 30 {
        out[i] = text[i];
        i += 1;
    }
    out
}

const SOME_STRING: Str30 = s30(b"DHRYSTONE PROGRAM, SOME STRING");
const FIRST_STRING: Str30 = s30(b"DHRYSTONE PROGRAM, 1'ST STRING");
const SECOND_STRING: Str30 = s30(b"DHRYSTONE PROGRAM, 2'ND STRING");
const THIRD_STRING: Str30 = s30(b"DHRYSTONE PROGRAM, 3'RD STRING");

/// The record type: a pointer (an index into `Globals::recs`), a
/// discriminant and the variant-1 fields (the only variant used).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Record {
    ptr_comp: usize,
    discr: Enumeration,
    enum_comp: Enumeration,
    int_comp: i32,
    str_comp: Str30,
}

const EMPTY: Record = Record {
    ptr_comp: 0,
    discr: Ident1,
    enum_comp: Ident1,
    int_comp: 0,
    str_comp: [0; 31],
};

/// The program's global variables.
struct Globals {
    /// Two records: `recs[PTR_GLOB]` and `recs[NEXT_PTR_GLOB]`.
    recs: [Record; 2],
    int_glob: i32,
    bool_glob: bool,
    ch_1_glob: u8,
    ch_2_glob: u8,
    arr_1_glob: [i32; 50],
    arr_2_glob: [[i32; 50]; 50],
}

const PTR_GLOB: usize = 0;
const NEXT_PTR_GLOB: usize = 1;

/// The locals of the main program, kept for the final check.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Locals {
    int_1: i32,
    int_2: i32,
    int_3: i32,
    enum_loc: Enumeration,
    str_1: Str30,
    str_2: Str30,
}

impl Globals {
    fn new() -> Box<Globals> {
        let mut g = Box::new(Globals {
            recs: [EMPTY; 2],
            int_glob: 0,
            bool_glob: false,
            ch_1_glob: 0,
            ch_2_glob: 0,
            arr_1_glob: [0; 50],
            arr_2_glob: [[0; 50]; 50],
        });
        g.reset();
        g
    }

    /// The program's initialisation before its measurement loop.
    fn reset(&mut self) {
        self.recs[NEXT_PTR_GLOB] = EMPTY;
        self.recs[PTR_GLOB] = Record {
            ptr_comp: NEXT_PTR_GLOB,
            discr: Ident1,
            enum_comp: Ident3,
            int_comp: 40,
            str_comp: SOME_STRING,
        };
        self.int_glob = 0;
        self.bool_glob = false;
        self.ch_1_glob = 0;
        self.ch_2_glob = 0;
        self.arr_1_glob = [0; 50];
        self.arr_2_glob = [[0; 50]; 50];
        self.arr_2_glob[8][7] = 10;
    }

    /// The measurement loop: `runs` Dhrystones. `black_box(&mut *self)` at
    /// the top of each loop makes the whole global state opaque to the
    /// optimiser, so nothing known from one Dhrystone (e.g. that Ch_1_Glob
    /// is 'A') can be folded into the next and no loop can be collapsed;
    /// within one Dhrystone the compiler may optimise as a C compiler may
    /// within one file. A reference to the locals goes through `black_box`
    /// each loop, so their final stores must happen every time.
    #[inline(never)]
    fn main_loop(&mut self, runs: u64, first_run: i32) -> Locals {
        let mut l = Locals {
            int_1: 0,
            int_2: 0,
            int_3: 0,
            enum_loc: Ident1,
            str_1: FIRST_STRING,
            str_2: [0; 31],
        };
        for run_index in first_run..first_run + runs as i32 {
            let g = black_box(&mut *self);
            g.proc_5();
            g.proc_4();
            l.int_1 = 2;
            l.int_2 = 3;
            l.str_2 = SECOND_STRING;
            l.enum_loc = Ident2;
            g.bool_glob = !g.func_2(&l.str_1, &l.str_2);
            while l.int_1 < l.int_2 {
                l.int_3 = 5 * l.int_1 - l.int_2;
                l.int_3 = proc_7(l.int_1, l.int_2);
                l.int_1 += 1;
            }
            g.proc_8(l.int_1, l.int_3);
            g.proc_1(PTR_GLOB);
            let mut ch_index = b'A';
            while ch_index <= g.ch_2_glob {
                if l.enum_loc == g.func_1(ch_index, b'C') {
                    l.enum_loc = g.proc_6(Ident1);
                    l.str_2 = THIRD_STRING;
                    l.int_2 = run_index;
                    g.int_glob = run_index;
                }
                ch_index += 1;
            }
            l.int_2 *= l.int_1;
            l.int_1 = l.int_2 / l.int_3;
            l.int_2 = 7 * (l.int_2 - l.int_3) - l.int_1;
            l.int_1 = g.proc_2(l.int_1);
            black_box(&l);
        }
        l
    }

    fn proc_1(&mut self, ptr_val_par: usize) {
        let next_record = self.recs[ptr_val_par].ptr_comp;
        // Structure assignment: *Ptr_Val_Par->Ptr_Comp = *Ptr_Glob.
        self.recs[next_record] = self.recs[PTR_GLOB];
        self.recs[ptr_val_par].int_comp = 5;
        self.recs[next_record].int_comp = self.recs[ptr_val_par].int_comp;
        self.recs[next_record].ptr_comp = self.recs[ptr_val_par].ptr_comp;
        self.recs[next_record].ptr_comp = self.proc_3(self.recs[next_record].ptr_comp);
        if self.recs[next_record].discr == Ident1 {
            self.recs[next_record].int_comp = 6;
            self.recs[next_record].enum_comp = self.proc_6(self.recs[ptr_val_par].enum_comp);
            self.recs[next_record].ptr_comp = self.recs[PTR_GLOB].ptr_comp;
            self.recs[next_record].int_comp = proc_7(self.recs[next_record].int_comp, 10);
        } else {
            let target = self.recs[ptr_val_par].ptr_comp;
            self.recs[ptr_val_par] = self.recs[target];
        }
    }

    /// Returns the new value of its reference parameter.
    fn proc_2(&mut self, int_par: i32) -> i32 {
        let mut int_loc = int_par + 10;
        let mut result = int_par;
        let mut enum_loc = Ident2;
        loop {
            if self.ch_1_glob == b'A' {
                int_loc -= 1;
                result = int_loc - self.int_glob;
                enum_loc = Ident1;
            }
            if enum_loc == Ident1 {
                break;
            }
        }
        result
    }

    /// Returns the new value of its reference parameter (a pointer); the
    /// global pointer is never null here.
    fn proc_3(&mut self, _ptr_ref_par: usize) -> usize {
        let result = self.recs[PTR_GLOB].ptr_comp;
        self.recs[PTR_GLOB].int_comp = proc_7(10, self.int_glob);
        result
    }

    fn proc_4(&mut self) {
        let bool_loc = self.ch_1_glob == b'A';
        self.bool_glob |= bool_loc;
        self.ch_2_glob = b'B';
    }

    fn proc_5(&mut self) {
        self.ch_1_glob = b'A';
        self.bool_glob = false;
    }

    // ---- the separately compiled part of version 2 ----

    /// Returns the new value of its enumeration reference parameter.
    #[inline(never)]
    fn proc_6(&mut self, enum_val_par: Enumeration) -> Enumeration {
        let mut out = enum_val_par;
        if !func_3(enum_val_par) {
            out = Ident4;
        }
        match enum_val_par {
            Ident1 => out = Ident1,
            Ident2 => out = if self.int_glob > 100 { Ident1 } else { Ident4 },
            Ident3 => out = Ident2,
            Ident4 => {}
            Ident5 => out = Ident3,
        }
        out
    }

    #[inline(never)]
    fn proc_8(&mut self, int_1_par_val: i32, int_2_par_val: i32) {
        let int_loc = (int_1_par_val + 5) as usize;
        self.arr_1_glob[int_loc] = int_2_par_val;
        self.arr_1_glob[int_loc + 1] = self.arr_1_glob[int_loc];
        self.arr_1_glob[int_loc + 30] = int_loc as i32;
        for int_index in int_loc..=int_loc + 1 {
            self.arr_2_glob[int_loc][int_index] = int_loc as i32;
        }
        self.arr_2_glob[int_loc][int_loc - 1] += 1;
        self.arr_2_glob[int_loc + 20][int_loc] = self.arr_1_glob[int_loc];
        self.int_glob = 5;
    }

    #[inline(never)]
    fn func_1(&mut self, ch_1_par_val: u8, ch_2_par_val: u8) -> Enumeration {
        let ch_1_loc = ch_1_par_val;
        let ch_2_loc = ch_1_loc;
        if ch_2_loc != ch_2_par_val {
            Ident1
        } else {
            self.ch_1_glob = ch_1_loc;
            Ident2
        }
    }

    #[inline(never)]
    fn func_2(&mut self, str_1_par_ref: &Str30, str_2_par_ref: &Str30) -> bool {
        let mut int_loc = 2usize;
        let mut ch_loc = 0u8;
        while int_loc <= 2 {
            if self.func_1(str_1_par_ref[int_loc], str_2_par_ref[int_loc + 1]) == Ident1 {
                ch_loc = b'A';
                int_loc += 1;
            }
        }
        if (b'W'..b'Z').contains(&ch_loc) {
            int_loc = 7;
        }
        if ch_loc == b'R' {
            true
        } else if strcmp(str_1_par_ref, str_2_par_ref) > 0 {
            int_loc += 7;
            self.int_glob = int_loc as i32;
            true
        } else {
            false
        }
    }
}

/// Returns the new value of its reference parameter.
#[inline(never)]
fn proc_7(int_1_par_val: i32, int_2_par_val: i32) -> i32 {
    let int_loc = int_1_par_val + 2;
    int_2_par_val + int_loc
}

#[inline(never)]
fn func_3(enum_par_val: Enumeration) -> bool {
    let enum_loc = enum_par_val;
    enum_loc == Ident3
}

/// C's strcmp on NUL-terminated byte strings, byte by byte.
#[inline(never)]
fn strcmp(a: &Str30, b: &Str30) -> i32 {
    let mut i = 0;
    loop {
        let (x, y) = (a[i], b[i]);
        if x != y || x == 0 {
            return x as i32 - y as i32;
        }
        i += 1;
    }
}

/// The final values Dhrystone 2.1 says its variables must have after
/// `runs` loops (its "should be" lines).
fn verify(g: &Globals, l: &Locals, runs: u64) -> Result<(), String> {
    let mut bad = Vec::new();
    let mut want = |what: &str, ok: bool| {
        if !ok {
            bad.push(what.to_string());
        }
    };
    want("Int_Glob = 5", g.int_glob == 5);
    want("Bool_Glob = 1", g.bool_glob);
    want("Ch_1_Glob = 'A'", g.ch_1_glob == b'A');
    want("Ch_2_Glob = 'B'", g.ch_2_glob == b'B');
    want("Arr_1_Glob[8] = 7", g.arr_1_glob[8] == 7);
    want(
        "Arr_2_Glob[8][7] = runs + 10",
        g.arr_2_glob[8][7] as i64 == runs as i64 + 10,
    );
    let p = &g.recs[PTR_GLOB];
    let q = &g.recs[NEXT_PTR_GLOB];
    want(
        "Ptr_Glob->Ptr_Comp = Next_Ptr_Glob->Ptr_Comp",
        p.ptr_comp == q.ptr_comp,
    );
    want("Ptr_Glob->Discr = 0", p.discr == Ident1);
    want("Ptr_Glob->Enum_Comp = 2", p.enum_comp == Ident3);
    want("Ptr_Glob->Int_Comp = 17", p.int_comp == 17);
    want("Ptr_Glob->Str_Comp", p.str_comp == SOME_STRING);
    want("Next_Ptr_Glob->Discr = 0", q.discr == Ident1);
    want("Next_Ptr_Glob->Enum_Comp = 1", q.enum_comp == Ident2);
    want("Next_Ptr_Glob->Int_Comp = 18", q.int_comp == 18);
    want("Next_Ptr_Glob->Str_Comp", q.str_comp == SOME_STRING);
    want("Int_1_Loc = 5", l.int_1 == 5);
    want("Int_2_Loc = 13", l.int_2 == 13);
    want("Int_3_Loc = 7", l.int_3 == 7);
    want("Enum_Loc = 1", l.enum_loc == Ident2);
    want("Str_1_Loc", l.str_1 == FIRST_STRING);
    want("Str_2_Loc", l.str_2 == SECOND_STRING);
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "dhrystone: wrong final values after {runs} loops ({}); refusing to report a figure",
            bad.join(", ")
        ))
    }
}

pub struct Dhrystone {
    globals: Box<Globals>,
    locals: Option<Locals>,
}

impl Benchmark for Dhrystone {
    /// Untimed: the program's initialisation, so every interval starts from
    /// the published initial state.
    fn prepare(&mut self, _n: u64) -> Fallible {
        self.globals.reset();
        self.locals = None;
        Ok(())
    }

    /// Timed: `n` Dhrystones (the loop of the published main program) and
    /// nothing else; see `main_loop` for what keeps the optimiser honest.
    fn run(&mut self, n: u64) -> Fallible {
        if n > i32::MAX as u64 - 1 {
            return Err("dhrystone: too many loops for 32-bit Run_Index".into());
        }
        self.locals = Some(self.globals.main_loop(n, 1));
        Ok(())
    }

    /// Untimed: check the final values; a wrong one fails the measurement.
    fn conclude(&mut self, n: u64) -> Fallible {
        let l = self.locals.ok_or("dhrystone: no result")?;
        Ok(verify(&self.globals, &l, n)?)
    }
}

fn build(_: &crate::params::Point, _: &RunContext) -> Result<Built, String> {
    Ok(Built::new(
        Dhrystone {
            globals: Globals::new(),
            locals: None,
        },
        Shape::rate(1.0, Unit::OpsPerSec, 1.0),
    ))
}

/// `dhrystone/dmips`: each Dhrystones/s figure divided by 1757.
fn derive(ms: &[Measurement]) -> Vec<Measurement> {
    ms.iter()
        .filter(|m| m.name == "dhrystone")
        .filter_map(|m| {
            let scale = |v: f64| v / VAX_DHRYSTONES_PER_SEC;
            let samples: Vec<f64> = m.samples.iter().map(|&v| scale(v)).collect();
            let summary = Summary::of_rounds(&samples, &m.rounds, m.statistic)?;
            let mut d = m.clone();
            d.name = "dhrystone/dmips".into();
            d.unit = Unit::Dmips;
            d.samples = samples;
            d.per_process = m
                .per_process
                .iter()
                .map(|p| p.iter().map(|&v| scale(v)).collect())
                .collect();
            d.summary = summary;
            Some(d)
        })
        .collect()
}

pub const FAMILY: Family = Family {
    derive: Some(derive),
    ..Family::new(
        "dhrystone",
        "cpu",
        "Dhrystone 2.1 integer benchmark: Dhrystones/s, and DMIPS (÷ 1757) derived",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_sane, measure_tiny};

    #[test]
    fn final_values_are_the_published_ones() {
        for runs in [1, 2, 3, 1000] {
            let mut g = Globals::new();
            let l = g.main_loop(runs, 1);
            verify(&g, &l, runs).unwrap();
        }
    }

    #[test]
    fn a_short_count_is_refused() {
        let mut g = Globals::new();
        let l = g.main_loop(99, 1);
        let e = verify(&g, &l, 100).unwrap_err();
        assert!(e.contains("Arr_2_Glob[8][7]"), "{e}");
    }

    #[test]
    fn measures_and_derives_dmips() {
        let ms = measure_tiny("dhrystone").unwrap();
        assert_sane(&ms[0]);
        let d = derive(&ms);
        assert_eq!(d[0].name, "dhrystone/dmips");
        assert!((d[0].value() * 1757.0 / ms[0].value() - 1.0).abs() < 1e-9);
    }
}
