//! References between kinds: a DBInstance names a group of its namespace (`dbSubnetGroupRef`,
//! `dbParameterGroupRef`) or the DBCluster it is a member of (`dbClusterRef`). What a reference
//! resolves to, who refers to an object, and the wake-up of the DBInstances that refer to one
//! that changes (turns Ready). The other way (a DBInstance that starts or stops referring to a
//! group wakes it) is the group's, in `groups.rs`.

use kube::api::Api;
use kube::runtime::Controller;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use super::groups::Group;
use super::{Kind, scoped};
use crate::context::Context;
use crate::dbinstance::DBInstance;
use crate::error::{Error, kube_err};
use crate::managed::crd::LocalRef;

/// A kind a DBInstance refers to by name: a group, or a DBCluster.
pub trait Referable:
    Kind + kube::Resource<Scope = kube::core::NamespaceResourceScope> + Send + Sync + 'static
{
    type Status: Clone + Default;
    /// The kind in messages.
    const LABEL: &'static str;
    fn status(&self) -> Option<&Self::Status>;
    fn conditions(status: &Self::Status) -> &[Condition];
    /// The name in RDS the status reports.
    fn rds_name(status: &Self::Status) -> Option<String>;
    /// The reference to an object of this kind a DBInstance holds, if any.
    fn referred_by(db: &DBInstance) -> Option<&LocalRef>;
}

impl<K: Group> Referable for K {
    type Status = K::Status;
    const LABEL: &'static str = K::LABEL;
    fn status(&self) -> Option<&K::Status> {
        Group::status(self)
    }
    fn conditions(status: &K::Status) -> &[Condition] {
        <K as Group>::conditions(status)
    }
    fn rds_name(status: &K::Status) -> Option<String> {
        <K as Group>::rds_name(status)
    }
    fn referred_by(db: &DBInstance) -> Option<&LocalRef> {
        <K as Group>::referred_by(db)
    }
}

/// What a DBInstance's reference to an object of kind `K` resolves to: its RDS name once it is
/// Ready at its current generation (and not being deleted), or why it cannot be used yet.
pub async fn resolve<K: Referable>(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<Result<String, String>, Error> {
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    let what = K::LABEL;
    let Some(obj) = api
        .get_opt(name)
        .await
        .map_err(kube_err("get a referenced object"))?
    else {
        return Ok(Err(format!("{what} {name} does not exist")));
    };
    let status = Referable::status(&obj).cloned().unwrap_or_default();
    let generation = obj.meta().generation;
    let ready = (K::conditions(&status).iter())
        .any(|c| c.type_ == "Ready" && c.status == "True" && c.observed_generation == generation);
    Ok(match (ready, K::rds_name(&status)) {
        (true, Some(rds_name)) if obj.meta().deletion_timestamp.is_none() => Ok(rds_name),
        _ => Err(format!("{what} {name} is not Ready yet")),
    })
}

/// The DBInstance controller, woken by a change of a group of kind `K` (it turning Ready): the
/// DBInstances of its namespace whose reference names it.
pub fn wakes_referrers<K: Referable>(
    controller: Controller<DBInstance>,
    ctx: &Context,
    namespace: Option<&str>,
) -> Controller<DBInstance> {
    let refers: fn(&DBInstance) -> Option<&str> = |db| K::referred_by(db).map(|r| r.name.as_str());
    wakes_by_reference::<DBInstance, K>(controller, ctx, namespace, refers)
}

/// The controller of kind `R`, woken by a change of an object of kind `K` (it turning Ready): the
/// objects of its namespace whose reference (`refers`: the name it gives) names it.
pub fn wakes_by_reference<R, K>(
    controller: Controller<R>,
    ctx: &Context,
    namespace: Option<&str>,
    refers: fn(&R) -> Option<&str>,
) -> Controller<R>
where
    R: Kind + Send + Sync + 'static,
    K: Referable,
{
    let store: Store<R> = controller.store();
    controller.watches(
        scoped::<K>(&ctx.client, namespace),
        watcher::Config::default().any_semantic(),
        move |object: K| {
            let (ns, name) = (object.namespace(), object.name_any());
            (store.state().into_iter())
                .filter(|r| r.namespace() == ns && refers(r) == Some(name.as_str()))
                .map(|r| ObjectRef::from_obj(&*r))
                .collect::<Vec<_>>()
        },
    )
}
