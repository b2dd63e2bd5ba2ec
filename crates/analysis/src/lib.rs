//! Analysis of stored results: pure functions over the results model
//! (comparisons, ratios to a reference, geometric-mean indices, scaling,
//! knees, prediction of application speed from micro-benchmarks). Reports
//! call these; nothing here reads files or prints.

pub mod change_points;
pub mod compare;
pub mod compare_curves;
pub mod cost;
pub mod curve;
pub mod curve_analysis;
pub mod health;
pub mod history;
pub mod index;
pub mod knee;
pub mod outliers;
pub mod pairs;
pub mod predict;
pub mod table;
pub mod usl;

#[cfg(test)]
pub(crate) mod testdata;
