//! The connection Secret of a DBCluster: the writer (for a member of a global database, the global
//! writer endpoint) and reader endpoints, rendered from what RDS holds and written only when it differs, and only to a Secret this DBCluster controls.

use super::{Facts, Plan, SecretStep, Step, secrets_owner_referenced};
use crate::database::connection::ConnectionInfo;
use crate::database::readers;
use crate::database::secret::{Writer, connection_write, plan_write};
use crate::dbcluster::DBClusterStatus;
use crate::dbcluster::observed::ObservedCluster;
use crate::sensitive::Sensitive;

/// Plans the connection Secret's write when its content differs from what it should be. Only a
/// Secret this DBCluster controls is ever updated. Ok(Some(why)): the spec asks for a Secret that
/// cannot be written yet (no endpoint, the password not known), and Ready waits for it
/// (`conditions::ready_with_secret`); Err: a Secret of that name is someone else's.
pub(super) fn connection_secret(
    f: &Facts,
    plan: &mut Plan,
    fields: &mut DBClusterStatus,
    o: &ObservedCluster,
    password: Option<&Sensitive>,
) -> Result<Option<String>, String> {
    let cluster = &f.cluster;
    let Some(wanted) = &cluster.spec.connection.connection_secret else {
        return Ok(None);
    };
    let (Some(own), Some(port)) = (o.endpoint.as_deref(), o.port) else {
        return Ok(Some("RDS reports no endpoint for the cluster yet".into()));
    };
    let Some(password) = password else {
        return Ok(Some("the master password is not known".into()));
    };
    // A member of a global database writes through the global writer endpoint (it reaches the
    // primary's writer, wherever that is, before and after a switchover) and reads through its
    // own reader endpoint.
    let global = super::global::resolved(f).filter(|_| super::global::secondary(f));
    let host = (f.global_endpoint.as_deref())
        .or(global.and_then(|g| g.endpoint.as_deref()))
        .unwrap_or(own);
    let info = ConnectionInfo {
        host,
        reader_host: Some(o.reader_endpoint.as_deref().unwrap_or(own)),
        shard_group_host: f.shard_group_endpoint.as_deref(),
        port,
        username: (o.master_username.as_deref())
            .or(cluster.spec.master_username.as_deref())
            .or(global.and_then(|g| g.master_username.as_deref()))
            .unwrap_or_default(),
        password: &password.0,
        dbname: (o.database_name.as_deref())
            .or(cluster.spec.database_name.as_deref())
            .or(global.and_then(|g| g.database_name.as_deref()))
            .unwrap_or_default(),
        engine: cluster.spec.engine.as_str(),
        ca_bundle: f.ca_bundle.as_deref(),
    };
    let writer = Writer {
        kind: "DBCluster",
        what: None,
        owner_reference: secrets_owner_referenced(cluster),
    };
    let current = f.connection_secret.as_ref();
    let written = connection_write(current, cluster, wanted, &info, writer)?;
    plan_write(plan, written, Step::Secret);
    fields.common.connection_secret = Some(wanted.name.clone());
    let previous = (cluster.status.as_ref()).and_then(|s| s.common.secret_readers.as_ref());
    fields.common.secret_readers = readers::plan(
        plan,
        |roll| Step::Secret(SecretStep::RollReader(roll)),
        (&wanted.name, f.connection_secret.as_ref()),
        (f.readers.as_deref(), previous),
        (&f.now, f.intervals.busy),
    );
    Ok(None)
}

/// The status to write once the connection Secret is planned: Ready only when it holds the
/// cluster (`pending`: why not).
pub(super) fn status_with_secret(
    fields: DBClusterStatus,
    available: bool,
    synced: crate::managed::plan::ConditionPlan,
    pending: Option<String>,
) -> crate::managed::plan::KindStatus<DBClusterStatus> {
    let mut status = super::status_plan(fields, available, synced, false);
    status.ready = crate::managed::conditions::ready_with_secret(status.ready, pending);
    status
}

/// A Secret of that name is someone else's: reported, and not Ready (it does not hold this
/// cluster).
pub(super) fn conflict(plan: Plan, f: &Facts, message: &str) -> Plan {
    let mut plan = super::refuse(
        plan,
        f,
        "ConnectionSecretConflict",
        message,
        "SecretConflict",
    );
    if let Some(status) = plan.status.as_mut() {
        let ready = status.ready.clone();
        status.ready = crate::managed::conditions::ready_with_secret(ready, Some(message.into()));
    }
    plan
}
