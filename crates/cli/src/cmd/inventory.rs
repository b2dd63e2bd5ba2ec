//! `inventory set|import|list`: each host's price and power, kept in the
//! store (`touchstone_results::inventory`; what is checked and merged lives
//! there, not here).

use std::path::{Path, PathBuf};

use touchstone_results::inventory::{self, HostCost};
use touchstone_results::store::{Open, Store};

use crate::args::InventorySetArgs;
use crate::error::CliError;
use crate::output::{self, print};
use crate::store;

pub fn set(db: Option<PathBuf>, a: InventorySetArgs) -> Result<(), CliError> {
    let host = a
        .host
        .unwrap_or_else(|| touchstone_results::host::collect().identity());
    let entry = HostCost {
        host,
        price: a.price,
        currency: a.currency.map(|c| c.to_ascii_uppercase()),
        date: a.date,
        watts_idle: a.watts_idle,
        watts_busy: a.watts_busy,
        watts_nameplate: a.watts_nameplate,
    };
    if entry
        == (HostCost {
            host: entry.host.clone(),
            ..HostCost::default()
        })
    {
        return Err(CliError::Usage(
            "nothing to set: give --price (with --currency and --date) or watts".into(),
        ));
    }
    // Bad input is reported before any store is made.
    check_given(&entry)?;
    let mut store = store::open(db, Open::CreateIfMissing)?;
    let merged = store.set_inventory(&[entry])?.map_err(CliError::Usage)?;
    for m in &merged {
        print(&format!("{}: {}\n", m.host, inventory::describe(m)));
    }
    Ok(())
}

/// The figures of `entry` checked as given (a price's currency and date
/// may already be stored, so their absence is judged after merging).
fn check_given(entry: &HostCost) -> Result<(), CliError> {
    let mut probe = entry.clone();
    if probe.price.is_some() {
        probe.currency.get_or_insert_with(|| "XXX".into());
        probe.date.get_or_insert_with(|| "2000-01-01".into());
    }
    probe
        .check()
        .map_err(|why| CliError::Usage(format!("host '{}': {why}", entry.host)))
}

pub fn import(db: Option<PathBuf>, file: &Path) -> Result<(), CliError> {
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file).map_err(|e| CliError::File {
        path: name.clone(),
        message: format!("cannot read: {e}"),
    })?;
    let entries = inventory::parse_file(&name, &text).map_err(CliError::Usage)?;
    let mut store = store::open(db, Open::CreateIfMissing)?;
    let merged = store
        .set_inventory(&entries)?
        .map_err(|why| CliError::Usage(format!("{name}: {why}; nothing was set")))?;
    print(&format!(
        "inventory of {} host(s) set in {}\n",
        merged.len(),
        store.path().display()
    ));
    Ok(())
}

pub fn list(store: &Store, json: bool) -> Result<(), CliError> {
    let all = store.inventory()?;
    if json {
        output::print_json(&format!(
            "{}\n",
            serde_json::to_string_pretty(&all).expect("serialisable")
        ));
    } else if all.is_empty() {
        print(&format!(
            "no host inventory in {} (see `touchstone inventory set`)\n",
            store.path().display()
        ));
    } else {
        for c in &all {
            print(&format!("{}: {}\n", c.host, inventory::describe(c)));
        }
    }
    Ok(())
}
