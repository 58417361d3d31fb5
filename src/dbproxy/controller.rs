//! The DBProxy reconcile: what it reads (the proxy with its targets and pool; its target
//! DBInstances or DBCluster, the first one's credentials, the operator's Secrets Manager secret
//! of the proxy, its connection Secret) and how it acts; the shell around them, the deletion and
//! the tag steps are the group kinds' (`managed::named`).

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::Controller;

use crate::database::password::{PasswordFacts, credentials_of};
use crate::dbcluster::DBCluster;
use crate::dbinstance::DBInstance;
use crate::error::{Error, kube_err};
use crate::locations::Location;
use crate::managed::named::{NamedKind, Shared};
use crate::managed::references;

use super::plan::Own;
use super::{Credentials, DBProxy, DBProxyStatus, ObservedProxy, Reads, Resolved};
use crate::dbproxy::aws::ProxyCalls;

impl NamedKind for DBProxy {
    type Observed = ObservedProxy;
    type Extra = Reads;
    type Own = Own;
    type Status = DBProxyStatus;
    const LABEL: &'static str = "DBProxy";
    const WHAT: &'static str = "DB proxy";
    const NAME_FIELD: &'static str = "dbProxyName";

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
    ) -> Result<(Option<ObservedProxy>, Reads), Error> {
        let observed = at.rds.proxy(&self.name_in_rds()).await?;
        let reads = match self.metadata.deletion_timestamp.is_some() {
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
        Ok(at.rds.proxy_call(step).await?)
    }

    /// The proxy, then the operator's secret of it (none when the spec names its own).
    async fn delete(&self, _: &Shared, at: &Location, name: &str) -> Result<(), Error> {
        let secret = self.auth_secret_name();
        let ours = self
            .spec
            .auth
            .secret_arn
            .is_none()
            .then_some(secret.as_str());
        Ok(at.rds.delete_proxy(name, ours).await?)
    }

    /// Its target DBInstances and DBCluster turning Ready (or changing: a rotated password
    /// rewrites the Secret the target reads) wake it.
    fn watches(
        controller: Controller<Self>,
        shared: &Shared,
        namespace: Option<&str>,
    ) -> Controller<Self> {
        let controller = references::wakes_by_reference::<_, DBInstance>(
            controller,
            &shared.ctx,
            namespace,
            |p: &DBProxy| first_ref(p, false),
        );
        references::wakes_by_reference::<_, DBCluster>(
            controller,
            &shared.ctx,
            namespace,
            |p: &DBProxy| first_ref(p, true),
        )
    }

    fn records_after_failure(fields: &mut DBProxyStatus, previous: &DBProxyStatus) {
        crate::managed::named::keep_applied(
            &mut fields.applied_endpoints,
            &previous.applied_endpoints,
        );
    }

    crate::named_fields!(DBProxyStatus, db_proxy_name);
}

/// The first target of a kind (instance or cluster), by name.
fn first_ref(p: &DBProxy, cluster: bool) -> Option<&str> {
    (p.spec.targets.iter())
        .find_map(|t| match cluster {
            true => t.db_cluster_ref.as_ref(),
            false => t.db_instance_ref.as_ref(),
        })
        .map(|r| r.name.as_str())
}

/// The targets (each Ready), the first one's credentials, the operator's secret of the proxy and
/// the connection Secret.
async fn reads(shared: &Shared, at: &Location, p: &DBProxy) -> Result<Reads, Error> {
    let client = &shared.ctx.client;
    let namespace = p.namespace().unwrap_or_default();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace);
    let mut targets = Vec::new();
    for t in &p.spec.targets {
        let (name, cluster) = match (&t.db_instance_ref, &t.db_cluster_ref) {
            (Some(r), _) => (&r.name, false),
            (None, Some(r)) => (&r.name, true),
            (None, None) => continue,
        };
        // With its engine: one of another family is refused before RegisterDBProxyTargets.
        let resolved = match cluster {
            true => references::resolve_object::<DBCluster>(client, &namespace, name, &[])
                .await?
                .map(|(id, c)| (id, c.spec.engine.as_str().to_owned())),
            false => references::resolve_object::<DBInstance>(client, &namespace, name, &[])
                .await?
                .map(|(id, db)| (id, db.spec.engine.clone())),
        };
        match resolved {
            Ok((identifier, engine)) => targets.push(Resolved {
                identifier,
                cluster,
                engine,
            }),
            Err(why) => {
                return Ok(Reads {
                    targets: Some(Err(why)),
                    ..Default::default()
                });
            }
        }
    }
    let credentials = credentials(client, at, &secrets, p).await?;
    let auth_secret = match (&credentials, &p.spec.auth.secret_arn) {
        (Some(c), None) => match &c.password {
            Some(password) => {
                let name = p.auth_secret_name();
                at.rds.proxy_secret(&name, &c.username, password).await?
            }
            None => None,
        },
        _ => None,
    };
    let secret = match &p.spec.connection_secret {
        Some(c) => crate::secrets::get(&secrets, &c.name).await?,
        None => None,
    };
    let mut endpoint_secrets = std::collections::BTreeMap::new();
    for e in &p.spec.endpoints {
        if let Some(c) = &e.connection_secret
            && let Some(found) = crate::secrets::get(&secrets, &c.name).await?
        {
            endpoint_secrets.insert(e.name.clone(), found);
        }
    }
    Ok(Reads {
        targets: Some(Ok(targets)),
        credentials,
        auth_secret,
        secret,
        endpoint_secrets,
        role_grants: shared.ctx.grants.roles.clone(),
    })
}

/// The first target's username, password, database name, port and engine.
async fn credentials(
    client: &kube::Client,
    at: &Location,
    secrets: &Api<Secret>,
    p: &DBProxy,
) -> Result<Option<Credentials>, Error> {
    let namespace = p.namespace().unwrap_or_default();
    let Some(first) = p.spec.targets.first() else {
        return Ok(None);
    };
    let (read, mut credentials) = match (&first.db_instance_ref, &first.db_cluster_ref) {
        (Some(r), _) => {
            let api: Api<DBInstance> = Api::namespaced(client.clone(), &namespace);
            let found = (api.get_opt(&r.name).await).map_err(kube_err("get DBInstance"))?;
            let Some(db) = found else { return Ok(None) };
            let port =
                (db.status.as_ref()).and_then(|s| s.common.endpoint.as_ref().map(|e| e.port));
            let c = Credentials {
                username: db.spec.master_username.clone().unwrap_or_default(),
                dbname: db.spec.db_name.clone().unwrap_or_default(),
                port: port.unwrap_or_default(),
                engine: db.spec.engine.clone(),
                password: None,
            };
            (credentials_of(&db.spec.password, &db.name_any()), c)
        }
        (None, Some(r)) => {
            let api: Api<DBCluster> = Api::namespaced(client.clone(), &namespace);
            let found = (api.get_opt(&r.name).await).map_err(kube_err("get DBCluster"))?;
            let Some(c) = found else { return Ok(None) };
            let port = (c.status.as_ref()).and_then(|s| s.common.endpoint.as_ref().map(|e| e.port));
            let credentials = Credentials {
                username: c.spec.master_username.clone().unwrap_or_default(),
                dbname: c.spec.database_name.clone().unwrap_or_default(),
                port: port.unwrap_or_default(),
                engine: c.spec.engine.as_str().to_owned(),
                password: None,
            };
            (crate::dbcluster::plan::credentials(&c), credentials)
        }
        (None, None) => return Ok(None),
    };
    credentials.password = match crate::database::password::password(p, at, secrets, read).await? {
        PasswordFacts::Referenced(Ok(password)) => Some(password),
        PasswordFacts::Managed(password) => password,
        _ => None,
    };
    Ok(Some(credentials))
}
