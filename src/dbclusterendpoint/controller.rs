//! The DBClusterEndpoint reconcile: what it reads (the endpoint in RDS; its DBCluster, the member
//! DBInstances it names, the cluster's password and its own connection Secret) and how it acts;
//! the shell around them, the deletion and the tag steps are the group kinds' (`managed::named`).

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::Controller;

use crate::database::password::PasswordFacts;
use crate::dbcluster::DBCluster;
use crate::dbinstance::DBInstance;
use crate::error::{Error, kube_err};
use crate::locations::Location;
use crate::managed::named::{NamedKind, Shared};
use crate::managed::references;

use super::plan::Own;
use super::{
    Cluster, DBClusterEndpoint, DBClusterEndpointStatus, Members, ObservedClusterEndpoint, Reads,
};
use crate::dbclusterendpoint::aws::ClusterEndpointCalls;

impl NamedKind for DBClusterEndpoint {
    type Observed = ObservedClusterEndpoint;
    type Extra = Reads;
    type Own = Own;
    type Status = DBClusterEndpointStatus;
    const LABEL: &'static str = "DBClusterEndpoint";
    const WHAT: &'static str = "cluster endpoint";
    const NAME_FIELD: &'static str = "dbClusterEndpointIdentifier";

    fn connection_write(step: &Own) -> Option<&str> {
        match step {
            Own::Secret(secret) => secret.connection(),
            _ => None,
        }
    }

    async fn observe(
        &self,
        shared: &Shared,
        at: &Location,
    ) -> Result<(Option<ObservedClusterEndpoint>, Reads), Error> {
        let (name, deleting) = (
            self.name_in_rds(),
            self.metadata.deletion_timestamp.is_some(),
        );
        let listed = (at.observer.listing::<ObservedClusterEndpoint>())
            .get(&name, shared.drift_interval)
            .filter(|_| !deleting);
        let observed = match listed {
            Some(found) => Some(found),
            None => at.rds.cluster_endpoint(&name).await?,
        };
        let reads = match deleting {
            true => Reads::default(),
            false => reads(shared, at, self).await?,
        };
        Ok((observed, reads))
    }

    async fn act(&self, shared: &Shared, at: &Location, step: &Own) -> Result<(), Error> {
        if let Own::Secret(secret) = step {
            let namespace = self.namespace().unwrap_or_default();
            let api: Api<Secret> = Api::namespaced(shared.ctx.client.clone(), &namespace);
            return crate::database::secret::act(&api, self, secret).await;
        }
        let _stale =
            (at.observer.listing::<ObservedClusterEndpoint>()).changing(&self.name_in_rds());
        Ok(at.rds.cluster_endpoint_call(step).await?)
    }

    async fn delete(&self, _: &Shared, at: &Location, name: &str) -> Result<(), Error> {
        Ok(at.rds.delete_cluster_endpoint(name).await?)
    }

    /// Its DBCluster turning Ready wakes it (its members are looked at again within the busy
    /// interval while they are not).
    fn watches(
        controller: Controller<Self>,
        shared: &Shared,
        namespace: Option<&str>,
    ) -> Controller<Self> {
        references::wakes_by_reference::<_, DBCluster>(
            controller,
            &shared.ctx,
            namespace,
            |e: &DBClusterEndpoint| Some(e.spec.db_cluster_ref.name.as_str()),
        )
    }

    crate::named_fields!(DBClusterEndpointStatus, db_cluster_endpoint_identifier);
}

/// The DBCluster (Ready), its members named, its password and the endpoint's Secret.
async fn reads(shared: &Shared, at: &Location, e: &DBClusterEndpoint) -> Result<Reads, Error> {
    let client = &shared.ctx.client;
    let namespace = e.namespace().unwrap_or_default();
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &namespace);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace);
    let name = &e.spec.db_cluster_ref.name;
    let found = (clusters.get_opt(name).await).map_err(kube_err("get DBCluster"))?;
    let cluster = match found {
        None => Err(format!("DBCluster {name} does not exist")),
        Some(c) => match c.status.as_ref().filter(|s| references::usable(&c, s)) {
            None => Err(format!("DBCluster {name} is not Ready yet")),
            Some(s) => Ok((c.clone(), s.clone())),
        },
    };
    let (cluster, password) = match cluster {
        Err(why) => (Err(why), None),
        Ok((c, s)) => {
            let read = crate::dbcluster::plan::credentials(&c);
            let password = match crate::database::password::password(&c, at, &secrets, read).await?
            {
                PasswordFacts::Referenced(Ok(p)) => Some(p),
                PasswordFacts::Managed(p) => p,
                _ => None,
            };
            let facts = Cluster {
                identifier: s.db_cluster_identifier.clone().unwrap_or_default(),
                port: s.common.endpoint.as_ref().map_or(0, |e| e.port),
                username: c.spec.master_username.clone().unwrap_or_default(),
                dbname: c.spec.database_name.clone().unwrap_or_default(),
                engine: c.spec.engine.as_str().to_owned(),
                members: s.members.clone(),
            };
            (Ok(facts), password)
        }
    };
    let members = Some(members(shared, &namespace, e).await?);
    let secret = match &e.spec.connection_secret {
        Some(c) => crate::secrets::get(&secrets, &c.name).await?,
        None => None,
    };
    Ok(Reads {
        cluster: Some(cluster),
        members,
        password,
        secret,
    })
}

/// The RDS identifiers of staticMembers and excludedMembers (DBInstances of the namespace, each
/// Ready), or why one cannot be used yet.
async fn members(
    shared: &Shared,
    namespace: &str,
    e: &DBClusterEndpoint,
) -> Result<Result<Members, String>, Error> {
    let client = &shared.ctx.client;
    let mut lists = (Vec::new(), Vec::new());
    for (refs, into) in [
        (&e.spec.static_members, &mut lists.0),
        (&e.spec.excluded_members, &mut lists.1),
    ] {
        for r in refs {
            match references::resolve::<DBInstance>(client, namespace, &r.name).await? {
                Ok(identifier) => into.push(identifier),
                Err(why) => return Ok(Err(why)),
            }
        }
    }
    Ok(Ok(lists))
}
