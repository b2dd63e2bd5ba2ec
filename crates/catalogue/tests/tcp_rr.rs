//! Compiles and tests `src/families/tcp_rr.rs` while it is not yet
//! registered in the catalogue (the registration table is being reworked).
//! The file names catalogue items as `crate::…`; these re-exports give it
//! the same paths here. Delete this shim once `families/mod.rs` declares
//! `pub mod tcp_rr;` — its tests then run with the catalogue's own.

use touchstone_catalogue::Mode;

mod params {
    pub use touchstone_catalogue::params::*;
}

mod placement {
    pub use touchstone_catalogue::support::placement::*;
}

#[allow(dead_code)]
#[path = "../src/families/tcp_rr.rs"]
mod tcp_rr;
