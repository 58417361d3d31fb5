//! A DBCluster in an Aurora global database. A secondary (spec.globalClusterRef) is created in
//! another region than its primary with no master user, password or database name (RDS refuses
//! them for a secondary: "Cannot specify password for cross region replication cluster"), its
//! password is never rotated here (it is the primary's), and it is detached
//! (RemoveFromGlobalCluster) when the reference is removed: one-way, and only from the global
//! database this DBCluster made it a secondary of. At deletion a member is detached first (RDS
//! refuses to delete a member), except a primary that still has secondaries: that waits.

use kube::runtime::events::EventType;

use super::{ClusterStep, Facts, Plan, Step};
use crate::dbcluster::DBClusterStatus;
use crate::dbcluster::observed::ObservedCluster;
use crate::globalcluster::GlobalMember;

/// The password hash of a secondary: it matches no password, so once the cluster is detached the
/// first sync sends the spec's own (until then the password is the primary's, sent there).
pub const GLOBAL_PASSWORD: &str = "the global database's (a secondary)";

/// What spec.globalClusterRef resolves to, read in this reconcile: the GlobalCluster of the
/// namespace, made and Ready, and the primary DBCluster it was made of.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Global {
    /// The global database's RDS identifier.
    pub identifier: String,
    /// Its global writer endpoint.
    pub endpoint: Option<String>,
    /// The region of its writer member (the primary), as the GlobalCluster reports it.
    pub primary_region: Option<String>,
    /// The master user and database of the primary DBCluster (its spec).
    pub master_username: Option<String>,
    pub database_name: Option<String>,
}

/// Whether the DBCluster is (to be) a secondary.
pub(super) fn secondary(f: &Facts) -> bool {
    f.cluster.spec.global_cluster_ref.is_some()
}

/// The resolved global database of a secondary (None: not a secondary, or not resolved).
pub(super) fn resolved(f: &Facts) -> Option<&Global> {
    f.global.as_ref().and_then(|g| g.as_ref().ok())
}

/// Why a secondary cannot be created here: its primary is in the same region (RDS keeps one
/// member of a global database per region).
pub(super) fn creation_refused(f: &Facts) -> Option<String> {
    let global = resolved(f)?;
    let primary = global.primary_region.as_deref()?;
    (primary == f.placement.region).then(|| {
        format!(
            "the primary of global database {} is in {primary}, the region of this cluster: a \
             secondary is made in another region (spec.region, one its AWSAccount allows)",
            global.identifier
        )
    })
}

/// The global database RDS reports the observed cluster in, and that the DBCluster made it a
/// secondary of: the status to record (None once RDS reports it in none).
pub(super) fn secondary_of(f: &Facts, o: &ObservedCluster) -> Option<String> {
    let recorded = (f.cluster.status.as_ref()).and_then(|s| s.secondary_of.clone());
    o.global_cluster.as_ref()?;
    recorded.or_else(|| resolved(f).map(|g| g.identifier.clone()))
}

/// Plans the detachment of a secondary whose globalClusterRef was removed, RDS reporting it
/// available in the global database this DBCluster made it a secondary of. Returns whether it did.
pub(super) fn detach_removed(
    f: &Facts,
    plan: &mut Plan,
    fields: &DBClusterStatus,
    o: &ObservedCluster,
) -> bool {
    let (Some(global), Some(recorded)) = (&o.global_cluster, &fields.secondary_of) else {
        return false;
    };
    if secondary(f) || global != recorded || o.status != "available" {
        return false;
    }
    let note = format!(
        "globalClusterRef was removed: detaching RDS cluster {} from global database {global} \
         into a standalone cluster",
        o.identifier
    );
    plan.event(EventType::Normal, "Detaching", "Update", note);
    plan.step(detach(o, global));
    true
}

/// RemoveFromGlobalCluster of the observed cluster.
fn detach(o: &ObservedCluster, global: &str) -> Step {
    Step::Own(ClusterStep::Detach {
        identifier: o.identifier.clone(),
        global: global.to_owned(),
        arn: o.arn.clone().unwrap_or_default(),
    })
}

/// What a deletion does with a member of a global database (RDS refuses to delete one): Ok with
/// the detachment, decided on the members RDS lists now; Err: why it waits.
pub(super) fn deletion(f: &Facts, o: &ObservedCluster) -> Option<Result<(Step, String), String>> {
    let global = o.global_cluster.as_ref()?;
    let Some(members) = &f.global_members else {
        let why = format!("reading global database {global} before detaching the cluster");
        return Some(Err(why));
    };
    let role = |m: &&GlobalMember| m.db_cluster_identifier == o.identifier;
    let writer = (members.iter().find(role)).is_some_and(|m| m.role == "writer");
    let others: Vec<&str> = (members.iter())
        .filter(|m| m.db_cluster_identifier != o.identifier)
        .map(|m| m.db_cluster_identifier.as_str())
        .collect();
    if writer && !others.is_empty() {
        return Some(Err(format!(
            "the cluster is the primary of global database {global}, which still has secondaries \
             ({}); delete or detach them first, or switch the primary over",
            others.join(", ")
        )));
    }
    let note = format!(
        "detaching RDS cluster {} from global database {global} before its deletion",
        o.identifier
    );
    Some(Ok((detach(o, global), note)))
}
