//! The report page in a real headless browser (Debian's `chromium`; its
//! absence is a skip, a failure under CI=true): shared by the report
//! tests that render pages.

use std::path::Path;
use std::process::{Command, Output};

use touchstone_catalogue::testing::skip;

/// The browser the HTML test drives: Debian's `chromium`, or the program
/// `TOUCHSTONE_TEST_CHROMIUM` names (a path that does not exist hides the
/// browser, to see the test skip). None, recorded as skipped, when it does
/// not start; under CI a failure.
pub fn chromium() -> Option<String> {
    let browser =
        std::env::var("TOUCHSTONE_TEST_CHROMIUM").unwrap_or_else(|_| "chromium".to_string());
    let found = Command::new(&browser)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found {
        skip::missing(&format!(
            "the HTML report test needs Debian's `chromium` ({browser} does not start; \
             apt-get install -y chromium, or .ci/run, which installs .ci/apt-packages)"
        ));
        return None;
    }
    Some(browser)
}

pub fn headless(browser: &str, profile: &Path, extra: &[&str], page: &Path) -> Output {
    let mut args: Vec<String> = [
        "120",
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(format!("file://{}", page.display()));
    Command::new("timeout")
        .args(&args)
        .output()
        .expect("chromium starts")
}

/// The DOM of `page` after its script ran in the headless browser (None,
/// recorded as skipped, where there is none): the page logs nothing (any
/// console line is an error or a warning) and its script finished.
pub fn rendered(page: &Path, extra: &[&str]) -> Option<String> {
    let browser = chromium()?;
    let profile = tempfile::tempdir().unwrap();
    let mut args = vec!["--dump-dom", "--enable-logging=stderr", "--v=0"];
    args.extend_from_slice(extra);
    let out = headless(&browser, profile.path(), &args, page);
    let log = String::from_utf8_lossy(&out.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        dom.contains("data-rendered=\"ok\""),
        "the page's script did not finish:\n{}",
        &dom[..dom.len().min(2000)]
    );
    Some(dom)
}
