//! States touchstone's build for the runs it records (the fingerprint's
//! `touchstone` item): the commit it was built from, where the source is a
//! git checkout, and the compiler. `TOUCHSTONE_BUILD` and
//! `TOUCHSTONE_RUSTC` are read by src/session.rs with `env!`.

use std::path::PathBuf;
use std::process::Command;

fn output(cmd: &mut Command) -> Option<String> {
    let o = cmd.output().ok()?;
    let text = String::from_utf8(o.stdout).ok()?;
    (o.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

fn git(args: &[&str]) -> Option<String> {
    output(Command::new("git").args(args))
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    // Rebuild when HEAD moves: HEAD itself (a checkout) and the branch it
    // names (a commit), loose or packed.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]).map(PathBuf::from) {
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
    }
    if let (Some(common), Some(branch)) = (
        git(&["rev-parse", "--git-common-dir"]).map(PathBuf::from),
        git(&["symbolic-ref", "-q", "HEAD"]),
    ) {
        println!("cargo:rerun-if-changed={}", common.join(branch).display());
        println!(
            "cargo:rerun-if-changed={}",
            common.join("packed-refs").display()
        );
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc = output(Command::new(rustc).arg("--version"));
    println!(
        "cargo:rustc-env=TOUCHSTONE_BUILD=commit {}",
        commit.as_deref().unwrap_or("unknown")
    );
    println!(
        "cargo:rustc-env=TOUCHSTONE_RUSTC={}",
        rustc.as_deref().unwrap_or("unknown")
    );
    println!("cargo:rerun-if-changed=build.rs");
}
