//! Reports: they read only the results model (runs and measurements), never
//! the benchmarks or the store. Terminal tables live here; richer reports
//! (comparisons, HTML, exports) build on the same model.

pub mod terminal;
