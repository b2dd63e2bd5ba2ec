//! Where the I/O families write, as the run's options say: `--dir`, or a
//! whole block device named twice with `--device` and `--destroy-data-on`,
//! and `--drop-caches`; declared here, checked into a `Target` from the
//! run's context (a device claimed for the whole run), and described in
//! one line for the user.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::place::describe_place;
use crate::family::{Held, OptionValue, RunCheck, RunContext, RunOption};
use crate::support::block_device::{self, Claim};

/// Where the I/O families write, as the run's options chose (`--dir`,
/// `--device` with `--destroy-data-on`, `--drop-caches`), checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    /// `--dir`: the directory the test files go in (default: scratch).
    pub dir: Option<PathBuf>,
    /// `--device`, accepted only when `--destroy-data-on` names the same one.
    pub device: Option<PathBuf>,
    /// `--drop-caches`: drop the page cache before every interval (root).
    pub drop_caches: bool,
}

/// `--dir PATH`.
pub const DIR: RunOption = RunOption {
    name: "dir",
    value: OptionValue::Path("PATH"),
    help: "the directory the test files go in (default: the scratch directory); nothing is written elsewhere",
    defaults: &[],
    check: Some(&TARGET_CHECK),
};

/// `--device DEV`.
pub const DEVICE: RunOption = RunOption {
    name: "device",
    value: OptionValue::Path("DEV"),
    help: "a whole block device to measure instead of files (io; io_copy and io_load refuse it); its data is destroyed, so --destroy-data-on must name the same device",
    defaults: &[],
    check: Some(&TARGET_CHECK),
};

/// `--destroy-data-on DEV`.
pub const DESTROY_DATA_ON: RunOption = RunOption {
    name: "destroy-data-on",
    value: OptionValue::Path("DEV"),
    help: "the device whose data may be destroyed: must equal --device",
    defaults: &[],
    check: Some(&TARGET_CHECK),
};

/// `--drop-caches`.
pub const DROP_CACHES: RunOption = RunOption {
    name: "drop-caches",
    value: OptionValue::Flag,
    help: "write back and drop the page cache before every timed interval (needs root), so buffered reads reach the storage",
    defaults: &[],
    check: Some(&TARGET_CHECK),
};

/// The run options of the families that write test files: where they write.
pub const TARGET_OPTIONS: &[RunOption] = &[DIR, DEVICE, DESTROY_DATA_ON, DROP_CACHES];

/// The check of the four target options, once for a run.
pub const TARGET_CHECK: RunCheck = RunCheck {
    name: "the I/O target",
    check: check_target,
};

/// The run's target for the I/O families, as its options give it:
/// writing to a device needs both flags naming the same block device (for
/// a build, claimed by the run's check), `--dir` a directory,
/// `--drop-caches` root. Read again by each build, so that what changed
/// since the run's check is seen.
pub fn target(ctx: &RunContext) -> Result<Target, String> {
    let target = options_target(ctx)?;
    if let Some(dev) = &target.device {
        // Never written without the claim the run took before anything
        // was built, which it holds until it ends.
        if !ctx.held::<Claim>().any(|c| c.device() == dev) {
            return Err(format!(
                "--device {}: not claimed for this run (its options were not checked: RunContext::check)",
                dev.display()
            ));
        }
    }
    Ok(target)
}

/// The check of the target options (`TARGET_CHECK`): the target as given,
/// and a device claimed for the whole run (`block_device::claim`: no
/// mount, swap or holder on it or any partition of it, and opened with
/// O_EXCL), which the run's context holds. A dry run is checked alike.
fn check_target(ctx: &RunContext) -> Result<Option<Held>, String> {
    let target = options_target(ctx)?;
    Ok(match target.device {
        Some(dev) => Some(Arc::new(block_device::claim(&dev)?)),
        None => None,
    })
}

/// The target the options give, checked but not claimed.
fn options_target(ctx: &RunContext) -> Result<Target, String> {
    let dir = ctx.path(&DIR).map(Path::to_path_buf);
    let drop_caches = ctx.flag(&DROP_CACHES);
    let device = match (ctx.path(&DEVICE), ctx.path(&DESTROY_DATA_ON)) {
        (None, None) => None,
        (Some(d), None) => {
            return Err(format!(
                "--device {}: writing to a device destroys its data; say so with --destroy-data-on {} as well",
                d.display(),
                d.display()
            ))
        }
        (None, Some(d)) => {
            return Err(format!(
                "--destroy-data-on {} without --device: name the device to measure with --device {}",
                d.display(),
                d.display()
            ))
        }
        (Some(d), Some(x)) => {
            let cd = d.canonicalize().map_err(|e| format!("--device {}: {e}", d.display()))?;
            let cx = x
                .canonicalize()
                .map_err(|e| format!("--destroy-data-on {}: {e}", x.display()))?;
            if cd != cx {
                return Err(format!(
                    "--device {} and --destroy-data-on {} name different devices ({} and {}); nothing was written",
                    d.display(),
                    x.display(),
                    cd.display(),
                    cx.display()
                ));
            }
            Some(cd)
        }
    };
    if device.is_some() && dir.is_some() {
        return Err("--dir and --device: choose one place to write".into());
    }
    if let Some(d) = &dir {
        if !d.is_dir() {
            return Err(format!("--dir {}: not a directory", d.display()));
        }
    }
    // SAFETY: geteuid has no preconditions.
    if drop_caches && unsafe { libc::geteuid() } != 0 {
        return Err("--drop-caches writes /proc/sys/vm/drop_caches, which needs root; run as root, or use mode:direct or a file larger than memory instead".into());
    }
    Ok(Target {
        dir,
        device,
        drop_caches,
    })
}

/// The I/O families' line about the run (`Family::run_note`): where they write.
pub fn target_note(ctx: &RunContext) -> String {
    target(ctx).map_or_else(|e| e, |t| describe_target(&t))
}

/// The run's target for a family that works on files (`io_copy`,
/// `io_load`): a device named with `--device` is refused, naming `io`.
pub fn file_target(ctx: &RunContext, family: &str, works_on: &str) -> Result<Target, String> {
    let target = target(ctx)?;
    match &target.device {
        Some(dev) => Err(format!(
            "{family} {works_on}: measure {} with io, or give --dir",
            dev.display()
        )),
        None => Ok(target),
    }
}

/// The directory whose file system a default run writes to: where the
/// harness makes its scratch directories.
pub fn scratch_parent() -> PathBuf {
    std::env::temp_dir()
}

/// One line for the user: where the I/O families of this run write.
pub fn describe_target(t: &Target) -> String {
    match (&t.device, &t.dir) {
        (Some(d), _) => format!(
            "I/O: raw block device {} (its data is overwritten)",
            d.display()
        ),
        (None, Some(d)) => format!("I/O: files in {} ({})", d.display(), describe_place(d)),
        (None, None) => {
            let s = scratch_parent();
            format!(
                "I/O: files in the scratch directory under {} ({}); --dir chooses another",
                s.display(),
                describe_place(&s)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_flags_must_both_name_one_unmounted_device() {
        let ctx = |device: Option<&str>, destroy: Option<&str>| {
            let mut c = RunContext::new(false);
            if let Some(d) = device {
                c = c.with(&DEVICE, d);
            }
            if let Some(d) = destroy {
                c = c.with(&DESTROY_DATA_ON, d);
            }
            c
        };
        let e = target(&ctx(Some("/dev/null"), None)).unwrap_err();
        assert!(e.contains("--destroy-data-on"), "{e}");
        let e = target(&ctx(None, Some("/dev/null"))).unwrap_err();
        assert!(e.contains("without --device"), "{e}");
        let e = target(&ctx(Some("/dev/null"), Some("/dev/zero"))).unwrap_err();
        assert!(e.contains("different devices"), "{e}");
        // Checked as the run's options are (`RunContext::check`), which
        // claims the device: /dev/null is no block device.
        let e = check_target(&ctx(Some("/dev/null"), Some("/dev/null"))).unwrap_err();
        assert!(e.contains("not a block device"), "{e}");
        let e = check_target(&ctx(Some("/dev/null"), None)).unwrap_err();
        assert!(e.contains("--destroy-data-on"), "{e}");
        // A build never gets a device the run has not claimed.
        let e = target(&ctx(Some("/dev/null"), Some("/dev/null"))).unwrap_err();
        assert!(e.contains("not claimed"), "{e}");
        assert_eq!(target(&ctx(None, None)), Ok(Target::default()));
        assert!(check_target(&ctx(None, None)).unwrap().is_none());
    }
}
