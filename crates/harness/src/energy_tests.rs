use super::*;
use std::os::unix::fs::PermissionsExt;

fn tree(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/energy")
        .join(name)
}

fn coverages(found: &Discovery) -> Vec<Coverage> {
    found.sources.iter().map(|s| s.coverage.clone()).collect()
}

#[test]
fn rapl_zones_are_found_with_their_coverage_and_wrap_range() {
    let found = discover(&tree("rapl-full"), &read_to_string);
    assert_eq!(
        coverages(&found),
        [Coverage::Package, Coverage::Core, Coverage::Dram]
    );
    assert_eq!(
        found.sources[0].kind,
        Kind::Counter {
            max_uj: Some(262_143_328_850)
        }
    );
    assert_eq!(
        read_source(&found.sources[0], &read_to_string).unwrap(),
        262_143_328_000
    );
    assert!(found.unreadable.is_empty());
    assert_eq!(found.summary(), "energy: 3 source(s)");
}

#[test]
fn a_missing_dram_zone_and_a_missing_range_are_not_invented() {
    let found = discover(&tree("rapl-no-dram"), &read_to_string);
    assert_eq!(coverages(&found), [Coverage::Package, Coverage::Core]);
    assert_eq!(found.sources[1].kind, Kind::Counter { max_uj: None });
}

#[test]
fn a_counter_that_wraps_gives_the_energy_across_the_wrap() {
    let max = 262_143_328_850;
    // From 850 µJ short of the top to 100 past zero: 851 + 100 µJ.
    assert_eq!(counter_delta(max - 850, 100, Some(max)), Some(951));
    assert_eq!(counter_delta(1_000, 4_500, Some(max)), Some(3_500));
    // Backwards with no known range: no figure, never a guess.
    assert_eq!(counter_delta(1_000, 10, None), None);
}

#[test]
fn energy_files_a_normal_user_cannot_read_are_reported_not_skipped_silently() {
    // The kernel makes energy_uj root-only; the tests run as root, so the
    // refusal is played by the reader.
    let deny = |path: &Path| -> io::Result<String> {
        if path.ends_with("energy_uj") {
            Err(io::Error::from(io::ErrorKind::PermissionDenied))
        } else {
            std::fs::read_to_string(path)
        }
    };
    let found = discover(&tree("rapl-full"), &deny);
    assert!(found.sources.is_empty());
    assert_eq!(found.unreadable.len(), 3);
    let summary = found.summary();
    assert!(summary.contains("3 unreadable"), "{summary}");
    assert!(summary.contains("intel-rapl:0/energy_uj"), "{summary}");
    assert!(
        summary.to_lowercase().contains("permission denied"),
        "{summary}"
    );
}

#[test]
fn hwmon_energy_and_power_sensors_are_found_and_other_sensors_ignored() {
    let found = discover(&tree("hwmon"), &read_to_string);
    assert_eq!(found.sources.len(), 2, "{:?}", found.sources);
    assert_eq!(found.sources[0].kind, Kind::PowerMicrowatts);
    assert_eq!(
        found.sources[0].coverage,
        Coverage::Other("acpi_power_meter power1".into())
    );
    assert_eq!(found.sources[1].kind, Kind::Counter { max_uj: None });
    assert_eq!(
        found.sources[1].coverage,
        Coverage::Other("Esocket0".into())
    );
}

#[test]
fn a_machine_without_counters_says_so() {
    let found = discover(&tree("none"), &read_to_string);
    assert!(found.sources.is_empty() && found.unreadable.is_empty());
    assert!(found.summary().contains("exposes no energy counter"));
}

#[test]
fn a_run_says_once_why_no_counter_is_readable_and_nothing_where_one_is() {
    let none = discover(&tree("none"), &read_to_string).run_note().unwrap();
    assert!(
        none.starts_with("no energy counter readable: this machine exposes none"),
        "{none}"
    );
    let deny = |path: &Path| -> io::Result<String> {
        match path.ends_with("energy_uj") {
            true => Err(io::Error::from(io::ErrorKind::PermissionDenied)),
            false => std::fs::read_to_string(path),
        }
    };
    let refused = discover(&tree("rapl-full"), &deny).run_note().unwrap();
    assert!(refused.contains("3 energy file(s) refused"), "{refused}");
    assert!(refused.contains("intel-rapl:0/energy_uj"), "{refused}");
    assert_eq!(
        discover(&tree("rapl-full"), &read_to_string).run_note(),
        None
    );
    assert_eq!(discover(&tree("hwmon"), &read_to_string).run_note(), None);
}

/// A directory holding a fake `ipmitool` printing `script`'s output; removed
/// on drop.
struct FakeIpmitool(PathBuf);

impl FakeIpmitool {
    fn new(tag: &str, script: &str) -> FakeIpmitool {
        let dir =
            std::env::temp_dir().join(format!("touchstone-ipmi-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let tool = dir.join("ipmitool");
        std::fs::write(&tool, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        FakeIpmitool(dir)
    }

    /// The fake first, then the system's PATH for `sh`.
    fn path(&self) -> std::ffi::OsString {
        let mut dirs = vec![self.0.clone()];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        std::env::join_paths(dirs).unwrap()
    }

    /// Runs the lookup, retrying while another test's fork still holds the
    /// just-written script open (ETXTBSY).
    fn watts(&self) -> io::Result<Option<u64>> {
        for _ in 0..20 {
            match ipmi_power_watts(&self.path()) {
                Err(err) if err.raw_os_error() == Some(libc::ETXTBSY) => {
                    std::thread::sleep(std::time::Duration::from_millis(50))
                }
                other => return other,
            }
        }
        ipmi_power_watts(&self.path())
    }
}

impl Drop for FakeIpmitool {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn the_bmc_reading_comes_from_ipmitool_on_path() {
    let fake = FakeIpmitool::new(
        "ok",
        "[ \"$*\" = 'dcmi power reading' ] || exit 2\n\
         printf '\\n    Instantaneous power reading:                   245 Watts\\n    \
         Minimum during sampling period:                 98 Watts\\n'",
    );
    assert_eq!(fake.watts().unwrap(), Some(245));
}

#[test]
fn a_failing_bmc_is_an_error_naming_ipmitool() {
    let fake = FakeIpmitool::new("fail", "echo 'Could not open device' >&2; exit 1");
    let err = fake.watts().unwrap_err().to_string();
    assert!(err.contains("ipmitool dcmi power reading failed"), "{err}");
    assert!(err.contains("Could not open device"), "{err}");
}

#[test]
fn without_ipmitool_there_is_no_bmc_reading() {
    let empty = std::env::temp_dir().join(format!("touchstone-ipmi-none-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let result = ipmi_power_watts(empty.as_os_str());
    std::fs::remove_dir_all(&empty).unwrap();
    assert_eq!(result.unwrap(), None);
}

fn package(max_uj: Option<u64>) -> Source {
    Source {
        path: PathBuf::from("/nonexistent"),
        coverage: Coverage::Package,
        kind: Kind::Counter { max_uj },
        resolution: 1,
    }
}

#[test]
fn a_window_gives_joules_watts_and_joules_per_op_across_a_wrap() {
    let max = 262_143_328_850;
    let sources = [package(Some(max))];
    let before = Snapshot {
        values: vec![Some(max - 999_999)],
    };
    let after = Snapshot {
        values: vec![Some(2_000_000)],
    };
    let got = window(&sources, &before, &after, 0.5, 3_000_000);
    assert_eq!(got.len(), 1);
    assert!((got[0].joules - 3.0).abs() < 1e-9, "{got:?}");
    assert!((got[0].watts - 6.0).abs() < 1e-9, "{got:?}");
    assert!(
        (got[0].joules_per_op.unwrap() - 1e-6).abs() < 1e-15,
        "{got:?}"
    );
}

#[test]
fn too_few_counter_steps_give_no_per_op_figure_and_a_lost_reading_no_figure() {
    let sources = [package(None), package(None)];
    let before = Snapshot {
        values: vec![Some(1_000), None],
    };
    let after = Snapshot {
        values: vec![Some(1_500), Some(9_000)],
    };
    let got = window(&sources, &before, &after, 0.001, 10);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].joules_per_op, None);
}

#[test]
fn a_power_sensor_gives_the_mean_of_its_edges_over_the_window() {
    let sources = [Source {
        path: PathBuf::from("/nonexistent"),
        coverage: Coverage::Node,
        kind: Kind::PowerMicrowatts,
        resolution: 1,
    }];
    let before = Snapshot {
        values: vec![Some(180_000_000)],
    };
    let after = Snapshot {
        values: vec![Some(220_000_000)],
    };
    let got = window(&sources, &before, &after, 10.0, 0);
    assert!((got[0].watts - 200.0).abs() < 1e-9, "{got:?}");
    assert!((got[0].joules - 2_000.0).abs() < 1e-9, "{got:?}");
    assert_eq!(got[0].joules_per_op, None);
}

#[test]
fn snapshots_of_the_recorded_tree_read_each_zone() {
    let found = discover(&tree("rapl-full"), &read_to_string);
    let shot = snapshot(&found.sources, &read_to_string);
    assert_eq!(
        shot.values,
        [Some(262_143_328_000), Some(51_234_567), Some(9_876_543)]
    );
}

/// The recorded RAPL tree with its package counter read as `values` in
/// turn (the last repeated); the other zones read as recorded.
pub(crate) fn rapl_probe_reading(values: Vec<u64>) -> Probe {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let found = discover(&tree("rapl-full"), &read_to_string);
    let package = found.sources[0].path.clone();
    let reads = AtomicUsize::new(0);
    Probe {
        sources: found.sources,
        read: Box::new(move |p: &Path| {
            if p == package {
                let k = reads.fetch_add(1, Ordering::SeqCst).min(values.len() - 1);
                Ok(format!("{}\n", values[k]))
            } else {
                read_to_string(p)
            }
        }),
    }
}

fn extra(extras: &[(String, f64)], key: &str) -> Option<f64> {
    extras.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
}

#[test]
fn a_workload_window_gets_watts_over_the_sampled_span_and_joules_over_the_window() {
    // The package counter wraps between the two reads: 500_000 µJ short of
    // the top, then 1_499_999 past zero: 2 J.
    let max = 262_143_328_850;
    let probe = rapl_probe_reading(vec![max - 500_000, 1_499_999]);
    let (before, after) = (probe.snapshot(), probe.snapshot());
    // Sampled over 1 s around a window of 0.8 s in which 1600 ops completed.
    let got = probe.trial_extras(&before, &after, 1_000_000_000, 800_000_000, 1_600);
    assert_eq!(extra(&got, "energy_package_w"), Some(2.0));
    let joules = extra(&got, "energy_package_j").unwrap();
    assert!((joules - 1.6).abs() < 1e-12, "{joules}");
    let per_op = extra(&got, "energy_package_j_per_op").unwrap();
    assert!((per_op - 0.001).abs() < 1e-15, "{per_op}");
    // The core and DRAM counters did not move: 0 J, too few steps for a
    // figure per operation.
    assert_eq!(extra(&got, "energy_core_j"), Some(0.0));
    assert_eq!(extra(&got, "energy_dram_j_per_op"), None);
    // No operations: no figure per operation; no span: nothing.
    let idle = probe.trial_extras(&before, &after, 1_000_000_000, 800_000_000, 0);
    assert_eq!(extra(&idle, "energy_package_j_per_op"), None);
    assert!(probe
        .trial_extras(&before, &after, 0, 800_000_000, 5)
        .is_empty());
}

#[test]
fn a_points_energy_sums_its_trials_and_resolves_per_op_only_where_each_did() {
    let map = |pairs: &[(&str, f64)]| -> std::collections::BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    };
    let a = map(&[
        ("energy_package_j", 3.0),
        ("energy_package_w", 3.0),
        ("energy_package_j_per_op", 0.003),
        ("energy_dram_j", 1.0),
        ("energy_dram_w", 1.0),
    ]);
    let b = map(&[
        ("energy_package_j", 5.0),
        ("energy_package_w", 2.5),
        ("energy_package_j_per_op", 0.005),
    ]);
    let point = over_trials(&[(&a, 1_000_000_000, 1_000), (&b, 2_000_000_000, 1_000)]);
    assert_eq!(point["energy_package_j"], 8.0);
    assert!((point["energy_package_w"] - 8.0 / 3.0).abs() < 1e-12);
    assert_eq!(point["energy_package_j_per_op"], 0.004);
    // DRAM was not read in the second trial: no partial figure.
    assert!(!point.keys().any(|k| k.contains("dram")), "{point:?}");
    // Without a resolvable trial, no figure per operation.
    let c = map(&[("energy_package_j", 1.0), ("energy_package_w", 1.0)]);
    let point = over_trials(&[(&a, 1_000_000_000, 1_000), (&c, 1_000_000_000, 1_000)]);
    assert_eq!(point["energy_package_j"], 4.0);
    assert!(!point.contains_key("energy_package_j_per_op"));
    assert!(over_trials(&[]).is_empty());
}
