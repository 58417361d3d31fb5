//! Every kind the operator runs, registered once: a line in [`KINDS`] gives a kind its CRD (printed
//! by `rds-operator crd`, committed in `crds/`) and its controller on the skeleton.

use std::sync::Arc;

use kube::CustomResourceExt;
use tokio::sync::watch;
use tracing::info;

use crate::awsaccount::AWSAccount;
use crate::context::Context;
use crate::crd;
use crate::dbcluster::DBCluster;
use crate::dbclusterendpoint::DBClusterEndpoint;
use crate::dbclusterparametergroup::DBClusterParameterGroup;
use crate::dbclustersnapshot::DBClusterSnapshot;
use crate::dbinstance::DBInstance;
use crate::dbparametergroup::DBParameterGroup;
use crate::dbproxy::DBProxy;
use crate::dbshardgroup::DBShardGroup;
use crate::dbsnapshot::DBSnapshot;
use crate::dbsubnetgroup::DBSubnetGroup;
use crate::dbuser::DBUser;
use crate::eventsubscription::EventSubscription;
use crate::globalcluster::GlobalCluster;
use crate::http::Health;
use crate::integration::Integration;
use crate::managed::skeleton::{self, Running};
use crate::managed::{ApiScope, Managed};
use crate::optiongroup::OptionGroup;

/// A registered kind: its name in lower case (the CRD's file in `crds/`), its CRD as YAML, and its
/// controller for one namespace (or all).
pub struct Registration {
    pub name: fn() -> String,
    /// Namespaced (a controller per watched namespace) or cluster-scoped (one).
    pub namespaced: bool,
    pub crd: fn() -> String,
    /// What the kind declares to the others at start (`Managed::declare`).
    pub declare: fn(&Context),
    pub controller: fn(&Arc<Context>, Option<&str>, u16, watch::Receiver<bool>) -> Running,
}

const fn register<K: Managed + CustomResourceExt>() -> Registration {
    Registration {
        name: || K::kind(&()).to_lowercase(),
        namespaced: <K::Scope as ApiScope>::NAMESPACED,
        crd: crd::yaml::<K>,
        declare: K::declare,
        controller: skeleton::controller::<K>,
    }
}

/// Every kind, in the order `make crds` writes them.
pub const KINDS: &[Registration] = &[
    register::<DBInstance>(),
    register::<DBSubnetGroup>(),
    register::<DBParameterGroup>(),
    register::<DBCluster>(),
    register::<DBClusterParameterGroup>(),
    register::<AWSAccount>(),
    register::<DBSnapshot>(),
    register::<DBClusterSnapshot>(),
    register::<GlobalCluster>(),
    register::<DBClusterEndpoint>(),
    register::<OptionGroup>(),
    register::<DBProxy>(),
    register::<DBUser>(),
    register::<EventSubscription>(),
    register::<Integration>(),
    register::<DBShardGroup>(),
];

/// The CRD of the kind with this name (lower case), as YAML.
pub fn crd_yaml(name: &str) -> Option<String> {
    (KINDS.iter())
        .find(|k| (k.name)() == name)
        .map(|k| (k.crd)())
}

/// Runs every kind's controller in each watched namespace (or one for all namespaces when
/// `namespaces` is empty) until `shutdown` turns true; marks `health` ready once every cache has
/// synced.
pub async fn run(
    ctx: Arc<Context>,
    namespaces: Vec<String>,
    concurrency: u16,
    shutdown: watch::Receiver<bool>,
    health: Arc<Health>,
) {
    let scopes: Vec<Option<String>> = match namespaces.is_empty() {
        true => vec![None],
        false => namespaces.into_iter().map(Some).collect(),
    };
    for kind in KINDS {
        (kind.declare)(&ctx);
    }
    let (mut runs, mut synced) = (Vec::new(), Vec::new());
    for (i, namespace) in scopes.iter().enumerate() {
        // A cluster-scoped kind has one controller, whatever the namespaces watched, in the
        // release that manages them (`--manage-accounts`).
        let cluster_wide = i == 0 && ctx.manage_accounts;
        for kind in KINDS.iter().filter(|k| k.namespaced || cluster_wide) {
            let namespace = namespace.as_ref().filter(|_| kind.namespaced);
            let running = (kind.controller)(
                &ctx,
                namespace.map(String::as_str),
                concurrency,
                shutdown.clone(),
            );
            runs.push(running.run);
            synced.push(running.synced);
        }
    }
    let readiness = async move {
        if !futures::future::join_all(synced)
            .await
            .into_iter()
            .all(|ok| ok)
        {
            return;
        }
        info!("caches synced");
        health.set_ready(true);
    };
    tokio::join!(futures::future::join_all(runs), readiness);
    info!("controllers stopped");
}

#[cfg(test)]
mod tests {
    use super::KINDS;

    #[test]
    fn committed_crds_are_current() {
        for kind in KINDS {
            let name = (kind.name)();
            let path = format!("{}/crds/{name}.yaml", env!("CARGO_MANIFEST_DIR"));
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == (kind.crd)(),
                "crds/{name}.yaml is stale: run `make crds` and commit the result"
            );
        }
    }
}
