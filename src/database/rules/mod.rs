//! The planning rules both database kinds follow, written once over the shared step vocabulary
//! (`database::step`) and a kind's plan as `managed::plan::Steps`: a kind's plan calls them with
//! what it read, and keeps only what differs.

pub mod blue_green;
