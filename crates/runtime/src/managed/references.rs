//! References between kinds: an object names another of its namespace (a DBInstance its subnet
//! group, its parameter group, its DBCluster, its replica source; a DBCluster its groups). What a
//! reference resolves to ([`resolve`]) and the wake-up of the objects that refer to one that
//! changes ([`wakes_by_reference`]) are the referring kind's. The other way, the kind referred to
//! learns who refers to its objects ([`Referrers`]: a deletion waits for them, and their changes
//! wake it) from what the referring kinds declare ([`RefersTo`], `Managed::declare`), so it names
//! none of them.

use kube::api::Api;
use kube::runtime::Controller;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::{self, watcher};
use kube::{Client, ResourceExt};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use std::marker::PhantomData;
use std::sync::{Mutex, OnceLock};

use futures::future::BoxFuture;
use kube::core::NamespaceResourceScope;

use super::{Kind, scoped};
use crate::context::Context;
use crate::error::{Error, kube_err};
use crate::lock;

/// A kind another refers to by name: a group, a DBCluster, a DBInstance (a replica's source).
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
    /// The reasons of a Ready False at which an object may still be referred to: it exists and
    /// RDS has it available, what it waits for is not the referrer's (a DBCluster waiting for a
    /// member to serve). A referrer that needs it Ready itself asks [`ready`].
    const USABLE_WHEN: &'static [&'static str] = &[];
}

/// What a reference to an object of kind `K` resolves to: its RDS name once it is
/// Ready at its current generation (and not being deleted), or why it cannot be used yet.
pub async fn resolve<K: Referable>(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<Result<String, String>, Error> {
    resolve_also::<K>(client, namespace, name, &[]).await
}

/// [`resolve`], taking also an object whose Ready is False, at its current generation, for one
/// of `reasons`: a cluster member's cluster, which stops with its members (Stopped).
pub async fn resolve_also<K: Referable>(
    client: &Client,
    namespace: &str,
    name: &str,
    reasons: &[&str],
) -> Result<Result<String, String>, Error> {
    let resolved = resolve_object::<K>(client, namespace, name, reasons).await?;
    Ok(resolved.map(|(rds_name, _)| rds_name))
}

/// [`resolve_also`], with the object itself (what else of it a decision needs: its engine, say).
pub async fn resolve_object<K: Referable>(
    client: &Client,
    namespace: &str,
    name: &str,
    reasons: &[&str],
) -> Result<Result<(String, K), String>, Error> {
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
    let usable = usable(&obj, &status) || not_ready_for(&obj, &status, reasons);
    Ok(match (usable, K::rds_name(&status)) {
        (true, Some(rds_name)) => Ok((rds_name, obj)),
        _ => Err(format!("{what} {name} is not Ready yet")),
    })
}

/// Whether an object may be referred to: Ready at its current generation, or not Ready for one
/// of the kind's [`Referable::USABLE_WHEN`] reasons, and not being deleted.
pub fn usable<K: Referable>(obj: &K, status: &K::Status) -> bool {
    ready(obj, status) || not_ready_for(obj, status, K::USABLE_WHEN)
}

/// Whether an object is Ready at its current generation, and not being deleted.
pub fn ready<K: Referable>(obj: &K, status: &K::Status) -> bool {
    let generation = obj.meta().generation;
    let ready = (K::conditions(status).iter())
        .any(|c| c.type_ == "Ready" && c.status == "True" && c.observed_generation == generation);
    ready && obj.meta().deletion_timestamp.is_none()
}

/// Whether an object is not Ready for one of `reasons` (Ready False with that reason, at its
/// current generation), and not being deleted.
fn not_ready_for<K: Referable>(obj: &K, status: &K::Status, reasons: &[&str]) -> bool {
    let generation = obj.meta().generation;
    let waiting = (K::conditions(status).iter()).any(|c| {
        c.type_ == "Ready"
            && c.status == "False"
            && reasons.contains(&c.reason.as_str())
            && c.observed_generation == generation
    });
    waiting && obj.meta().deletion_timestamp.is_none()
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

/// The controller of kind `R`, woken by its Secrets, watched by their metadata only (the name and
/// owners are all a wake needs; the operator never holds the data of the cluster's Secrets, only
/// of those a reconcile reads): a Secret it wrote (connection, generated password) wakes its owner,
/// by ownerReference or, under deletionPolicy Retain, by the owner annotation; a Secret it names
/// (`names`: a password rotated, or appearing at last) wakes the objects of its namespace that
/// name it.
pub fn wakes_by_secrets<R>(
    controller: Controller<R>,
    ctx: &Context,
    namespace: Option<&str>,
    names: fn(&R) -> Vec<&str>,
) -> Controller<R>
where
    R: Kind + Send + Sync + 'static,
{
    use k8s_openapi::api::core::v1::Secret;
    use kube::core::PartialObjectMeta;
    use kube::runtime::WatchStreamExt;
    let store: Store<R> = controller.store();
    let secrets = scoped::<PartialObjectMeta<Secret>>(&ctx.client, namespace);
    let wakes = move |secret: PartialObjectMeta<Secret>| {
        let (ns, name) = (secret.namespace(), secret.name_any());
        let owner_uid = (secret.annotations())
            .get(crate::crd::SECRET_OWNER_ANNOTATION)
            .cloned();
        let owners: Vec<String> = (secret.owner_references().iter())
            .filter(|o| o.kind == R::kind(&()))
            .map(|o| o.uid.clone())
            .chain(owner_uid)
            .collect();
        (store.state().into_iter())
            .filter(|r| {
                r.namespace() == ns
                    && (names(r).contains(&name.as_str())
                        || r.uid().is_some_and(|u| owners.contains(&u)))
            })
            .map(|r| ObjectRef::from_obj(&*r))
            .collect::<Vec<_>>()
    };
    controller.watches_stream(
        watcher(secrets, watcher::Config::default().any_semantic()).touched_objects(),
        wakes,
    )
}

/// A kind whose objects refer to objects of kind `K` of their namespace: a DBInstance to its subnet
/// group, its parameter group and its DBCluster. The referring kind implements it, and declares it
/// at start (`Managed::declare`) in the context's [`Referrers`] of `K`.
pub trait RefersTo<K>:
    Kind + kube::Resource<Scope = NamespaceResourceScope> + Send + Sync + 'static
{
    /// Whether this object refers to `target`.
    fn refers_to(&self, target: &K) -> bool;
}

/// Who refers to objects of kind `K`, as the referring kinds declared (kept in the context:
/// `Context::shared`).
pub struct Referrers<K: Kind + 'static>(Mutex<Vec<Referrer<K>>>);

/// The kind and name of each object found referring to one.
type Found = Vec<(String, String)>;

/// One referring kind: how its objects that refer to an object are listed, and how their changes
/// wake the controller of `K`.
struct Referrer<K: Kind + 'static> {
    list: fn(Client, K) -> BoxFuture<'static, Result<Found, Error>>,
    wake: fn(Controller<K>, &Client, Option<&str>) -> Controller<K>,
}

impl<K: Kind + 'static> Default for Referrers<K> {
    fn default() -> Self {
        Referrers(Mutex::default())
    }
}

impl<K> Referrers<K>
where
    K: Kind + kube::Resource<Scope = NamespaceResourceScope> + Send + Sync + 'static,
{
    /// Kind `R` refers to objects of kind `K`.
    pub fn declare<R: RefersTo<K>>(&self) {
        lock(&self.0).push(Referrer {
            list: |client, target| Box::pin(list_referrers::<R, K>(client, target)),
            wake: wake_on_referrers::<R, K>,
        });
    }

    /// The kind and name of every object of `obj`'s namespace that refers to it, read from the
    /// API (fresh: a deletion waits on them).
    pub async fn of(&self, client: &Client, obj: &K) -> Result<Found, Error> {
        let lists: Vec<_> = (lock(&self.0).iter())
            .map(|r| (r.list)(client.clone(), obj.clone()))
            .collect();
        Ok(futures::future::try_join_all(lists).await?.concat())
    }

    /// The controller of `K`, woken by an object that starts or stops referring to one of its
    /// objects.
    pub fn wake(
        &self,
        controller: Controller<K>,
        client: &Client,
        namespace: Option<&str>,
    ) -> Controller<K> {
        let wakes: Vec<_> = lock(&self.0).iter().map(|r| r.wake).collect();
        (wakes.into_iter()).fold(controller, |c, wake| wake(c, client, namespace))
    }
}

async fn list_referrers<R: RefersTo<K>, K: Kind>(
    client: Client,
    target: K,
) -> Result<Found, Error> {
    let namespace = target.namespace().unwrap_or_default();
    let api: Api<R> = Api::namespaced(client, &namespace);
    let list = (api.list(&Default::default()).await).map_err(kube_err("list referrers"))?;
    let kind = R::kind(&()).into_owned();
    Ok((list.items.into_iter())
        .filter(|r| r.refers_to(&target))
        .map(|r| (kind.clone(), r.name_any()))
        .collect())
}

fn wake_on_referrers<R: RefersTo<K>, K>(
    controller: Controller<K>,
    client: &Client,
    namespace: Option<&str>,
) -> Controller<K>
where
    K: Kind + kube::Resource<Scope = NamespaceResourceScope> + Send + Sync + 'static,
{
    let store: Store<K> = controller.store();
    controller.watches(
        scoped::<R>(client, namespace),
        watcher::Config::default().any_semantic(),
        move |referrer: R| {
            (store.state().into_iter())
                .filter(|k| referrer.refers_to(k))
                .map(|k| ObjectRef::from_obj(&*k))
                .collect::<Vec<_>>()
        },
    )
}

/// How a name of the namespace resolves (`resolve`), for a kind that cannot name the kind referred
/// to (a DBSnapshot's source DBInstance: the DBInstance kind names DBSnapshot, not the other way).
type ResolveFn =
    fn(Client, String, String) -> BoxFuture<'static, Result<Result<String, String>, Error>>;

/// A reference to a kind the referring kind cannot name: the kind referred to registers at start
/// (`Managed::declare`) how its names resolve, under a marker type `T` the referring kind defines
/// (kept in the context: `Context::shared`).
pub struct Resolver<T> {
    resolve: OnceLock<ResolveFn>,
    marker: PhantomData<fn() -> T>,
}

impl<T> Default for Resolver<T> {
    fn default() -> Self {
        Resolver {
            resolve: OnceLock::new(),
            marker: PhantomData,
        }
    }
}

impl<T> Resolver<T> {
    /// Names under `T` are objects of kind `K`.
    pub fn register<K: Referable>(&self) {
        let _ = self.resolve.set(|client, namespace, name| {
            Box::pin(async move { resolve::<K>(&client, &namespace, &name).await })
        });
    }

    /// What `name` in `namespace` resolves to ([`resolve`]); with no kind registered, why not.
    pub async fn resolve(
        &self,
        client: &Client,
        namespace: &str,
        name: &str,
    ) -> Result<Result<String, String>, Error> {
        match self.resolve.get() {
            Some(resolve) => resolve(client.clone(), namespace.into(), name.into()).await,
            None => Ok(Err(format!("nothing here resolves {name}"))),
        }
    }
}
