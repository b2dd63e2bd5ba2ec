//! The session's tests.

use super::*;

#[test]
fn a_panic_inside_a_session_stores_the_run_as_failed_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.sqlite");
    let request = Request {
        db: Some(db.clone()),
        store: true,
        label: Some("panics".into()),
        selection: vec!["null_loop".into()],
        parallel: vec![1],
        quick: true,
        planned: 1,
        steps: 1,
        seed: None,
        workload: None,
        notes: Vec::new(),
    };
    let unwound = std::panic::catch_unwind(move || {
        let mut plan = Plan::quick();
        let _session = Session::start(request, &mut plan).unwrap();
        panic!("a bug in a command");
    });
    assert!(unwound.is_err());
    let store = Store::open(&db, Open::MustExist).unwrap();
    let rows = store.list_runs().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, "failed");
    let run = store.load_run(&rows[0].id).unwrap();
    let reason = run.reason.expect("a reason is stored");
    assert!(reason.contains("before finishing"), "{reason}");
    assert!(run.ended_at.is_some());
}
