//! The snapshot kinds' table tests, through the DBSnapshot kind: the shared plan of one snapshot
//! (`plan.rs`) and of a schedule (`schedule.rs`).

mod plan;
mod schedule;
