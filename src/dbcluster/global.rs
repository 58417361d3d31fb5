//! What a DBCluster reads of its global database: for a secondary (spec.globalClusterRef), the
//! GlobalCluster of its namespace, once made and Ready, and the primary DBCluster it was made of,
//! whose credentials the secondary's connection Secret carries; for every member, the global
//! writer endpoint its Secret names; at the deletion of a member, the global database's members as
//! RDS lists them now.

use kube::ResourceExt;
use kube::api::Api;

use super::DBCluster;
use super::observed::ObservedCluster;
use super::plan::Global;
use crate::context::Context;
use crate::database::password::PasswordRead;
use crate::error::{Error, kube_err};
use crate::globalcluster::aws::GlobalClusterCalls;
use crate::globalcluster::{GlobalCluster, GlobalMember, ObservedGlobalCluster};
use crate::locations::Location;
use crate::managed::references;

/// What a secondary's globalClusterRef resolves to, and which password its Secret carries (the
/// primary DBCluster's); None when the DBCluster is no secondary or is being deleted.
pub(crate) async fn secondary(
    ctx: &Context,
    cluster: &DBCluster,
) -> Result<Option<(Result<Global, String>, PasswordRead)>, Error> {
    let Some(r) = &cluster.spec.global_cluster_ref else {
        return Ok(None);
    };
    if cluster.metadata.deletion_timestamp.is_some() {
        return Ok(None);
    }
    let namespace = cluster.namespace().unwrap_or_default();
    let unresolved = |why: String| Ok(Some((Err(why), PasswordRead::None)));
    let globals: Api<GlobalCluster> = Api::namespaced(ctx.client.clone(), &namespace);
    let found = (globals.get_opt(&r.name).await).map_err(kube_err("get GlobalCluster"))?;
    let Some(g) = found else {
        return unresolved(format!("GlobalCluster {} does not exist", r.name));
    };
    let status = g.status.clone().unwrap_or_default();
    let identifier = status.global_cluster_identifier.clone();
    let (true, Some(identifier)) = (references::usable(&g, &status), identifier) else {
        return unresolved(format!("GlobalCluster {} is not Ready yet", r.name));
    };
    let Some(source) = &g.spec.source_db_cluster_ref else {
        return unresolved(format!(
            "GlobalCluster {} has no sourceDBClusterRef: a secondary's connection Secret carries \
             the credentials of the primary DBCluster it was made of",
            r.name
        ));
    };
    let clusters: Api<DBCluster> = Api::namespaced(ctx.client.clone(), &namespace);
    let primary = (clusters.get_opt(&source.name).await).map_err(kube_err("get DBCluster"))?;
    let Some(primary) = primary else {
        return unresolved(format!(
            "the primary DBCluster {} of GlobalCluster {} does not exist",
            source.name, r.name
        ));
    };
    let writer = (status.members.iter()).find(|m| m.role == "writer");
    let global = Global {
        identifier,
        endpoint: status.endpoint.clone(),
        primary_region: writer.map(|m| m.region.clone()),
        master_username: primary.spec.master_username.clone(),
        database_name: primary.spec.database_name.clone(),
    };
    Ok(Some((Ok(global), super::plan::credentials(&primary))))
}

/// What a member of a global database reads of it: at deletion (read directly) its members now;
/// otherwise its global writer endpoint.
pub(super) async fn member_reads(
    at: &Location,
    cluster: &DBCluster,
    observed: Option<&ObservedCluster>,
    observed_directly: bool,
) -> Result<(Option<Vec<GlobalMember>>, Option<String>), Error> {
    let deleting = cluster.metadata.deletion_timestamp.is_some();
    let members = members(at, observed, observed_directly && deleting).await?;
    let paused = super::plan::paused(cluster);
    let endpoint = writer_endpoint(at, observed, deleting || paused).await?;
    Ok((members, endpoint))
}

/// At the deletion of a member of a global database, read directly: its members now.
async fn members(
    at: &Location,
    observed: Option<&ObservedCluster>,
    direct_deletion: bool,
) -> Result<Option<Vec<GlobalMember>>, Error> {
    let Some(global) = observed.and_then(|o| o.global_cluster.as_ref()) else {
        return Ok(None);
    };
    if !direct_deletion {
        return Ok(None);
    }
    let found = at.rds.global_cluster(global).await?;
    Ok(Some(found.map(|g| g.members).unwrap_or_default()))
}

/// The global writer endpoint of the global database the observed cluster is a member of: from the
/// shared listing while fresh, else read (not at deletion).
async fn writer_endpoint(
    at: &Location,
    observed: Option<&ObservedCluster>,
    deleting: bool,
) -> Result<Option<String>, Error> {
    let Some(global) = observed.and_then(|o| o.global_cluster.as_ref()) else {
        return Ok(None);
    };
    if deleting {
        return Ok(None);
    }
    let listing = at.observer.listing::<ObservedGlobalCluster>();
    let found = match listing.get(global, at.observer.intervals.settled) {
        Some(found) => Some(found),
        None => at.rds.global_cluster(global).await?,
    };
    Ok(found.and_then(|g| g.endpoint))
}
