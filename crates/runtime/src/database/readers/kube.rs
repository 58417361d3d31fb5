//! The calls of rolling a Secret's readers: list the workloads of the Secret's namespace (only
//! when [`super::to_list`] says so, and only with `--roll-secret-readers`), and patch one's pod
//! template annotation. RBAC: `list` and `patch` on apps deployments, statefulsets and daemonsets,
//! in the namespaces watched.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::json;

use super::{Roll, SecretReaders, Workload, WorkloadKind, to_list};
use crate::context::Context;
use crate::error::{Error, kube_err};

/// The workloads of `namespace`, when the Secret's readers are to be listed this pass (rolling on,
/// and its version not the one they were rolled to, or a rollout going); None otherwise.
pub async fn read(
    ctx: &Context,
    namespace: &str,
    secret: Option<&Secret>,
    previous: Option<&SecretReaders>,
) -> Result<Option<Vec<Workload>>, Error> {
    if !ctx.rolls_readers_in(namespace) || !to_list(secret, previous) {
        return Ok(None);
    }
    let client = &ctx.client;
    let params = ListParams::default();
    let mut all = Vec::new();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let listed = deployments.list(&params).await;
    all.extend(
        listed
            .map_err(kube_err("list Deployments"))?
            .iter()
            .map(Workload::of_deployment),
    );
    let stateful: Api<StatefulSet> = Api::namespaced(client.clone(), namespace);
    let listed = stateful.list(&params).await;
    all.extend(
        listed
            .map_err(kube_err("list StatefulSets"))?
            .iter()
            .map(Workload::of_stateful_set),
    );
    let daemons: Api<DaemonSet> = Api::namespaced(client.clone(), namespace);
    let listed = daemons.list(&params).await;
    all.extend(
        listed
            .map_err(kube_err("list DaemonSets"))?
            .iter()
            .map(Workload::of_daemon_set),
    );
    Ok(Some(all))
}

/// The connection Secret `name` of `namespace` (None: none asked for, or absent), and its
/// readers as [`read`] lists them.
pub async fn secret_and_readers(
    ctx: &Context,
    namespace: &str,
    name: Option<&str>,
    previous: Option<&SecretReaders>,
) -> Result<(Option<Secret>, Option<Vec<Workload>>), Error> {
    let Some(name) = name else {
        return Ok((None, None));
    };
    let api: Api<Secret> = Api::namespaced(ctx.client.clone(), namespace);
    let secret = crate::secrets::get(&api, name).await?;
    let readers = read(ctx, namespace, secret.as_ref(), previous).await?;
    Ok((secret, readers))
}

/// Annotates the workload's pod template with the Secret's version (a merge patch of that one
/// annotation: the workload's other fields are its owner's).
pub async fn roll(client: &Client, namespace: &str, roll: &Roll) -> Result<(), Error> {
    let patch = json!({"spec": {"template": {"metadata": {"annotations": {
        roll.annotation.as_str(): roll.version.to_string(),
    }}}}});
    let (params, patch) = (PatchParams::default(), Patch::Merge(&patch));
    let done = match roll.kind {
        WorkloadKind::Deployment => {
            let api: Api<Deployment> = Api::namespaced(client.clone(), namespace);
            api.patch(&roll.name, &params, &patch).await.map(|_| ())
        }
        WorkloadKind::StatefulSet => {
            let api: Api<StatefulSet> = Api::namespaced(client.clone(), namespace);
            api.patch(&roll.name, &params, &patch).await.map(|_| ())
        }
        WorkloadKind::DaemonSet => {
            let api: Api<DaemonSet> = Api::namespaced(client.clone(), namespace);
            api.patch(&roll.name, &params, &patch).await.map(|_| ())
        }
    };
    match done {
        // Deleted since it was listed: nothing reads the Secret through it any more.
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        other => other.map_err(kube_err("roll a reader of a Secret")),
    }
}
