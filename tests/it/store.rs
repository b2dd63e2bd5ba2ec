//! The SQLite store: refusing what is not ours, never losing what is.

use touchstone_results::store::{Open, Store, StoreError};

use crate::common::{quick_run, Sandbox};

#[path = "../support/synth.rs"]
#[allow(dead_code)]
mod synth;

#[test]
fn a_foreign_sqlite_database_is_refused_and_untouched() {
    let s = Sandbox::new();
    let path = s.path("other.sqlite");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE users(name TEXT); INSERT INTO users VALUES ('ada');")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    assert!(matches!(
        Store::open(&path, Open::CreateIfMissing),
        Err(StoreError::Foreign(_))
    ));
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_file_that_is_not_a_database_is_refused_and_untouched() {
    let s = Sandbox::new();
    let path = s.file(
        "notes.txt",
        "just some notes, not a database at all, long enough to have a header",
    );
    assert!(matches!(
        Store::open(&path, Open::CreateIfMissing),
        Err(StoreError::NotADatabase(_))
    ));
    assert_eq!(std::fs::read_to_string(&path).unwrap().len(), 68);
}

#[test]
fn a_locked_database_is_reported_and_earlier_runs_survive() {
    let s = Sandbox::new();
    let first = quick_run(&s, "before-lock");
    let holder = rusqlite::Connection::open(s.db()).unwrap();
    holder
        .execute_batch("BEGIN EXCLUSIVE; INSERT INTO runs SELECT * FROM runs WHERE 0;")
        .unwrap();
    let o = s.run(&["run", "null_loop", "--quick"]);
    assert_eq!(o.status.code(), Some(2), "{}", crate::common::text(&o));
    assert!(
        crate::common::text(&o).contains("locked by another process"),
        "{}",
        crate::common::text(&o)
    );
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    let store = Store::open(&s.db(), Open::MustExist).unwrap();
    let runs = store.list_runs().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].id, first);
    assert!(!store.load_run(&first).unwrap().measurements.is_empty());
}

#[test]
fn runs_round_trip_through_json_export_and_import() {
    let a = Sandbox::new();
    let id = quick_run(&a, "exported");
    let file = a.path("export.json");
    let o = a.run(&["export", "-o", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", crate::common::text(&o));

    let b = Sandbox::new();
    let o = b.run(&["import", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", crate::common::text(&o));
    let src = Store::open(&a.db(), Open::MustExist)
        .unwrap()
        .load_run(&id)
        .unwrap();
    let dst = Store::open(&b.db(), Open::MustExist)
        .unwrap()
        .load_run(&id)
        .unwrap();
    assert_eq!(src, dst);
    // Importing again changes nothing and says so.
    let o = b.run(&["import", file.to_str().unwrap()]);
    assert!(crate::common::text(&o).contains("already present"));
    assert_eq!(
        Store::open(&b.db(), Open::MustExist)
            .unwrap()
            .list_runs()
            .unwrap()
            .len(),
        1
    );
}

/// A store being created while others open it (a `runs` polling the first
/// `run` of a farm node) is opened by all of them: creating the schema is a
/// write transaction that begins as a writer (`BEGIN IMMEDIATE`), so the
/// busy timeout applies instead of an immediate "database is locked".
#[test]
fn a_new_store_opened_by_many_at_once_opens_for_all() {
    for round in 0..5 {
        let s = Sandbox::new();
        let path = s.path(&format!("fresh-{round}.sqlite"));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    if i % 2 == 0 {
                        Store::open(&path, Open::CreateIfMissing).map(|_| ())
                    } else {
                        // A reader: waits for the file, then must open it.
                        while !path.exists() {
                            std::thread::yield_now();
                        }
                        Store::open(&path, Open::MustExist).map(|_| ())
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap().unwrap();
        }
        assert!(Store::open(&path, Open::MustExist)
            .unwrap()
            .list_runs()
            .unwrap()
            .is_empty());
    }
}

/// Writers that read before they write (an import checks which runs are
/// already stored) all succeed side by side instead of failing at once with
/// "database is locked".
#[test]
fn concurrent_imports_into_one_store_all_land() {
    let s = Sandbox::new();
    let path = s.path("shared.sqlite");
    drop(Store::open(&path, Open::CreateIfMissing).unwrap());
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let (path, barrier) = (path.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut store = Store::open(&path, Open::MustExist).unwrap();
                for round in 0..10 {
                    let run = synth::run(&format!("w{i}-r{round}"), "host", None, round);
                    barrier.wait();
                    store.import_runs(&[run]).map_err(|e| e.to_string())?;
                }
                Ok::<(), String>(())
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap().unwrap();
    }
    let runs = Store::open(&path, Open::MustExist)
        .unwrap()
        .list_runs()
        .unwrap();
    assert_eq!(runs.len(), 40);
}
