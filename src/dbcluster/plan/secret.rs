//! The connection Secret of a DBCluster: the writer and reader endpoints, rendered from what RDS
//! holds and written only when it differs, and only to a Secret this DBCluster controls.

use std::collections::BTreeMap;

use kube::runtime::events::EventType;

use super::{Facts, Plan, Step, secrets_owner_referenced};
use crate::dbcluster::DBClusterStatus;
use crate::dbcluster::observed::ObservedCluster;
use crate::dbinstance::connection::{self, ConnectionInfo};
use crate::dbinstance::plan::{Sensitive, spec as instance_spec};

/// Plans the connection Secret's write when its content differs from what it should be. Only a
/// Secret this DBCluster controls is ever updated; Err: a Secret of that name is someone else's.
pub(super) fn connection_secret(
    f: &Facts,
    plan: &mut Plan,
    fields: &mut DBClusterStatus,
    o: &ObservedCluster,
    password: &Sensitive,
) -> Result<(), String> {
    let cluster = &f.cluster;
    let Some(wanted) = &cluster.spec.connection_secret else {
        return Ok(());
    };
    let (Some(host), Some(port)) = (o.endpoint.as_deref(), o.port) else {
        return Ok(());
    };
    let info = ConnectionInfo {
        host,
        reader_host: Some(o.reader_endpoint.as_deref().unwrap_or(host)),
        port,
        username: o
            .master_username
            .as_deref()
            .unwrap_or(&cluster.spec.master_username),
        password: &password.0,
        dbname: (o.database_name.as_deref())
            .or(cluster.spec.database_name.as_deref())
            .unwrap_or_default(),
        engine: cluster.spec.engine.as_str(),
    };
    let data = connection::render(&info, &wanted.extra_keys).map_err(|e| e.to_string())?;
    let data: BTreeMap<String, Sensitive> =
        data.into_iter().map(|(k, v)| (k, Sensitive(v))).collect();
    let current = f.connection_secret.as_ref();
    if current.is_some_and(|s| !instance_spec::controlled_by(&s.metadata, cluster)) {
        return Err(format!(
            "a Secret named {} exists and is not this DBCluster's; the operator does not write to \
             it: choose another connectionSecret.name, or delete that Secret",
            wanted.name
        ));
    }
    let up_to_date = current.is_some_and(|s| {
        let values = s.data.as_ref();
        (data.iter()).all(|(k, v)| {
            (values.and_then(|d| d.get(k))).is_some_and(|b| b.0 == v.expose().as_bytes())
        })
    });
    let owner_reference = secrets_owner_referenced(cluster);
    if !up_to_date {
        plan.steps.push(Step::WriteConnectionSecret {
            name: wanted.name.clone(),
            data,
            create: current.is_none(),
            owner_reference,
        });
        let note = format!("wrote the connection details to Secret {}", wanted.name);
        plan.event(EventType::Normal, "ConnectionSecretWritten", "Update", note);
    } else if current
        .is_some_and(|s| instance_spec::owner_referenced(&s.metadata, cluster) != owner_reference)
    {
        let name = wanted.name.clone();
        plan.steps.push(Step::SetSecretOwner {
            name,
            owner_reference,
        });
    }
    fields.connection_secret = Some(wanted.name.clone());
    Ok(())
}
