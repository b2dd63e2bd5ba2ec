//! lat_proc: what creating a process costs (lmbench's lat_proc, and the
//! fork/exec variants of the HP kernel micro-benchmarks). fork: fork, the
//! child exits at once, the parent waits; exec: fork + execve of /bin/true
//! (dynamically linked: includes the loader and libc start-up); exec_static:
//! fork + execve of a tiny static program written into the scratch directory
//! (the kernel's exec path alone); shell: fork + `/bin/sh -c /bin/true`. The
//! parent first touches `mem` bytes of private memory (fork must copy its
//! page tables), and exec passes an environment of `env` bytes.

use std::ffi::CString;

use touchstone_harness::{Benchmark, Context, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{choice_enum, Param, Point};
use crate::support::sys::{self, cstring, map_anonymous};

choice_enum! {
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Op { Fork = "fork", Exec = "exec", ExecStatic = "exec_static", Shell = "shell" }
}

pub struct LatProc {
    op: Op,
    mem: usize,
    env: usize,
    region: *mut u8,
    /// execve arguments, built in setup so the child allocates nothing.
    path: CString,
    args: Vec<CString>,
    envs: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
}

// SAFETY: the pointers refer to this struct's own allocations and mapping,
// used only by the process that made them.
unsafe impl Send for LatProc {}

/// A minimal static ELF executable that calls exit(0): one loadable segment
/// holding the headers and three instructions. Returns None on machines we
/// have no encoding for.
fn tiny_static_elf() -> Option<Vec<u8>> {
    const BASE: u64 = 0x40_0000;
    #[cfg(target_arch = "x86_64")]
    let (machine, code): (u16, &[u8]) = (
        62,
        // mov eax, 60 (exit); xor edi, edi; syscall
        &[0xb8, 0x3c, 0, 0, 0, 0x31, 0xff, 0x0f, 0x05],
    );
    #[cfg(target_arch = "aarch64")]
    let (machine, code): (u16, &[u8]) = (
        183,
        // mov x0, #0; mov x8, #93 (exit); svc #0
        &[
            0x00, 0x00, 0x80, 0xd2, 0xa8, 0x0b, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4,
        ],
    );
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    return None;
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        let (ehsize, phsize) = (64u64, 56u64);
        let total = ehsize + phsize + code.len() as u64;
        let mut f = Vec::with_capacity(total as usize);
        f.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
        f.extend_from_slice(&[0; 8]);
        f.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
        f.extend_from_slice(&machine.to_le_bytes());
        f.extend_from_slice(&1u32.to_le_bytes()); // EV_CURRENT
        f.extend_from_slice(&(BASE + ehsize + phsize).to_le_bytes()); // entry
        f.extend_from_slice(&ehsize.to_le_bytes()); // program headers' offset
        f.extend_from_slice(&0u64.to_le_bytes()); // no section headers
        f.extend_from_slice(&0u32.to_le_bytes()); // flags
        f.extend_from_slice(&(ehsize as u16).to_le_bytes());
        f.extend_from_slice(&(phsize as u16).to_le_bytes());
        f.extend_from_slice(&1u16.to_le_bytes()); // one program header
        f.extend_from_slice(&[0; 6]); // section header size, count, names
        f.extend_from_slice(&1u32.to_le_bytes()); // PT_LOAD
        f.extend_from_slice(&5u32.to_le_bytes()); // R+X
        f.extend_from_slice(&0u64.to_le_bytes()); // file offset
        f.extend_from_slice(&BASE.to_le_bytes()); // virtual address
        f.extend_from_slice(&BASE.to_le_bytes()); // physical address
        f.extend_from_slice(&total.to_le_bytes()); // size in file
        f.extend_from_slice(&total.to_le_bytes()); // size in memory
        f.extend_from_slice(&0x1000u64.to_le_bytes()); // alignment
        f.extend_from_slice(code);
        Some(f)
    }
}

impl LatProc {
    /// Fork a child that runs `exec` (or exits at once) and wait for it.
    /// The child never returns into this code: fork_helper `_exit`s it.
    #[inline]
    fn once(&self) -> Fallible {
        let pid = if self.op == Op::Fork {
            sys::fork_helper(|| 0)?
        } else {
            let (path, argv, envp) = (self.path.as_ptr(), self.argv.as_ptr(), self.envp.as_ptr());
            sys::fork_helper(move || {
                // SAFETY: NUL-terminated path and NULL-terminated arrays built in setup.
                unsafe { libc::execve(path, argv, envp) };
                127
            })?
        };
        match sys::reap(pid)? {
            0 => Ok(()),
            127 if self.op != Op::Fork => Err(format!(
                "could not execute {:?} (a noexec scratch directory?)",
                self.path
            )
            .into()),
            code => Err(format!("child exited with status {code}").into()),
        }
    }
}

impl Benchmark for LatProc {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        if self.mem > 0 {
            self.region = map_anonymous(self.mem, libc::PROT_READ | libc::PROT_WRITE, false)?;
            // One write per page: fork must copy their page tables.
            for off in (0..self.mem).step_by(4096) {
                // SAFETY: inside the mapping just made.
                unsafe { self.region.add(off).write_volatile(1) };
            }
        }
        if self.op == Op::Fork {
            return Ok(());
        }
        match self.op {
            Op::Exec => {
                self.path = cstring("/bin/true")?;
                self.args = vec![cstring("true")?];
            }
            Op::Shell => {
                self.path = cstring("/bin/sh")?;
                self.args = vec![cstring("sh")?, cstring("-c")?, cstring("/bin/true")?];
            }
            Op::ExecStatic => {
                let elf = tiny_static_elf().ok_or("no tiny static program for this machine")?;
                let file = ctx.scratch.join(format!("exit0.{}", ctx.process));
                std::fs::write(&file, elf)?;
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755))?;
                self.path = cstring(&file)?;
                self.args = vec![cstring("exit0")?];
            }
            Op::Fork => unreachable!(),
        }
        self.envs = vec![cstring("PATH=/usr/bin:/bin")?];
        // The large environment: variables of up to 4 KB (`env` bytes in all,
        // counting each "NAME=value" and its NUL).
        let mut left = self.env;
        let mut i = 0;
        while left > 0 {
            let name = format!("TOUCHSTONE_PAD_{i}=");
            let len = left.min(4096).max(name.len() + 1);
            let var = format!("{name}{}", "x".repeat(len - name.len() - 1));
            left -= len.min(left);
            self.envs.push(cstring(var)?);
            i += 1;
        }
        self.argv = self.args.iter().map(|a| a.as_ptr()).collect();
        self.argv.push(std::ptr::null());
        self.envp = self.envs.iter().map(|a| a.as_ptr()).collect();
        self.envp.push(std::ptr::null());
        // One untimed run, so that a program that cannot run fails here
        // with a clear message rather than mid-measurement.
        self.once()
    }

    /// Timed: `n` times fork, the child's exit (after execve of the chosen
    /// program, which runs to exit(0)), and waitpid in the parent; each exit
    /// status is checked. The child also runs fork_helper's two set-up calls
    /// (prctl, getppid: well under 1 µs).
    fn run(&mut self, n: u64) -> Fallible {
        for _ in 0..n {
            self.once()?;
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        if !self.region.is_null() {
            // SAFETY: unmapping the region setup mapped.
            unsafe { libc::munmap(self.region as *mut libc::c_void, self.mem) };
            self.region = std::ptr::null_mut();
        }
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let op = Op::of(p, "op")?;
    let env = p.num("env") as usize;
    if op == Op::Fork && env > 0 {
        return Err("env: only exec, exec_static and shell pass an environment".into());
    }
    if op == Op::ExecStatic && tiny_static_elf().is_none() {
        return Err("exec_static: no tiny static program for this machine; use exec".into());
    }
    Ok(Built::new(
        LatProc {
            op,
            mem: p.num("mem") as usize,
            env,
            region: std::ptr::null_mut(),
            path: CString::default(),
            args: Vec::new(),
            envs: Vec::new(),
            argv: Vec::new(),
            envp: Vec::new(),
        },
        Shape::latency(1.0).with_switches_by_design(),
    )
    .with_setup_bytes(p.num("mem")))
}

pub const FAMILY: Family = Family {
    params: &[
        Param::choice("op", Op::NAMES)
            .positional()
            .help("fork: fork+exit+wait; exec: +execve /bin/true (dynamic); exec_static: +execve of a tiny static program; shell: +/bin/sh -c /bin/true"),
        Param::size("mem", 0, 4 << 30)
            .measured(&["0", "1m", "100m"])
            // 100 MiB touched afresh in each of quick's three rounds cost
            // 0.7 s of its budget; the default suite keeps it.
            .quick(&["0", "1m"])
            .help("private memory the parent has touched before forking"),
        Param::size("env", 0, 1 << 20)
            .measured(&["0"])
            .help("size of the environment passed to exec (exec, exec_static, shell)"),
    ],
    ..Family::new(
        "lat_proc",
        "proc",
        "process creation: fork+exit+wait, fork+exec (/bin/true, tiny static), fork+/bin/sh -c; vs touched memory and environment size",
        build,
    )
};

#[cfg(test)]
mod tests {
    use crate::testing::{assert_sane, measure_tiny, refusal};

    #[test]
    fn touched_memory_and_environment() {
        let ms = measure_tiny("lat_proc/fork/mem:8m").unwrap();
        assert_sane(&ms[0]);
        let ms = measure_tiny("lat_proc/exec_static/env:64k").unwrap();
        assert_sane(&ms[0]);
    }

    #[test]
    fn fork_with_an_environment_is_refused() {
        let e = refusal("lat_proc/fork/env:4k");
        assert!(e.contains("only exec, exec_static and shell"), "{e}");
    }

    #[test]
    fn the_tiny_program_runs() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("ts-elf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("exit0");
        std::fs::write(&f, super::tiny_static_elf().unwrap()).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        let st = std::process::Command::new(&f).status().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(st.success());
    }
}
