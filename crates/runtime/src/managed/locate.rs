//! Where every kind's object is placed, written once: the pure rules of `managed::placement`
//! over the object's namespace (labels, annotations), the AWSAccount it names and its status's
//! record, then the location (`locations.rs`) it is reached in. And the wake-up every placed kind
//! shares: an AWSAccount's change reconciles the objects that use it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;
use kube::runtime::reflector::ObjectRef;
use std::sync::Arc;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use kube::ResourceExt;
use tracing::{debug, warn};

use super::Kind;
use super::placement::{self, Placed, Placement};
use crate::context::Context;
use crate::error::{Error, kube_err};
use crate::locations::{ACK_ROLE_MAP, Location};

/// Where a kind's object is reached, and where its resource is recorded as living.
pub struct Located {
    pub location: Arc<Location>,
    pub placement: Placement,
    /// With `--shards`: the shard of the pair, which this replica must lead to act.
    pub shard: Option<usize>,
}

impl Located {
    /// Whether this replica may act there now (it leads the pair's shard, renewed in time).
    pub fn may_act(&self, ctx: &Context) -> bool {
        match (&ctx.shards, self.shard) {
            (Some(shards), Some(shard)) => shards.owns(shard),
            _ => true,
        }
    }
}

/// The shard key of the AWSAccount objects themselves (their status and deletion).
pub const ACCOUNTS_SHARD_KEY: &str = "awsaccounts";

/// The shard of a target this replica must lead (None without `--shards`), or
/// [`Error::Elsewhere`] when another replica leads it: nothing is read or done here.
pub fn shard(ctx: &Context, key: &str) -> Result<Option<usize>, Error> {
    let Some(shards) = &ctx.shards else {
        return Ok(None);
    };
    let shard = crate::shards::shard_of(key, shards.count());
    match shards.owns(shard) {
        true => Ok(Some(shard)),
        false => Err(Error::Elsewhere),
    }
}

/// Places `obj`: decides its target from its spec, its namespace and the AWSAccount it names
/// ([`placement::decide`]), reaches the location, and checks it against the status's record
/// ([`placement::check`]). A refusal is [`Error::Placement`]: reported, retried with backoff, and
/// no AWS call made.
pub async fn locate<K: Placed>(obj: &K, ctx: &Context) -> Result<Located, Error> {
    let directory = &ctx.directory;
    directory_ready(directory).await?;
    let namespace = obj.meta().namespace.clone().unwrap_or_default();
    let ns = directory.namespaces.get(&ObjectRef::new(&namespace));
    let ns_meta = ns.as_ref().map(|n| n.metadata.clone()).unwrap_or_default();
    let mut facts = placement::Facts {
        namespace: &namespace,
        namespace_labels: ns_meta.labels.unwrap_or_default(),
        namespace_annotations: ns_meta.annotations.unwrap_or_default(),
        annotations: obj.meta().annotations.clone().unwrap_or_default(),
        account_ref: obj.account_ref(),
        region: obj.region(),
        account: None,
        ack: None,
        own_region: ctx.locations.own_region(),
    };
    let account = (facts.account_name()).and_then(|name| directory.accounts.get(name));
    facts.account = account.as_ref();
    if directory.ack {
        facts.ack = Some(placement::Ack {
            role_map: ack_role_map(ctx).await?,
        });
    }
    let target = placement::decide(&facts).map_err(Error::from)?;
    let shard = shard(ctx, &target.shard_key())?;
    debug!(key = %target.shard_key(), "placing");
    let location = ctx.locations.get(&target, &ctx.own_secrets(), true).await?;
    let identity = (location.identity().await)
        .map_err(|source| Error::account(location.account.as_deref(), source))?;
    let now = Placement {
        account: location.account.clone(),
        account_id: identity.account,
        region: identity.region,
    };
    let (recorded, created) = (obj.placement(), obj.created());
    placement::check(recorded, created, &now, &target).map_err(Error::from)?;
    debug!(account = %now.account_id, region = %now.region, "placed");
    Ok(Located {
        shard,
        placement: placement::record(recorded, created, &now),
        location,
    })
}

/// Waits, a bounded time, for the first lists of the namespaces and AWSAccounts: placement is
/// never decided on a directory that has not been read.
async fn directory_ready(directory: &crate::locations::Directory) -> Result<(), Error> {
    let ready = async {
        let namespaces = directory.namespaces.wait_until_ready().await.is_ok();
        namespaces && directory.accounts.ready().await
    };
    match tokio::time::timeout(std::time::Duration::from_secs(30), ready).await {
        Ok(true) => Ok(()),
        _ => Err(Error::Placement {
            reason: "DirectoryUnavailable",
            message: "the operator has not listed the namespaces and AWSAccounts yet (can it list and watch \
                      them? see the chart's RBAC); waiting"
                .into(),
        }),
    }
}

/// ACK's role map in the operator's namespace (empty when there is none).
async fn ack_role_map(ctx: &Context) -> Result<BTreeMap<String, String>, Error> {
    let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.own_namespace);
    let map = (api.get_opt(ACK_ROLE_MAP).await).map_err(kube_err("get ack-role-account-map"))?;
    if map.is_none() {
        warn!(
            "--ack-compat is on and there is no {ACK_ROLE_MAP} ConfigMap in the operator's namespace"
        );
    }
    Ok(map.and_then(|m| m.data).unwrap_or_default())
}

/// A placed kind's controller, woken when an AWSAccount changes (granted, its role mended): the
/// objects of its cache that name it, or live in it, are reconciled again at once.
pub fn woken_by_accounts<K>(
    controller: kube::runtime::Controller<K>,
    ctx: &Context,
) -> kube::runtime::Controller<K>
where
    K: Placed + Kind + Send + Sync + 'static,
{
    let store = controller.store();
    let changed = ctx.directory.accounts.changes().flat_map(move |name| {
        let users: Vec<ObjectRef<K>> = (store.state().into_iter())
            .filter(|obj| uses(&**obj, &name))
            .map(|obj| ObjectRef::from_obj(&*obj))
            .collect();
        futures::stream::iter(users)
    });
    controller.reconcile_on(changed)
}

/// The placed kinds, as each declares itself at start (`Managed::declare`): how the objects of
/// each that use an account are listed, and how their changes are heard. The AWSAccount kind
/// counts an account's users and is woken by them through it, naming none of them.
#[derive(Default)]
pub struct AccountUsers(std::sync::Mutex<Vec<UsersOf>>);

/// The `namespace/name` of the objects that use an account.
type Users = BoxFuture<'static, Result<Vec<String>, Error>>;

/// One placed kind's part in [`AccountUsers`].
struct UsersOf {
    list: fn(kube::Client, String) -> Users,
    changes: fn(&kube::Client) -> BoxStream<'static, Vec<String>>,
}

impl AccountUsers {
    /// Objects of kind `K` can use an account.
    pub fn declare<K: Placed + Kind + Send + Sync + 'static>(&self) {
        crate::lock(&self.0).push(UsersOf {
            list: |client, account| Box::pin(users_of::<K>(client, account)),
            changes: accounts_touched_by::<K>,
        });
    }

    /// The `namespace/name` of every object in the cluster that uses the account of this name
    /// (not only the watched namespaces: another release may manage them, and every release must
    /// count the same), read from the API (fresh: a deletion waits on them), kind after kind.
    pub async fn of(&self, client: &kube::Client, account: &str) -> Result<Vec<String>, Error> {
        let lists: Vec<_> = (crate::lock(&self.0).iter())
            .map(|k| (k.list)(client.clone(), account.to_owned()))
            .collect();
        Ok(futures::future::try_join_all(lists).await?.concat())
    }

    /// The names of the accounts that objects starting or stopping to use them name, as they do.
    pub fn changes(&self, client: &kube::Client) -> BoxStream<'static, String> {
        let streams: Vec<_> = (crate::lock(&self.0).iter())
            .map(|k| (k.changes)(client))
            .collect();
        futures::stream::select_all(streams)
            .flat_map(futures::stream::iter)
            .boxed()
    }
}

/// Whether an object uses the account of this name: names it, or lives in it.
fn uses<K: Placed>(obj: &K, account: &str) -> bool {
    obj.account_ref() == Some(account)
        || (obj.placement()).is_some_and(|p| p.account.as_deref() == Some(account))
}

async fn users_of<K: Placed + Kind>(
    client: kube::Client,
    account: String,
) -> Result<Vec<String>, Error> {
    let list = (super::scoped::<K>(&client, None)
        .list(&Default::default())
        .await)
        .map_err(kube_err("list an account's users"))?;
    Ok((list.items.iter())
        .filter(|o| uses(*o, &account))
        .map(|o| format!("{}/{}", o.namespace().unwrap_or_default(), o.name_any()))
        .collect())
}

/// The accounts each object of kind `K` names or lives in, as the objects change (in the whole
/// cluster: every release counts the same users).
fn accounts_touched_by<K: Placed + Kind + Send + Sync + 'static>(
    client: &kube::Client,
) -> BoxStream<'static, Vec<String>> {
    use kube::runtime::WatchStreamExt;
    let config = kube::runtime::watcher::Config::default().any_semantic();
    kube::runtime::watcher(super::scoped::<K>(client, None), config)
        .default_backoff()
        .touched_objects()
        .filter_map(|obj| async move {
            let obj = obj.ok()?;
            let named = obj.account_ref().map(str::to_owned);
            let lives = (obj.placement()).and_then(|p| p.account.clone());
            let mut names: Vec<String> = named.into_iter().chain(lives).collect();
            names.dedup();
            Some(names)
        })
        .boxed()
}
