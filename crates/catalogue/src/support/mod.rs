//! Support code the families share: mechanisms, not benchmarks.
pub mod ops;
