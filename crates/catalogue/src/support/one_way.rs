//! The one-way transfer the bandwidth families time (bw_pipe, bw_unix,
//! bw_tcp): a helper process (the sender) writes, this process (the
//! receiver) reads, over one of the byte channels; the CPU time both ends
//! spend per MB is reported beside the bandwidth.

use std::io;
use std::os::fd::RawFd;

use touchstone_harness::{BenchError, Benchmark, Context, Fallible, Shape};

use super::placement::Placement;
use super::sockets::{tcp_pair, unix_pair, Channel};
use super::sys::{self, Pid};
use crate::family::{BuildCase, Built, Family};
use crate::params::{Param, Point};

/// CPU time this process has used, in seconds.
pub fn process_cpu_s() -> f64 {
    // SAFETY: clock_gettime into a local timespec.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// What the sender is asked, over its command pipe.
const REPORT: u64 = u64::MAX;

/// One-way bulk transfer from a helper (the sender) to this process (the
/// receiver), `size` bytes per write and per read. Each interval first
/// asks the helper for exactly the interval's messages, so nothing is
/// buffered in the channel when an interval starts.
pub struct OneWay {
    channel: Channel,
    size: usize,
    buf: Vec<u8>,
    data: RawFd,
    cmd: RawFd,
    reply: RawFd,
    helper: Pid,
    place: Placement,
    // receiver's CPU seconds and bytes over all intervals
    cpu_mark: f64,
    cpu_s: f64,
    bytes: f64,
}

impl OneWay {
    /// A case timing the transfer of `size`-byte messages over `channel`,
    /// sender and receiver placed where the case's `cpus` parameter says
    /// (`Family::make` adds the warm-up and interval a placement needs).
    pub fn case(channel: Channel, size: usize, p: &Point) -> Result<Built, String> {
        Ok(Built::new(
            OneWay::new(channel, size, Placement::of(p)),
            Shape::bandwidth(size as f64).with_switches_by_design(),
        ))
    }

    pub fn new(channel: Channel, size: usize, place: Placement) -> OneWay {
        OneWay {
            channel,
            size,
            buf: Vec::new(),
            data: -1,
            cmd: -1,
            reply: -1,
            helper: -1,
            place,
            cpu_mark: 0.0,
            cpu_s: 0.0,
            bytes: 0.0,
        }
    }
}

/// The sender: for each command `k`, write `k` messages of `size` bytes; for
/// `REPORT`, answer with its CPU seconds spent writing and bytes written.
fn sender(data: RawFd, cmd: RawFd, reply: RawFd, size: usize) -> i32 {
    let buf = vec![0xa5u8; size];
    let (mut cpu, mut bytes) = (0.0f64, 0.0f64);
    let mut word = [0u8; 8];
    loop {
        if sys::read_exact(cmd, &mut word).is_err() {
            return 0;
        }
        let k = u64::from_ne_bytes(word);
        if k == REPORT {
            let mut out = [0u8; 16];
            out[..8].copy_from_slice(&cpu.to_ne_bytes());
            out[8..].copy_from_slice(&bytes.to_ne_bytes());
            if sys::write_all(reply, &out).is_err() {
                return 1;
            }
            continue;
        }
        let t0 = process_cpu_s();
        for _ in 0..k {
            if sys::write_all(data, &buf).is_err() {
                return 1;
            }
        }
        cpu += process_cpu_s() - t0;
        bytes += (k as usize * size) as f64;
    }
}

impl Benchmark for OneWay {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        // The harness does not call cleanup when setup fails: undo here.
        self.start(ctx).inspect_err(|_| self.cleanup())
    }

    fn prepare(&mut self, _n: u64) -> Fallible {
        self.cpu_mark = process_cpu_s();
        Ok(())
    }

    /// Timed: an 8-byte command asking the helper for `n` messages, then
    /// reading `n * size` bytes in reads of up to `size` bytes. The data is
    /// only moved, not inspected (as lmbench's bw_pipe/bw_tcp).
    fn run(&mut self, n: u64) -> Fallible {
        sys::write_all(self.cmd, &n.to_ne_bytes())?;
        let mut left = n as usize * self.size;
        while left > 0 {
            let want = left.min(self.size);
            // SAFETY: reading into our buffer of `size` bytes.
            let r =
                unsafe { libc::read(self.data, self.buf.as_mut_ptr() as *mut libc::c_void, want) };
            if r <= 0 {
                let e = io::Error::last_os_error();
                if r < 0 && e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(if r == 0 {
                    "sender closed the stream".into()
                } else {
                    BenchError(format!("stream read: {e}"))
                });
            }
            left -= r as usize;
        }
        Ok(())
    }

    fn conclude(&mut self, n: u64) -> Fallible {
        self.cpu_s += process_cpu_s() - self.cpu_mark;
        self.bytes += (n as usize * self.size) as f64;
        Ok(())
    }

    fn extras(&mut self) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        if self.bytes > 0.0 {
            out.push((
                "cpu_s_per_mb_receiver".to_string(),
                self.cpu_s / (self.bytes / 1e6),
            ));
        }
        let mut rep = [0u8; 16];
        if sys::write_all(self.cmd, &REPORT.to_ne_bytes()).is_ok()
            && sys::read_exact(self.reply, &mut rep).is_ok()
        {
            let cpu = f64::from_ne_bytes(rep[..8].try_into().unwrap());
            let bytes = f64::from_ne_bytes(rep[8..].try_into().unwrap());
            if bytes > 0.0 {
                out.push(("cpu_s_per_mb_sender".to_string(), cpu / (bytes / 1e6)));
            }
        }
        out
    }

    fn cleanup(&mut self) {
        for fd in [self.data, self.cmd, self.reply] {
            sys::close(fd);
        }
        (self.data, self.cmd, self.reply) = (-1, -1, -1);
        sys::kill_and_reap(self.helper);
        self.helper = -1;
    }
}

impl OneWay {
    fn start(&mut self, ctx: &Context) -> Fallible {
        let pins = self.place.pin(ctx, 2)?;
        self.buf = vec![0u8; self.size];
        let (recv, send) = match self.channel {
            Channel::Pipe => sys::pipe()?,
            Channel::Unix => unix_pair()?,
            Channel::Tcp => tcp_pair()?,
            _ => return Err("stream: pipe, unix or tcp only".into()),
        };
        let (cmd_r, cmd_w) = sys::pipe()?;
        let (rep_r, rep_w) = sys::pipe()?;
        let size = self.size;
        let pid = pins.fork_helper(1, || {
            for fd in [recv, cmd_w, rep_r] {
                sys::close(fd);
            }
            sender(send, cmd_r, rep_w, size)
        });
        for fd in [send, cmd_r, rep_w] {
            sys::close(fd);
        }
        (self.data, self.cmd, self.reply) = (recv, cmd_w, rep_r);
        self.helper = pid?;
        Ok(())
    }
}

/// A bandwidth message size: 64 KB by default, 1 KB to 4 MB.
pub const BW_SIZE: Param = Param::size("size", 1 << 10, 4 << 20)
    .measured(&["1k", "64k", "1m", "4m"])
    .quick(&["64k"])
    .help("bytes per write and per read");

/// A bandwidth family's parameters: its message size and where its two
/// processes run.
const SIZE_AND_PLACEMENT: &[Param] = &[BW_SIZE, super::placement::PARAM];

/// A bandwidth family (group `comm_bw`) whose parameters are its message
/// size and where its two processes run: what bw_pipe and bw_unix share.
pub const fn family(name: &'static str, summary: &'static str, build: BuildCase) -> Family {
    Family::new(name, "comm_bw", summary, build).with_params(SIZE_AND_PLACEMENT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{descriptor_is_open, in_child, process_is_gone};

    /// In a child process, where no other test thread can reopen a
    /// descriptor number the engine has just closed.
    #[test]
    fn one_way_closes_and_reaps_and_reports_both_ends() {
        in_child(|| {
            let ctx = Context {
                process: 0,
                parallel: 1,
                scratch: std::env::temp_dir(),
            };
            let mut s = OneWay::new(Channel::Tcp, 4096, Placement::Free);
            s.setup(&ctx).map_err(|e| e.0)?;
            for n in [1, 10, 100] {
                s.prepare(n).map_err(|e| e.0)?;
                s.run(n).map_err(|e| e.0)?;
                s.conclude(n).map_err(|e| e.0)?;
            }
            let extras = s.extras();
            assert_eq!(extras.len(), 2, "{extras:?}");
            let (fds, helper) = ([s.data, s.cmd, s.reply], s.helper);
            s.cleanup();
            assert!(process_is_gone(helper));
            for fd in fds {
                assert!(!descriptor_is_open(fd), "descriptor {fd} left open");
            }
            Ok(())
        })
        .unwrap();
    }

    /// Each one-way family reports the CPU time both ends spend per MB
    /// (here at a size the quick suite does not measure) and refuses a
    /// message over the 4 MB limit before anything runs.
    #[test]
    fn the_families_report_cpu_per_mb_and_refuse_oversized_messages() {
        use crate::testing::{measure_spec, tiny_plan};
        use crate::RunContext;
        for family in ["bw_pipe", "bw_unix", "bw_tcp"] {
            let plan = tiny_plan(1);
            let m = &measure_spec(&format!("{family}/size:1k"), &plan, &RunContext::default())
                .unwrap()[0];
            for k in ["cpu_s_per_mb_sender", "cpu_s_per_mb_receiver"] {
                let v = m.extra[k];
                assert!(v.is_finite() && v > 0.0, "{}: {k} = {v}", m.name);
            }
            let e = measure_spec(&format!("{family}/size:8m"), &plan, &RunContext::default())
                .unwrap_err();
            assert!(e.contains("out of range"), "{e}");
        }
    }
}
