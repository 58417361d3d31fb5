//! The pure plan of a DBClusterEndpoint: [`Facts`] in, [`Plan`] out. Whose endpoint the name is;
//! one CreateDBClusterEndpoint once its DBCluster and members resolve, never again once made;
//! its type and members kept with one ModifyDBClusterEndpoint while RDS reports it available; its
//! connection Secret written when it differs and only if it is this object's; deletion as every
//! group kind's (`managed::named`). Table tests in `plan/tests.rs`.

use std::collections::BTreeMap;

use kube::runtime::events::EventType;

use crate::database::connection::ConnectionInfo;
use crate::database::secret::{SecretStep, Writer, connection_write, plan_write};
use crate::managed::named;
use crate::managed::plan::{ConditionPlan, Requeue};
use crate::managed::tags;

use super::{Cluster, DBClusterEndpoint, DBClusterEndpointStatus, ObservedClusterEndpoint};

/// Everything a decision needs.
pub type Facts = named::Facts<DBClusterEndpoint>;

/// A call or write only this kind makes.
#[derive(Clone, Debug, PartialEq)]
pub enum Own {
    /// CreateDBClusterEndpoint, tagged.
    Create {
        name: String,
        cluster: String,
        endpoint_type: String,
        static_members: Vec<String>,
        excluded_members: Vec<String>,
        tags: BTreeMap<String, String>,
    },
    /// ModifyDBClusterEndpoint with the whole desired type and member lists.
    Modify {
        name: String,
        endpoint_type: String,
        static_members: Vec<String>,
        excluded_members: Vec<String>,
    },
    /// The connection Secret.
    Secret(SecretStep),
}

/// One call or write.
pub type Step = named::Step<Own>;

/// What one reconcile does and reports.
pub type Plan = named::NamedPlan<DBClusterEndpoint>;

/// The one decision of a reconcile of a DBClusterEndpoint.
pub fn plan(f: &Facts) -> Plan {
    named::plan(f, |plan, desired| apply(f, plan, desired))
}

/// The status to write: Ready once RDS reports it available (`named::by_state`).
fn status(plan: &mut Plan, fields: DBClusterEndpointStatus, synced: ConditionPlan) {
    status_with(plan, fields, synced, None)
}

/// [`status`], and Ready only once the connection Secret the spec asks for is written
/// (`pending`: why it is not).
fn status_with(
    plan: &mut Plan,
    fields: DBClusterEndpointStatus,
    synced: ConditionPlan,
    pending: Option<String>,
) {
    let state = fields.state.clone();
    let mut report = named::by_state(fields, state.as_deref(), synced);
    report.ready = crate::managed::conditions::ready_with_secret(report.ready, pending);
    plan.status = Some(report);
}

fn observed_fields(g: &DBClusterEndpoint, o: &ObservedClusterEndpoint) -> DBClusterEndpointStatus {
    let previous = g.status.clone().unwrap_or_default();
    DBClusterEndpointStatus {
        db_cluster_endpoint_identifier: Some(o.name.clone()),
        arn: o.arn.clone(),
        state: Some(o.status.clone()),
        endpoint: o.endpoint.clone(),
        db_cluster_identifier: Some(o.cluster.clone()),
        static_members: o.static_members.clone(),
        excluded_members: o.excluded_members.clone(),
        connection_secret: previous.connection_secret,
        applied_tag_keys: previous.applied_tag_keys,
        ..Default::default()
    }
}

/// Waits with `reason` (a reference not resolved yet, RDS busy): Synced False, nothing sent.
fn wait(mut plan: Plan, f: &Facts, reason: &str, message: String) -> Plan {
    let pending = f
        .object
        .spec
        .connection_secret
        .as_ref()
        .map(|_| message.clone());
    let synced = plan.waiting(f.busy_interval, reason, message);
    let fields = (f.observed.as_ref()).map(|o| observed_fields(&f.object, o));
    let fields = fields.unwrap_or_else(|| f.object.status.clone().unwrap_or_default());
    status_with(&mut plan, fields, synced, pending);
    plan
}

fn apply(f: &Facts, mut plan: Plan, desired_tags: BTreeMap<String, String>) -> Plan {
    let g = &f.object;
    let cluster = match &f.extra.cluster {
        Some(Ok(cluster)) => cluster.clone(),
        Some(Err(why)) => return wait(plan, f, "ReferencesUnresolved", why.clone()),
        None => return wait(plan, f, "ReferencesUnresolved", "not read".into()),
    };
    let (static_members, excluded_members) = match &f.extra.members {
        Some(Ok(members)) => members.clone(),
        Some(Err(why)) => return wait(plan, f, "ReferencesUnresolved", why.clone()),
        None => (Vec::new(), Vec::new()),
    };
    let Some(o) = &f.observed else {
        return create(
            f,
            plan,
            &cluster,
            (static_members, excluded_members),
            desired_tags,
        );
    };
    if !named::owned(g, &o.tags) {
        let refused = named::refuse_name_in_use(g, &mut plan);
        status(&mut plan, Default::default(), refused);
        return plan;
    }
    let mut fields = observed_fields(g, o);
    let (mut changed, applied) =
        named::retag(&mut plan, g, (&o.tags, o.arn.as_deref()), &desired_tags);
    fields.applied_tag_keys = applied;
    let endpoint_type = g.spec.endpoint_type.as_str().to_owned();
    let differs = o.endpoint_type.as_deref() != Some(endpoint_type.as_str())
        || sorted(&o.static_members) != sorted(&static_members)
        || sorted(&o.excluded_members) != sorted(&excluded_members);
    if o.status != "available" {
        plan.requeue = Requeue::After(f.busy_interval);
    } else if differs {
        changed.push(format!(
            "{endpoint_type} over {}",
            describe_members(&static_members, &excluded_members)
        ));
        plan.step(Step::Own(Own::Modify {
            name: o.name.clone(),
            endpoint_type,
            static_members,
            excluded_members,
        }));
    }
    let pending = match secret(f, &mut plan, &mut fields, o, &cluster) {
        Ok(pending) => pending,
        Err(message) => {
            let refused = plan.secret_conflict(message.clone());
            status_with(&mut plan, fields, refused, Some(message));
            return plan;
        }
    };
    if pending.is_some() && matches!(plan.requeue, Requeue::After(d) if d > f.busy_interval) {
        plan.requeue = Requeue::After(f.busy_interval);
    }
    let synced = plan.synced_after(&changed, f.busy_interval, "the endpoint");
    status_with(&mut plan, fields, synced, pending);
    if let Some(why) = reaches_none(o, &cluster)
        && let Some(status) = plan.status.as_mut()
        && status.ready.ok
    {
        status.ready = ConditionPlan::new(false, "NoMembers", why);
    }
    plan
}

/// Why the endpoint, as RDS has it, reaches no instance that takes connections (None: it
/// reaches one). It reaches its static members or, with none, the cluster's instances of its
/// type (readers for READER, any for ANY) but those excluded; RDS reports it available all the
/// same when none of them serves. A member whose state the DBCluster's status does not give is
/// taken to serve.
fn reaches_none(o: &ObservedClusterEndpoint, cluster: &Cluster) -> Option<String> {
    let reader_only = o.endpoint_type.as_deref() != Some("ANY");
    let reached: Vec<&crate::dbcluster::ClusterMember> = match o.static_members.is_empty() {
        false => (cluster.members.iter())
            .filter(|m| o.static_members.contains(&m.db_instance_identifier))
            .collect(),
        true => (cluster.members.iter())
            .filter(|m| !(reader_only && m.is_cluster_writer))
            .filter(|m| !o.excluded_members.contains(&m.db_instance_identifier))
            .collect(),
    };
    let serves = |m: &&crate::dbcluster::ClusterMember| {
        (m.state.as_deref()).is_none_or(crate::dbcluster::plan::serving::serves)
    };
    if reached.iter().any(serves) || (!o.static_members.is_empty() && reached.is_empty()) {
        // A static member the cluster's status does not list yet: RDS's word stands.
        return None;
    }
    let states: Vec<String> = (reached.iter())
        .map(|m| {
            format!(
                "{} ({})",
                m.db_instance_identifier,
                m.state.as_deref().unwrap_or("")
            )
        })
        .collect();
    let kind = if reader_only { "reader" } else { "instance" };
    Some(match states.is_empty() {
        true => format!(
            "the endpoint reaches no {kind} of cluster {}: it has none but those excluded ({}), \
             so it takes no connection until one joins",
            cluster.identifier,
            match o.excluded_members.is_empty() {
                true => "none".into(),
                false => o.excluded_members.join(", "),
            }
        ),
        false => format!(
            "none of the instances the endpoint reaches takes connections ({}): it takes none \
             until one does",
            states.join(", ")
        ),
    })
}

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

fn describe_members(static_members: &[String], excluded: &[String]) -> String {
    match (static_members.is_empty(), excluded.is_empty()) {
        (false, _) => format!("only {}", static_members.join(", ")),
        (true, false) => format!("all members but {}", excluded.join(", ")),
        (true, true) => "all members".into(),
    }
}

/// RDS has no endpoint of the name: made once, tagged, never again once made.
fn create(
    f: &Facts,
    mut plan: Plan,
    cluster: &Cluster,
    (static_members, excluded_members): (Vec<String>, Vec<String>),
    tags: BTreeMap<String, String>,
) -> Plan {
    let g = &f.object;
    let name = g.name_in_rds();
    if g.status.as_ref().is_some_and(|s| s.arn.is_some()) {
        let message = format!(
            "RDS has no cluster endpoint {name} any more: it was deleted outside the operator; \
             delete this object to let it go, or recreate it"
        );
        plan.event(EventType::Warning, "NotFound", "Reconcile", message.clone());
        plan.requeue = Requeue::After(f.drift_interval);
        let fields = g.status.clone().unwrap_or_default();
        status(
            &mut plan,
            fields,
            ConditionPlan::new(false, "NotFound", message),
        );
        return plan;
    }
    let endpoint_type = g.spec.endpoint_type.as_str().to_owned();
    let note = format!(
        "creating the {endpoint_type} endpoint {name} of cluster {} over {}",
        cluster.identifier,
        describe_members(&static_members, &excluded_members)
    );
    plan.step(Step::Own(Own::Create {
        name: name.clone(),
        cluster: cluster.identifier.clone(),
        endpoint_type,
        static_members,
        excluded_members,
        tags,
    }));
    plan.event(EventType::Normal, "Creating", "Create", note);
    plan.requeue = Requeue::After(f.busy_interval);
    let fields = DBClusterEndpointStatus {
        db_cluster_endpoint_identifier: Some(name),
        state: Some("creating".into()),
        db_cluster_identifier: Some(cluster.identifier.clone()),
        applied_tag_keys: tags::keys(&g.spec.tags),
        ..Default::default()
    };
    let creating = ConditionPlan::new(true, "Creating", "the endpoint is being made");
    status(&mut plan, fields, creating);
    plan
}

/// Plans the connection Secret's write (the endpoint as host and readerHost, the cluster's
/// credentials) when it differs; Ok(Some(why)): the spec asks for one that cannot be written yet;
/// Err: a Secret of that name is someone else's.
fn secret(
    f: &Facts,
    plan: &mut Plan,
    fields: &mut DBClusterEndpointStatus,
    o: &ObservedClusterEndpoint,
    cluster: &Cluster,
) -> Result<Option<String>, String> {
    let g = &f.object;
    let Some(wanted) = &g.spec.connection_secret else {
        return Ok(None);
    };
    let Some(host) = o.endpoint.as_deref() else {
        return Ok(Some("RDS reports no address for the endpoint yet".into()));
    };
    let Some(password) = &f.extra.password else {
        return Ok(Some("the cluster's password is not known yet".into()));
    };
    let info = ConnectionInfo {
        host,
        reader_host: Some(host),
        shard_group_host: None,
        port: cluster.port,
        username: &cluster.username,
        password: &password.0,
        dbname: &cluster.dbname,
        engine: &cluster.engine,
        ca_bundle: None,
    };
    let current = f.extra.secret.as_ref();
    let writer = Writer {
        kind: "DBClusterEndpoint",
        what: Some("the endpoint"),
        owner_reference: true,
    };
    let written = connection_write(current, g, wanted, &info, writer)?;
    plan_write(plan, written, |step| Step::Own(Own::Secret(step)));
    fields.connection_secret = Some(wanted.name.clone());
    Ok(None)
}

#[cfg(test)]
mod tests;
