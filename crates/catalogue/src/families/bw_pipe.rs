//! bw_pipe: bandwidth through a pipe between two processes (lmbench's bw_pipe).
//! A helper process writes, this process reads: each interval asks the
//! helper (over a command pipe) for exactly its messages, so nothing sits
//! buffered when the interval starts. Besides MB/s (10^6 bytes), the CPU
//! seconds each end spent per MB are reported as extra figures
//! `cpu_s_per_mb_sender` and `cpu_s_per_mb_receiver`.

use touchstone_harness::Shape;

use super::ipc_common::{Channel, Stream, BW_SIZE};
use crate::family::{always_supported, Built, Family, Mode, Parallel};
use crate::params::Point;

fn build(p: &Point, _: Mode) -> Result<Built, String> {
    let size = p.num("size");
    Ok(Built::new(
        Stream::new(Channel::Pipe, size as usize),
        Shape::bandwidth(size as f64).with_switches_by_design(),
    ))
}

pub const FAMILY: Family = Family {
    name: "bw_pipe",
    group: "comm_bw",
    summary: "pipe bandwidth between two processes, by message size",
    params: &[BW_SIZE],
    parallel: Parallel::Allowed,
    default_suite: true,
    unsupported: always_supported,
    build,
    derive: None,
};

#[cfg(test)]
mod tests {
    use crate::testing::{assert_sane, measure_spec, tiny_plan};
    use crate::Mode;

    #[test]
    fn measures_with_cpu_per_mb() {
        for m in measure_spec("bw_pipe/size:1k,64k", &tiny_plan(1), Mode::default()).unwrap() {
            assert_sane(&m);
            assert_eq!(m.unit, touchstone_results::Unit::MBps);
            for k in ["cpu_s_per_mb_sender", "cpu_s_per_mb_receiver"] {
                let v = m.extra[k];
                assert!(v.is_finite() && v > 0.0, "{k} = {v}");
            }
        }
    }

    #[test]
    fn runs_in_parallel() {
        let ms = measure_spec("bw_pipe/size:64k", &tiny_plan(3), Mode::default()).unwrap();
        assert_eq!(ms[0].per_process.len(), 3);
        assert_sane(&ms[0]);
    }

    #[test]
    fn oversized_messages_are_refused() {
        let e = measure_spec("bw_pipe/size:8m", &tiny_plan(1), Mode::default()).unwrap_err();
        assert!(e.contains("out of range"), "{e}");
    }
}
