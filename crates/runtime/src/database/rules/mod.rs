//! The planning rules both database kinds follow, written once over the shared step vocabulary
//! (`database::step`) and a kind's plan as `managed::plan::Steps`: a kind's plan calls them with
//! what it read, and keeps only what differs.

pub mod absence;
pub mod activation;
pub mod blue_green;
pub mod roles;

/// What a database kind is called in its messages and reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Noun {
    /// In messages: "instance" or "cluster".
    pub word: &'static str,
    /// In reasons and field names: "Instance" or "Cluster".
    pub title: &'static str,
}

pub const INSTANCE: Noun = Noun {
    word: "instance",
    title: "Instance",
};
pub const CLUSTER: Noun = Noun {
    word: "cluster",
    title: "Cluster",
};
