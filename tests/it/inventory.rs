//! The hosts' inventory (issue 30): set on the command line and from a
//! farm's file (all or nothing, a bad row named by its line), listed, shown
//! by `runs` and `show`, and carried by `export` and `import`.

use serde_json::Value;

use crate::common::{assert_refused, assert_says, text, Sandbox};
use crate::imports::{document, import_file};

fn listed(s: &Sandbox) -> Value {
    let o = s.run(&["inventory", "list", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn inventory_round_trips_through_export_and_import() {
    let a = Sandbox::new();
    let o = import_file(&a, "run.json", &document("00000000000000a1", "priced"));
    assert!(o.status.success(), "{}", text(&o));
    // The corpus run's host is named "vm".
    let o = a.run_line("inventory set vm --price 12500 --currency eur --date 2026-03-01 --watts-idle 110 --watts-busy 420");
    assert!(o.status.success(), "{}", text(&o));
    // A second set keeps what it does not name.
    let o = a.run(&["inventory", "set", "vm", "--watts-nameplate", "750"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = a.run(&["inventory", "set", "other", "--watts-busy", "90"]);
    assert!(o.status.success(), "{}", text(&o));
    let before = listed(&a);
    assert_eq!(before.as_array().unwrap().len(), 2, "{before}");
    let vm = &before[1];
    assert_eq!(vm["host"], "vm");
    assert_eq!(vm["currency"], "EUR");
    assert_eq!(vm["price"], 12500.0);
    assert_eq!(vm["watts_busy"], 420.0);
    assert_eq!(vm["watts_nameplate"], 750.0);

    let runs = text(&a.run(&["runs"]));
    assert!(
        runs.contains("inventory: vm: 12500 EUR (2026-03-01), 420 W busy"),
        "{runs}"
    );
    assert!(
        !runs.contains("other"),
        "a host without runs listed: {runs}"
    );
    let shown = text(&a.run(&["show", "last"]));
    assert!(shown.contains("inventory: vm: 12500 EUR"), "{shown}");

    let exported = a.path("out.json");
    let o = a.run(&["export", "-o", exported.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&exported).unwrap()).unwrap();
    // Only the inventory of the hosts whose runs went out.
    assert_eq!(
        doc["inventory"].as_array().unwrap().len(),
        1,
        "{}",
        doc["inventory"]
    );

    let b = Sandbox::new();
    let o = b.run(&["import", exported.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert_says(&o, "the inventory of 1 host(s)");
    assert_eq!(listed(&b)[0], *vm);
    // A store's own entry is kept over an import's, and the import says so.
    let o = b.run(&["inventory", "set", "vm", "--watts-busy", "400"]);
    assert!(o.status.success(), "{}", text(&o));
    let again = b.path("again.json");
    let mut d = doc.clone();
    d["runs"][0]["id"] = "00000000000000b2".into();
    std::fs::write(&again, d.to_string()).unwrap();
    let o = b.run(&["import", again.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert_says(&o, "kept for vm");
    assert_eq!(listed(&b)[0]["watts_busy"], 400.0);
}

#[test]
fn a_farm_file_with_a_bad_row_sets_nothing_and_names_the_line() {
    let s = Sandbox::new();
    let farm = s.file(
        "farm.csv",
        "host,price,currency,date,watts_busy\n\
         node-1,12500,EUR,2026-03-01,420\n\
         node-2,9000,EUR,2026-13-01,380\n",
    );
    let o = s.run(&["inventory", "import", farm.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("line 3") && text(&o).contains("2026-13-01"),
        "{}",
        text(&o)
    );
    assert!(!s.db().exists(), "a refused import made a store");

    let toml = s.file(
        "farm.toml",
        "[[host]]\nhost = \"node-1\"\nprice = 12500\ncurrency = \"EUR\"\ndate = \"2026-03-01\"\n\n\
         [[host]]\nhost = \"node-2\"\nwatts_nameplate = 750\n",
    );
    let o = s.run(&["inventory", "import", toml.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(listed(&s).as_array().unwrap().len(), 2);
    // A price without its currency, on the command line, is refused whole.
    let o = s.run(&["inventory", "set", "node-3", "--price", "10"]);
    assert_refused(&o, "currency");
    assert_eq!(listed(&s).as_array().unwrap().len(), 2);
}

#[test]
fn runs_json_and_show_json_carry_each_hosts_inventory() {
    let s = Sandbox::new();
    let o = import_file(&s, "run.json", &document("00000000000000c1", "priced"));
    assert!(o.status.success(), "{}", text(&o));
    let runs = |s: &Sandbox| -> Value {
        let o = s.run(&["runs", "--json"]);
        assert!(o.status.success(), "{}", text(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    // Nothing stored: no field.
    assert!(runs(&s)[0].get("inventory").is_none(), "{}", runs(&s));
    let shown = s.run(&["show", "last", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert!(doc.get("inventory").is_none(), "{doc}");
    assert_eq!(doc["runs"][0]["id"], "00000000000000c1");

    let o = s.run_line(
        "inventory set vm --price 12500 --currency EUR --date 2026-03-01 --watts-busy 420",
    );
    assert!(o.status.success(), "{}", text(&o));
    let listed = runs(&s);
    let inv = &listed[0]["inventory"];
    assert_eq!(inv["host"], "vm", "{listed}");
    assert_eq!(inv["price"], 12500.0);
    assert_eq!(inv["currency"], "EUR");
    assert_eq!(inv["date"], "2026-03-01");
    assert_eq!(inv["watts_busy"], 420.0);
    // The machine's own entry (by identity) is preferred to its name's.
    let identity = match doc["runs"][0]["host"]["machine_id"].as_str() {
        Some(id) => format!("vm#{id}"),
        None => "vm".to_string(),
    };
    let o = s.run(&["inventory", "set", &identity, "--watts-busy", "333"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(runs(&s)[0]["inventory"]["watts_busy"], 333.0);

    let shown = s.run(&["show", "last", "--format", "json"]);
    assert!(shown.status.success(), "{}", text(&shown));
    let doc: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(doc["inventory"][0]["watts_busy"], 333.0, "{doc}");
    // The document still imports as a run.
    let b = Sandbox::new();
    let o = import_file(&b, "shown.json", &doc.to_string());
    assert!(o.status.success(), "{}", text(&o));
    let md = text(&s.run(&["show", "last", "--format", "markdown"]));
    assert!(md.contains("inventory: vm"), "{md}");
}
