//! oltp's tests: every transaction type returns the expected rows on a
//! small database, on SQLite and on a throw-away PostgreSQL server; trials
//! leave no file, schema or process behind; bad input is refused clearly.

use super::mix::{Dialect, Outcome, STATEMENTS, ST_READ_FOR_UPDATE};
use super::*;
use crate::testing::{reaped, short_trial, ThrowawayPostgres};
use touchstone_harness::workload::run_trial;

/// Each transaction type on a fresh database of scale 2 (every balance 0,
/// one history row per account), checked through the mix itself.
fn check_mix(c: &mut dyn Conn) {
    let mut t = |ty: usize, a: i64, b: i64, delta: i64| {
        run(c, ty, &Args { a, b, delta }).unwrap_or_else(|e| panic!("{}: {e}", OP_TYPES[ty]))
    };
    let o = |rows: u64, value: i64| Outcome { rows, value };
    assert_eq!(t(POINT_READ, 5, 0, 0), o(1, 0));
    assert_eq!(t(UPDATE, 5, 0, 7), o(1, 0));
    assert_eq!(t(POINT_READ, 5, 0, 0), o(1, 7));
    assert_eq!(t(RANGE_READ, 1, 0, 0), o(RANGE_ROWS as u64, 7));
    assert_eq!(t(RANGE_READ, 6, 0, 0), o(RANGE_ROWS as u64, 0));
    // 9995..=10004: six accounts of branch 1, four of branch 2.
    assert_eq!(t(JOIN, 9995, 0, 0), o(JOIN_ROWS as u64, 6 + 4 * 2));
    assert_eq!(t(AGGREGATE, 1, 0, 0), o(AGGREGATE_ROWS as u64, 7));
    assert_eq!(t(READ_MODIFY_WRITE, 5, 0, 3), o(1, 10));
    assert_eq!(t(POINT_READ, 5, 0, 0), o(1, 10));
    // Rolled back: neither the update nor the history row stays.
    assert_eq!(t(ROLLBACK, 5, 0, 100), o(0, 0));
    assert_eq!(t(POINT_READ, 5, 0, 0), o(1, 10));
    assert_eq!(t(DELETE, 5, 0, 0), o(1, 0), "the 'opened' row");
    assert_eq!(t(DELETE, 5, 0, 0), o(0, 0), "the rolled-back row stayed");
    // An insert adds one history row, delete takes the oldest first.
    assert_eq!(t(INSERT, 6, 0, 1), o(1, 0));
    assert_eq!(t(DELETE, 6, 0, 0), o(1, 0));
    assert_eq!(t(DELETE, 6, 0, 0), o(1, 0));
    assert_eq!(t(DELETE, 6, 0, 0), o(0, 0));
    // A transfer moves |delta| from a to b: two accounts, two history rows.
    assert_eq!(t(TRANSFER, 2, 1, -50), o(4, 0));
    assert_eq!(t(POINT_READ, 2, 0, 0), o(1, -50));
    assert_eq!(t(POINT_READ, 1, 0, 0), o(1, 50));
    assert_eq!(
        t(AGGREGATE, 1, 0, 0),
        o(AGGREGATE_ROWS as u64, 10),
        "money is kept"
    );
    for (want, what) in [(1, "opened"), (1, "transfer"), (0, "none left")] {
        assert_eq!(t(DELETE, 1, 0, 0), o(want, 0), "{what}");
    }
}

#[test]
fn each_transaction_returns_the_expected_rows_on_sqlite() {
    // No trial forks while this thread is inside SQLite: a child forked
    // then would inherit SQLite's locks held and wait on them for ever.
    let _no_fork = touchstone_harness::parallel::hold_across_fork();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(SQLITE_FILE);
    create_sqlite(&path, 2).unwrap();
    check_mix(&mut SqliteConn::open(&path).unwrap());
}

#[test]
fn arguments_fit_the_database() {
    let mut rng = Rng::new(7);
    for k in 0..20_000 {
        let ty = k % OP_TYPES.len();
        let accounts = 10_000;
        let x = Args::draw(ty, &mut rng, accounts);
        let span = match ty {
            RANGE_READ => RANGE_ROWS,
            JOIN => JOIN_ROWS,
            AGGREGATE => AGGREGATE_ROWS,
            _ => 1,
        };
        assert!(x.a >= 1 && x.a + span - 1 <= accounts, "{ty} {x:?}");
        assert!((1..=accounts).contains(&x.b) && x.b != x.a, "{x:?}");
        assert!((-999..=999).contains(&x.delta));
    }
}

#[test]
fn the_dialects_differ_only_where_declared() {
    for st in 0..STATEMENTS.len() {
        let (s, p) = (
            Dialect::Sqlite.statement(st),
            Dialect::Postgres.statement(st),
        );
        assert_eq!(s, STATEMENTS[st]);
        assert!(!p.contains('?'), "{p}");
        let back = p.replace('$', "?");
        assert_eq!(
            back.strip_suffix(" FOR UPDATE").unwrap_or(&back),
            s,
            "statement {st}"
        );
    }
    assert!(Dialect::Postgres
        .statement(ST_READ_FOR_UPDATE)
        .ends_with("FOR UPDATE"));
}

#[test]
fn scale_zero_and_a_missing_server_are_refused() {
    let e = Oltp::new(0, Engine::Sqlite, false).err().unwrap();
    assert!(e.contains("scale:0"), "{e}");
    let e = crate::select(&["oltp/scale:0".to_string()], &RunContext::default(), 1)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("scale") && e.contains('0'), "{e}");
    let e = Server::parse("postgresql://u@host:notaport/db")
        .err()
        .unwrap();
    assert!(e.contains("malformed"), "{e}");
}

/// Trial at `load` clients: every type measured with its CPU time, every
/// process reaped, nothing the trial made left.
fn trial_checks(w: &mut Oltp, load: u32) {
    let cpus = touchstone_harness::workload::cpu::usable_cpus().unwrap();
    let o = run_trial(w, load, &cpus, &short_trial(), 0).unwrap();
    assert!(o.throughput > 0.0);
    assert!(o.every_client_ran_through());
    let mut cpu = touchstone_harness::workload::OpCpu::default();
    for c in &o.clients {
        cpu.add(&c.cpu);
    }
    for (ty, h) in o.histograms.iter().enumerate() {
        assert!(h.len() > 0, "no {} in the window", OP_TYPES[ty]);
        let per = cpu
            .mean_ns(ty)
            .unwrap_or_else(|| panic!("no CPU for {}", OP_TYPES[ty]));
        assert!(per > 0.0 && per < 1e9, "{}: {per}", OP_TYPES[ty]);
    }
    assert!(o.pids.iter().all(|&p| reaped(p)));
    assert!(w.made.is_none(), "release left the trial's database");
}

#[test]
fn a_sqlite_trial_runs_the_mix_and_leaves_nothing() {
    let mut w = Oltp::new(1, Engine::Sqlite, true).unwrap();
    trial_checks(&mut w, 2);
}

/// Everything that needs a server in one test, so that one is started.
#[test]
fn postgres_runs_the_same_mix_in_its_own_schema_and_refuses_bad_input() {
    let Some(pg) = ThrowawayPostgres::start() else {
        return;
    };
    let server = Server::parse(&pg.url("postgres")).unwrap();
    server.check().unwrap();
    assert!(
        pg.touchstone_schemas().is_empty(),
        "the check left a schema"
    );

    // The mix's rows, in a schema of its own (no trial forks meanwhile,
    // as on SQLite).
    let no_fork = touchstone_harness::parallel::hold_across_fork();
    let schema = schema_name();
    let mut admin = create_schema(&server, &schema, 2).unwrap();
    check_mix(&mut PgConn::open(&server, &schema).unwrap());
    drop_schema(&mut admin, &schema).unwrap();
    drop(admin);
    drop(no_fork);
    assert!(pg.touchstone_schemas().is_empty());

    // A trial: clients in their own processes, the schema dropped after.
    let mut w = Oltp::new(1, Engine::Postgres(Box::new(server.clone())), true).unwrap();
    trial_checks(&mut w, 2);
    assert!(
        pg.touchstone_schemas().is_empty(),
        "a trial left its schema"
    );
    // Other schemas and tables are not touched.
    assert_eq!(
        pg.sql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"),
        ["0"]
    );

    // Through the family, as the command line builds it: `--postgres`
    // makes postgres the engine of an oltp that names none.
    let with_url = |url: String| RunContext::default().with(&POSTGRES, url);
    let ctx = with_url(pg.url("postgres"));
    let sel = crate::select(&["oltp".to_string()], &ctx, 1).unwrap();
    assert_eq!(sel.cases.len(), 1);
    assert!(
        sel.cases[0].name.contains("engine:postgres"),
        "{}",
        sel.cases[0].name
    );
    let build = |ctx: &RunContext| sel.cases[0].family.make_workload(&sel.cases[0].point, ctx);
    assert!(build(&ctx).is_ok());
    let named = crate::select(&["oltp/engine:sqlite".to_string()], &ctx, 1).unwrap();
    assert!(named.cases[0].name.contains("engine:sqlite"));

    // A user without the right to create a schema.
    pg.sql("CREATE ROLE weakling LOGIN");
    let e = build(&with_url(pg.url("weakling"))).err().unwrap();
    assert!(
        e.contains("cannot create a schema") && e.contains("weakling"),
        "{e}"
    );
    // No server there.
    let nowhere = format!(
        "host={} port=1 user=postgres dbname=postgres",
        pg.socket_dir().display()
    );
    let e = build(&with_url(nowhere)).err().unwrap();
    assert!(e.contains("cannot connect"), "{e}");
    let e = build(&RunContext::default()).err().unwrap();
    assert!(e.contains("--postgres"), "{e}");
    assert!(pg.touchstone_schemas().is_empty());
}
