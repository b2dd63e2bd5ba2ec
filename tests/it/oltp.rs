//! oltp through `touchstone run` (issue 16): stored with its mean elapsed
//! and CPU time per transaction type, on SQLite and on a throw-away
//! PostgreSQL server (`--postgres`); bad input refused before anything is
//! measured; no file, schema or process left, also on Ctrl-C.

use serde_json::Value;
use touchstone_catalogue::testing::ThrowawayPostgres;

use crate::common::{leftovers, text, Sandbox};
use crate::workload::{
    interrupt_mid_sweep, refused, run_json, stored_run, survivors, tagged, unique_tag, ONE_CPU,
    SHORT,
};

/// Run oltp with `extra` arguments; check the curve: two points, each with
/// all ten transaction types and the CPU time of each.
fn run_and_check(s: &Sandbox, tag: &str, extra: &[&str]) -> Value {
    let mut args = vec!["run", "oltp/load:1,2", "--json"];
    args.extend(SHORT);
    args.extend(ONE_CPU);
    args.extend(extra);
    let o = tagged(s.cmd(), tag).args(&args).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let run = run_json(&o);
    let curve = &run["curves"][0];
    assert_eq!(curve["workload"], "oltp");
    assert_eq!(curve["operation"], "transaction");
    let points = curve["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for p in points {
        assert!(p["throughput"].as_f64().unwrap() > 0.0);
        let types = p["by_type"].as_array().unwrap();
        assert_eq!(types.len(), 10, "{p}");
        for t in types {
            let cpu = t["cpu_ns_per_op"].as_f64().unwrap_or(0.0);
            assert!(cpu > 0.0, "{t}");
            assert!(t["latency"]["count"].as_u64().unwrap() > 0, "{t}");
        }
    }
    assert!(survivors(tag).is_empty());
    assert_eq!(leftovers(s), Vec::<String>::new(), "files left");
    curve.clone()
}

#[test]
fn oltp_on_sqlite_is_stored_per_transaction_type_and_leaves_nothing() {
    let s = Sandbox::new();
    let curve = run_and_check(&s, &unique_tag("oltp-sqlite"), &[]);
    assert_eq!(curve["params"]["engine"], "sqlite");
}

#[test]
fn bad_oltp_input_is_refused_before_anything_is_measured() {
    let s = Sandbox::new();
    refused(&s, &["run", "oltp/scale:0"], &["scale", "0"]);
    refused(
        &s,
        &[
            "run",
            "oltp",
            "--postgres",
            "postgresql://u@host:notaport/db",
        ],
        &["malformed"],
    );
    refused(
        &s,
        &[
            "run",
            "oltp",
            "--postgres",
            "host=/nonexistent-dir port=1 user=u dbname=d",
        ],
        &["cannot connect to PostgreSQL at u@/nonexistent-dir:1/d"],
    );
    refused(
        &s,
        &["run", "lat_syscall", "--postgres", "host=/tmp user=u"],
        &["--postgres applies to oltp"],
    );
    refused(&s, &["run", "oltp/engine:postgres"], &["--postgres URL"]);
}

#[test]
fn oltp_against_postgres_drops_its_schema_also_on_ctrl_c() {
    let Some(pg) = ThrowawayPostgres::start() else {
        return;
    };
    let url = pg.url("postgres");
    let s = Sandbox::new();
    let curve = run_and_check(
        &s,
        &unique_tag("oltp-pg"),
        &["--no-store", "--postgres", &url],
    );
    assert_eq!(curve["params"]["engine"], "postgres");
    assert!(pg.touchstone_schemas().is_empty(), "a run left its schema");

    // A user who may not create a schema.
    pg.sql("CREATE ROLE weakling LOGIN");
    refused(
        &s,
        &["run", "oltp", "--postgres", &pg.url("weakling")],
        &["'weakling' cannot create a schema", "GRANT CREATE"],
    );

    interrupt_oltp("oltp-pg-ctrl-c", &["--postgres", &url], Some(&pg));
}

#[test]
fn ctrl_c_leaves_no_sqlite_file_or_process() {
    interrupt_oltp("oltp-sqlite-ctrl-c", &[], None);
}

/// Start a sweep of loads 1 and 2, press Ctrl-C once the second point's
/// clients are running (and, on PostgreSQL, its schema exists), and check
/// that no process, file or schema is left.
fn interrupt_oltp(test: &str, extra: &[&str], pg: Option<&ThrowawayPostgres>) {
    let s = Sandbox::new();
    let mut args = vec!["oltp/load:1,2", "--quick", "--window", "1s"];
    args.extend_from_slice(extra);
    let schema_made = || pg.is_none_or(|pg| !pg.touchstone_schemas().is_empty());
    // The run and its two client processes (and, on PostgreSQL, the schema).
    let seen = interrupt_mid_sweep(&s, test, &args, "load 1 on", &|running| {
        running.len() >= 3 && schema_made()
    });
    if let Some(pg) = pg {
        assert!(
            pg.touchstone_schemas().is_empty(),
            "Ctrl-C left the schema: {seen}"
        );
    }
    assert_eq!(leftovers(&s), Vec::<String>::new(), "files left");
    assert_eq!(stored_run(&s)["status"], "interrupted");
}
