//! Node tests: the operator as its users run it, on a real node beside the control plane
//! (tests/env/node.sh), installed by helm; Prometheus scraping it. A binary of its own, with a
//! control plane of its own: a cluster-wide release would reconcile the other tests' objects. It
//! shares the test bed of tests/integration/common/.

#[path = "../integration/common/mod.rs"]
mod common;
mod monitoring;
mod node;
mod olm;
mod options;
mod picture;
mod report;
mod rotation;
mod tokens;

/// The tests that install a cluster-wide release take it for writing, the others for reading: a
/// cluster-wide operator reconciles every namespace, so it runs alone.
pub static CLUSTER: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());
