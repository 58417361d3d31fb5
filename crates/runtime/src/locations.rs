//! Where the operator works: one [`Location`] per (account, region) in use, each with its RDS
//! adapter, its own shared poll ([`Observer`]) and its identity, made when a resource first needs
//! it and cached by the AWSAccount's uid and generation (a spec change makes a new one). The
//! credentials of each are the SDK's to cache and refresh before they expire. Objects are placed
//! in them by `managed::locate`.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, PartialObjectMeta};
use kube::runtime::reflector::Store;
use secrecy::SecretString;
use tokio::sync::{OnceCell, broadcast, watch};
use tracing::{debug, info};

use crate::accounts::{Account, Accounts, AssumeRole, Reach, credentials};
use crate::aws_error::AwsError;
use crate::error::{Error, kube_err};
use crate::feed::Feed;
use crate::http::{Health, Liveness};
use crate::lock;
use crate::metrics::Metrics;
use crate::observer::{Observer, Owner};
use crate::rds::{CallCounter, Rds};
use crate::rds_state::{AwsIdentity, PollIntervals};

/// The name of ACK's role map, in the operator's namespace (`--ack-compat`).
pub const ACK_ROLE_MAP: &str = "ack-role-account-map";

/// One (account, region): its adapter, its shared poll and who the operator is there.
pub struct Location {
    pub rds: Rds,
    pub observer: Arc<Observer>,
    /// The AWSAccount it is reached through (None: the operator's own credentials).
    pub account: Option<String>,
    identity: OnceCell<AwsIdentity>,
    /// Its shared poll, started when a resource first lives there (None: the caller runs it).
    poll: std::sync::OnceLock<tokio::task::AbortHandle>,
    /// Its event feed (an AWSAccount's `eventQueues`), started with the poll.
    feed: Mutex<Option<Feed>>,
    feed_task: std::sync::OnceLock<tokio::task::AbortHandle>,
}

impl Drop for Location {
    fn drop(&mut self) {
        for task in [self.poll.get(), self.feed_task.get()]
            .into_iter()
            .flatten()
        {
            task.abort();
        }
    }
}

impl Location {
    /// The operator's own location, whose poll the caller runs.
    pub fn own(rds: Rds, observer: Arc<Observer>) -> Self {
        Location {
            rds,
            observer,
            account: None,
            identity: OnceCell::new(),
            poll: std::sync::OnceLock::new(),
            feed: Mutex::new(None),
            feed_task: std::sync::OnceLock::new(),
        }
    }

    /// Starts its shared poll once. Each location's poll has its own health, in the metrics
    /// (`rds_operator_location_last_poll_timestamp_seconds`): one account failing never makes the
    /// operator's /healthz fail (a restart would not mend it), nor slows another's.
    fn polled(&self, stopped: &watch::Receiver<bool>, metrics: &Metrics) {
        self.poll.get_or_init(|| {
            let health = Arc::new(Health::new(Liveness {
                poll_interval: self.observer.intervals.settled,
                stale_polls: 3,
                reconcile_limit: std::time::Duration::from_secs(300),
            }));
            let watched = health.clone();
            metrics.location(self.rds.place().clone(), move || {
                watched.runtime().last_poll
            });
            let (observer, stopped) = (self.observer.clone(), stopped.clone());
            tokio::spawn(async move { observer.run(stopped, health).await }).abort_handle()
        });
        if let Some(feed) = lock(&self.feed).take() {
            let stopped = stopped.clone();
            let task = tokio::spawn(async move { feed.run(stopped).await });
            let _ = self.feed_task.set(task.abort_handle());
        }
    }

    /// The account and region (STS GetCallerIdentity once; again after a failure).
    pub async fn identity(&self) -> Result<AwsIdentity, AwsError> {
        (self.identity)
            .get_or_try_init(|| self.rds.identity())
            .await
            .cloned()
    }
}

/// The credentials a resource is reached with.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// The operator's own.
    Own,
    /// An AWSAccount, at this uid and generation (the key its credentials are cached by).
    Account {
        name: String,
        uid: String,
        generation: i64,
        reach: Reach,
    },
    /// ACK's role map: the role for the namespace's owner-account-id, assumed with the
    /// operator's own credentials.
    AckRole {
        account_id: String,
        role_arn: String,
    },
}

/// Where a resource is to be reached: the credentials and the region.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub source: Source,
    pub region: String,
}

impl Source {
    /// The AWSAccount, at its uid and generation.
    pub fn account(account: &Account) -> Source {
        Source::Account {
            name: account.name.clone(),
            uid: account.uid.clone(),
            generation: account.generation,
            reach: account.reach.clone(),
        }
    }
}

impl Target {
    /// The pair's key, which shards spread by (`shards::shard_of`): the account as the object
    /// names it, and the region; known before any AWS call.
    pub fn shard_key(&self) -> String {
        match &self.source {
            Source::Own => format!("own/{}", self.region),
            Source::Account { name, .. } => format!("account:{name}/{}", self.region),
            Source::AckRole { account_id, .. } => format!("ack:{account_id}/{}", self.region),
        }
    }
}

/// What a resource's cache key is: the AWSAccount's uid and generation (or ACK's role, or the
/// operator's own credentials), and the region.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
enum Key {
    Own(String),
    Account {
        uid: String,
        generation: i64,
        region: String,
    },
    Ack {
        role_arn: String,
        region: String,
    },
}

/// Every location in use.
pub struct Locations {
    base: aws_config::SdkConfig,
    own: Arc<Location>,
    own_region: String,
    intervals: PollIntervals,
    calls: Arc<CallCounter>,
    wake: broadcast::Sender<Owner>,
    stopped: watch::Receiver<bool>,
    made: Mutex<HashMap<Key, Arc<OnceCell<Arc<Location>>>>>,
    /// For the event feeds of other accounts: the metrics, and the shared poll's interval while a
    /// feed answers.
    feeds: (Arc<Metrics>, std::time::Duration),
}

impl Locations {
    /// The locations, starting with the operator's own (`own`, whose poll runs already and whose
    /// observer wakes through `wake`).
    pub fn new(
        base: aws_config::SdkConfig,
        own: Arc<Location>,
        (calls, wake): (Arc<CallCounter>, broadcast::Sender<Owner>),
        stopped: watch::Receiver<bool>,
        feeds: (Arc<Metrics>, std::time::Duration),
    ) -> Self {
        Locations {
            own_region: base.region().map(ToString::to_string).unwrap_or_default(),
            intervals: own.observer.intervals,
            base,
            own,
            calls,
            wake,
            stopped,
            made: Mutex::default(),
            feeds,
        }
    }

    pub fn own(&self) -> &Arc<Location> {
        &self.own
    }

    pub fn own_region(&self) -> &str {
        &self.own_region
    }

    pub fn intervals(&self) -> PollIntervals {
        self.intervals
    }

    /// Every API call counted, in every location.
    pub fn calls(&self) -> &Arc<CallCounter> {
        &self.calls
    }

    /// The owners of the instances whose state in RDS changed, in any location.
    pub fn changes(&self) -> impl futures::Stream<Item = Owner> + Send + 'static {
        crate::observer::wakes(self.wake.subscribe())
    }

    /// The location of a target, made on first use: the credentials through its chain of roles,
    /// checked by STS GetCallerIdentity; with `poll`, its shared poll started (a resource lives
    /// there; an AWSAccount's own check starts none). `secrets` is the operator's namespace,
    /// where an AWSAccount's source Secret lives.
    pub async fn get(
        &self,
        target: &Target,
        secrets: &Api<Secret>,
        poll: bool,
    ) -> Result<Arc<Location>, Error> {
        let key = match &target.source {
            Source::Own if target.region == self.own_region => return Ok(self.own.clone()),
            Source::Own => Key::Own(target.region.clone()),
            Source::Account {
                uid, generation, ..
            } => Key::Account {
                uid: uid.clone(),
                generation: *generation,
                region: target.region.clone(),
            },
            Source::AckRole { role_arn, .. } => Key::Ack {
                role_arn: role_arn.clone(),
                region: target.region.clone(),
            },
        };
        let cell = lock(&self.made).entry(key.clone()).or_default().clone();
        let new = !cell.initialized();
        let location = cell
            .get_or_try_init(|| self.make(target, secrets))
            .await?
            .clone();
        if poll {
            location.polled(&self.stopped, &self.feeds.0);
        }
        if let (
            true,
            Key::Account {
                uid, generation, ..
            },
        ) = (new, &key)
        {
            // A new generation of the account makes the older ones stale: their polls stop.
            lock(&self.made).retain(|k, _| {
                !matches!(k, Key::Account { uid: u, generation: g, .. } if u == uid && g != generation)
            });
        }
        Ok(location)
    }

    /// The AWSAccount of this uid is gone: its locations (and their polls) go too.
    pub fn forget(&self, uid: &str) {
        lock(&self.made).retain(|k, _| !matches!(k, Key::Account { uid: u, .. } if u == uid));
    }

    async fn make(&self, target: &Target, secrets: &Api<Secret>) -> Result<Arc<Location>, Error> {
        let (account, source, chain) = match &target.source {
            Source::Own => (None, None, Vec::new()),
            Source::Account { name, reach, .. } => {
                let keys = match &reach.source_secret {
                    Some(secret) => Some(source_keys(secrets, secret, name).await?),
                    None => None,
                };
                (Some(name.clone()), keys, reach.assume_role_chain.clone())
            }
            Source::AckRole { role_arn, .. } => {
                let hop = AssumeRole {
                    role_arn: role_arn.clone(),
                    ..Default::default()
                };
                (None, None, vec![hop])
            }
        };
        let config = credentials::config(&self.base, &target.region, source, &chain, &self.calls);
        let rds = Rds::new(&config, self.calls.clone());
        debug!(region = %target.region, "asking STS who the operator is there");
        let identity =
            (rds.identity().await).map_err(|source| Error::account(account.as_deref(), source))?;
        info!(
            account = %identity.account,
            region = %identity.region,
            "reaching a new AWS account and region"
        );
        let queue = match &target.source {
            Source::Account { reach, .. } => (reach.event_queues.iter())
                .find(|q| q.region == target.region)
                .map(|q| q.queue_url.clone()),
            _ => None,
        };
        let mut observer = Observer::new(rds.clone(), self.intervals, self.own.observer.read)
            .health_every(self.own.observer.health_interval())
            .waking(self.wake.clone());
        if queue.is_some() {
            observer = observer.with_event_feed(self.feeds.1);
        }
        let observer = Arc::new(observer);
        let feed = queue.map(|url| {
            let (calls, place) = (self.calls.clone(), rds.place().clone());
            Feed::new(
                &config,
                url,
                observer.clone(),
                self.feeds.0.clone(),
                (calls, place),
            )
            .without_gauge()
        });
        Ok(Arc::new(Location {
            rds,
            observer,
            account,
            identity: OnceCell::new_with(Some(identity)),
            poll: std::sync::OnceLock::new(),
            feed: Mutex::new(feed),
            feed_task: std::sync::OnceLock::new(),
        }))
    }
}

/// The source credentials of an AWSAccount, from its Secret in the operator's namespace.
async fn source_keys(
    secrets: &Api<Secret>,
    name: &str,
    account: &str,
) -> Result<credentials::SecretKeys, Error> {
    let secret =
        (secrets.get_opt(name).await).map_err(kube_err("get source credentials Secret"))?;
    let data: BTreeMap<String, SecretString> = (secret.and_then(|s| s.data).unwrap_or_default())
        .into_iter()
        .filter_map(|(k, v)| Some((k, SecretString::from(String::from_utf8(v.0).ok()?))))
        .collect();
    credentials::secret_keys(&data).map_err(|why| Error::Placement {
        reason: "SourceCredentialsMissing",
        message: format!(
            "AWSAccount {account}: source credentials Secret {name} in the operator's namespace: {why}"
        ),
    })
}

/// The namespaces and AWSAccounts placement is decided on, as the operator's watches cache them.
#[derive(Clone)]
pub struct Directory {
    pub namespaces: Store<PartialObjectMeta<Namespace>>,
    pub accounts: Arc<dyn Accounts>,
    /// With `--ack-compat`: ACK's annotations and role map are honoured.
    pub ack: bool,
}

impl Directory {
    /// The AWS account IDs of the AWSAccounts granted to the namespace (of the last role of each
    /// chain): where its data may be handed (a snapshot's share, an integration's target).
    pub fn granted_accounts(&self, namespace: &str) -> Vec<String> {
        let ns = self
            .namespaces
            .get(&kube::runtime::reflector::ObjectRef::new(namespace));
        let labels = (ns.and_then(|n| n.metadata.labels.clone())).unwrap_or_default();
        (self.accounts.all().into_iter())
            .filter(|a| a.namespace_selector.selects(namespace, &labels))
            .filter_map(|a| a.account_id().map(str::to_owned))
            .collect()
    }
}

/// The cluster-wide watch of the namespaces (their metadata only) [`Directory`] reads, with the
/// accounts a watch of them serves, until `shutdown`.
pub fn watch_directory(
    client: &kube::Client,
    (accounts, ack): (Arc<dyn Accounts>, bool),
    shutdown: watch::Receiver<bool>,
) -> (Directory, futures::future::BoxFuture<'static, ()>) {
    use futures::StreamExt;
    use kube::runtime::{WatchStreamExt, reflector, watcher};
    let (namespaces, ns_writer) = reflector::store();
    let config = watcher::Config::default().any_semantic();
    // Namespaces by their metadata only: labels and annotations are all placement reads.
    let ns_stream = watcher(
        Api::<PartialObjectMeta<Namespace>>::all(client.clone()),
        config,
    )
    .default_backoff()
    .reflect(ns_writer)
    .for_each(|_| futures::future::ready(()));
    let run = async move {
        let mut shutdown = shutdown;
        tokio::select! {
            _ = ns_stream => {}
            _ = shutdown.wait_for(|s| *s) => {}
        }
    };
    let directory = Directory {
        namespaces,
        accounts,
        ack,
    };
    (directory, Box::pin(run))
}
