//! The snapshot kinds' table tests, through the DBSnapshot kind: the shared plan of one snapshot
//! (`plan.rs`), of a schedule (`schedule.rs`) and of an export (`export.rs`).

mod export;
mod plan;
mod schedule;
