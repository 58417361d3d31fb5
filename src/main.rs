use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use rds_operator::budget::ReadBudget;
use rds_operator::context::Grants;
use rds_operator::context::{Context, Parts};
use rds_operator::duration::parse_duration;
use rds_operator::feed::Feed;
use rds_operator::http::{self, Health, Liveness};
use rds_operator::leader::LeaderElection;
use rds_operator::locations::{Location, Locations};
use rds_operator::metrics::Metrics;
use rds_operator::observer::Observer;
use rds_operator::rds::CallCounter;
use rds_operator::rds::Rds;
use rds_operator::rds_state::PollIntervals;
use rds_operator::shards::Shards;
use rds_operator::telemetry::{self, LogFormat};
use tokio::sync::watch;
use tracing::{error, info};

/// Kubernetes operator for AWS RDS DB instances.
#[derive(Parser)]
#[command(version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run the controller (the default).
    Run(Box<RunArgs>),
    /// Print a kind's CustomResourceDefinition as YAML (DBInstance unless told), or with
    /// `--out DIR` write every kind's to DIR/<kind>.yaml.
    Crd {
        #[arg(default_value = "dbinstance")]
        kind: String,
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Write the OLM bundle (manifests/ and metadata/) into OUT, from every kind's CRD, the chart's
    /// rendering in deploy/ and the examples.
    OlmBundle {
        #[arg(long, default_value = "bundle")]
        out: std::path::PathBuf,
    },
    /// Write the chart's Artifact Hub annotations (every kind's CRD, an example of each from the
    /// examples folder, links, license, capability level) into its Chart.yaml.
    ChartAnnotations {
        #[arg(long, default_value = "helm/rds-operator/Chart.yaml")]
        chart: std::path::PathBuf,
        #[arg(long, default_value = "deploy/examples")]
        examples: std::path::PathBuf,
    },
}

#[derive(clap::Args, Clone)]
struct RunArgs {
    /// Watch only these namespaces (repeat the flag or separate with commas; default: all).
    #[arg(long = "namespace", env = "WATCH_NAMESPACES", value_delimiter = ',')]
    namespaces: Vec<String>,
    /// The drift interval: how often to compare a settled (e.g. available) instance with its spec.
    /// A DBInstance's spec.driftInterval overrides it.
    #[arg(long, alias = "poll-interval", env = "DRIFT_INTERVAL", default_value = "60s", value_parser = parse_duration)]
    drift_interval: Duration,
    /// How often to read RDS's metrics and the databases' alarms from CloudWatch for
    /// status.health (docs/health.md): one GetMetricData per 500 figures per account and region.
    /// RDS publishes its metrics once a minute; 0s reads none.
    #[arg(long, env = "HEALTH_INTERVAL", default_value = "60s", value_parser = parse_duration)]
    health_interval: Duration,
    /// How often to look at an instance RDS is busy with (creating, modifying, deleting...).
    #[arg(long, env = "BUSY_POLL_INTERVAL", default_value = "5s", value_parser = parse_duration)]
    busy_poll_interval: Duration,
    /// The SQS queue EventBridge sends RDS events to (docs/events.md): drift is found within
    /// seconds, and the shared poll becomes a safety net.
    #[arg(long, env = "EVENTS_QUEUE_URL")]
    events_queue_url: Option<String>,
    /// With --events-queue-url: how often the shared poll still runs while the queue answers
    /// (default: ten drift intervals).
    #[arg(long, env = "SAFETY_NET_INTERVAL", value_parser = parse_duration)]
    safety_net_interval: Option<Duration>,
    /// DBInstances reconciled at once.
    #[arg(long, env = "RECONCILE_CONCURRENCY", default_value_t = 8)]
    concurrency: u16,
    /// RDS endpoint (moto, LocalStack); by default the SDK's (AWS_ENDPOINT_URL or AWS itself).
    #[arg(long, env = "AWS_ENDPOINT_URL")]
    aws_endpoint_url: Option<String>,
    /// Where to serve /metrics, /healthz and /readyz.
    #[arg(long, env = "METRICS_ADDR", default_value = "0.0.0.0:8080")]
    metrics_addr: SocketAddr,
    /// Elect a leader among replicas through a Lease, so exactly one reconciles.
    #[arg(long, env = "LEADER_ELECT", default_value_t = false)]
    leader_elect: bool,
    /// The operator's own namespace (POD_NAMESPACE): where its leader election Lease and hash key
    /// Secret live.
    #[arg(long, env = "POD_NAMESPACE", default_value = "default")]
    leader_election_namespace: String,
    /// Name of the leader election Lease: one per release, so two releases in one namespace do not
    /// share a leader.
    #[arg(
        long,
        env = "LEADER_ELECTION_LEASE_NAME",
        default_value = "rds-operator-leader"
    )]
    leader_election_lease_name: String,
    /// With --leader-elect: spread the (account, region) pairs over this many shards, each led
    /// through a Lease of its own, so every replica leads a share of them at once (1: one leader
    /// for everything).
    #[arg(long, env = "SHARDS", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    shards: u16,
    /// How long a leader's lease lasts without renewal before another replica takes over.
    #[arg(long, env = "LEADER_ELECTION_LEASE_DURATION", default_value = "15s", value_parser = parse_duration)]
    leader_election_lease_duration: Duration,
    /// How long one attempt of an AWS call may take (connect, send, answer) before it is retried.
    #[arg(long, env = "AWS_ATTEMPT_TIMEOUT", default_value = "20s", value_parser = parse_duration)]
    aws_attempt_timeout: Duration,
    /// How long an AWS call may take with its retries before it fails.
    #[arg(long, env = "AWS_OPERATION_TIMEOUT", default_value = "60s", value_parser = parse_duration)]
    aws_operation_timeout: Duration,
    /// /healthz fails when this many drift intervals pass without a successful RDS poll.
    #[arg(long, env = "UNHEALTHY_AFTER_POLLS", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    unhealthy_after_polls: u32,
    /// /healthz fails when one reconcile runs longer than this.
    #[arg(long, env = "RECONCILE_TIMEOUT", default_value = "5m", value_parser = parse_duration)]
    reconcile_timeout: Duration,
    /// The Secret, in the operator's own namespace (POD_NAMESPACE), holding the key of the password
    /// hashes in DBInstance status; created when absent.
    #[arg(long, env = "HASH_KEY_SECRET", default_value = "rds-operator-hash-key")]
    hash_key_secret: String,
    /// A PEM file of the CA certificates that sign the database servers' certificates (for RDS:
    /// its global bundle, global-bundle.pem). Each connection Secret then carries it as `ca.crt`
    /// (and `{{ caBundle }}` for templates), with `sslmode` set to verify the server, and a
    /// PostgreSQL `uri` with `sslmode=verify-full`. Default: none, and no such keys.
    #[arg(long, env = "CA_BUNDLE")]
    ca_bundle: Option<std::path::PathBuf>,
    /// How old a DBUser's IAM authentication token grows before the operator writes a new one
    /// into its connection Secret: tokens are valid 15 minutes, so a Pod reading the Secret
    /// through a volume finds a valid one while this is well under 15m (its kubelet can take a
    /// minute or more to update the volume). Between 10s and 14m.
    #[arg(long, env = "IAM_TOKEN_REFRESH", default_value = "10m", value_parser = parse_duration)]
    iam_token_refresh: Duration,
    /// Roll the readers of a connection Secret when its data changes: the Deployments,
    /// StatefulSets and DaemonSets of its namespace that read it get a pod template annotation
    /// with its version, so Kubernetes rolls them. Needs list and patch on them (the chart's
    /// rollSecretReaders). Default: off.
    #[arg(long, env = "ROLL_SECRET_READERS", default_value_t = false)]
    roll_secret_readers: bool,
    /// With --roll-secret-readers: the namespaces whose readers are rolled (comma-separated), the
    /// ones the chart grants list and patch on workloads in (rollSecretReadersNamespaces).
    /// Default: every namespace watched (the chart's namespaced Roles grant them there).
    #[arg(long, env = "ROLL_SECRET_READERS_NAMESPACES", value_delimiter = ',')]
    roll_secret_readers_namespaces: Vec<String>,
    /// Namespaces whose DBInstances may observe or adopt any RDS instance no DBInstance owns,
    /// without its rds.operator.rs/adoptable-by tag (comma-separated; `*`: every namespace, for a
    /// cluster of one team). Default: none.
    #[arg(long, env = "GRANT_ADOPTION", value_delimiter = ',')]
    grant_adoption: Vec<String>,
    /// Namespaces whose DBInstances may restore from any snapshot or instance of the account,
    /// without its rds.operator.rs/restorable-by tag (comma-separated; `*`: every namespace).
    /// Default: none; a namespace always may restore its own.
    #[arg(long, env = "GRANT_RESTORE", value_delimiter = ',')]
    grant_restore: Vec<String>,
    /// AWS account IDs any namespace's DBSnapshots may be shared with (spec.sharedWith), besides
    /// the accounts of the AWSAccounts granted to the namespace (comma-separated; `*`: any
    /// account). Default: none.
    #[arg(long, env = "GRANT_SHARE_TO", value_delimiter = ',')]
    grant_share_to: Vec<String>,
    /// Namespaces whose unencrypted DBSnapshots may be made public (sharedWith: [all])
    /// (comma-separated; `*`: every namespace). Default: none: a public snapshot is anyone's data.
    #[arg(long, env = "GRANT_PUBLIC_SNAPSHOTS", value_delimiter = ',')]
    grant_public_snapshots: Vec<String>,
    /// Namespaces that may name any IAM role for RDS to act as (a restore from S3, a snapshot
    /// export), not only those under the IAM path /rds-operator/<namespace>/ (comma-separated;
    /// `*`: every namespace). Default: none: a role reaches whatever its policy allows.
    #[arg(long, env = "GRANT_ROLES", value_delimiter = ',')]
    grant_roles: Vec<String>,
    /// Direct RDS reads (DescribeDBInstances of one instance) the DBInstances of one namespace
    /// may make each minute; past it they use the shared poll's view, or wait. 0: no bound.
    #[arg(long, env = "NAMESPACE_READ_BUDGET", default_value_t = 600)]
    namespace_read_budget: u32,
    /// Honour ACK's multi-account settings: a namespace's services.k8s.aws/owner-account-id
    /// (mapped to a role by the ack-role-account-map ConfigMap in the operator's namespace) and
    /// services.k8s.aws/default-region, and a resource's services.k8s.aws/region.
    #[arg(long, env = "ACK_COMPAT", default_value_t = false)]
    ack_compat: bool,
    /// Reconcile the AWSAccounts (their status, and their deletion while in use), counting their
    /// users across the cluster: one release of a cluster should. Default: when watching every
    /// namespace.
    #[arg(long, env = "MANAGE_ACCOUNTS")]
    manage_accounts: Option<bool>,
    /// Log format.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value = "text")]
    log_format: LogFormat,
    /// Log filter when RUST_LOG is unset.
    #[arg(long, env = "LOG_LEVEL", default_value = "info")]
    log_level: String,
}

/// The `crd` command: one kind's CRD on stdout, or every kind's in a folder.
fn crd(kind: &str, out: Option<&std::path::Path>) -> anyhow::Result<()> {
    use rds_operator::kinds::{KINDS, crd_yaml};
    let Some(dir) = out else {
        let yaml = crd_yaml(kind).ok_or_else(|| anyhow::anyhow!("no kind {kind}"))?;
        print!("{yaml}");
        return Ok(());
    };
    for kind in KINDS {
        std::fs::write(dir.join(format!("{}.yaml", (kind.name)())), (kind.crd)())?;
    }
    Ok(())
}

/// The `olm-bundle` command, from the repository's deploy/, its chart's versions and the icon.
fn olm_bundle(out: &std::path::Path) -> anyhow::Result<()> {
    let chart: serde_json::Value =
        serde_yaml::from_str(&std::fs::read_to_string("helm/rds-operator/Chart.yaml")?)?;
    let version = chart["appVersion"].as_str().unwrap_or_default();
    // ">=1.30.0-0" -> 1.30.0
    let kube = chart["kubeVersion"].as_str().unwrap_or_default();
    let kube = kube.trim_start_matches(">=").trim_end_matches("-0");
    let icon = std::fs::read("docs/icon.svg")?;
    let sources = rds_operator::olm::Sources {
        deploy: std::path::Path::new("deploy"),
        examples: std::path::Path::new("deploy/examples"),
        version,
        min_kube_version: kube,
        icon: &icon,
    };
    if out.exists() {
        std::fs::remove_dir_all(out)?;
    }
    for (path, content) in rds_operator::olm::bundle(&sources)? {
        let file = out.join(path);
        std::fs::create_dir_all(file.parent().unwrap_or(out))?;
        std::fs::write(file, content)?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Crd { kind, out }) => crd(&kind, out.as_deref()),
        Some(Command::OlmBundle { out }) => olm_bundle(&out),
        Some(Command::ChartAnnotations { chart, examples }) => {
            use rds_operator::artifacthub;
            let annotations = artifacthub::annotations(&artifacthub::examples(&examples)?);
            let text = std::fs::read_to_string(&chart)?;
            std::fs::write(
                &chart,
                artifacthub::chart_with_annotations(&text, &annotations),
            )?;
            Ok(())
        }
        Some(Command::Run(args)) => run(*args).await,
        None => run(cli.run).await,
    }
}

async fn run(args: RunArgs) -> anyhow::Result<()> {
    telemetry::init(args.log_format, &args.log_level);
    let client = kube::Client::try_default()
        .await
        .context("no Kubernetes API to talk to (set KUBECONFIG or run in a cluster)")?;
    let aws = aws_config(&args).await?;
    let calls = Arc::<CallCounter>::default();
    let rds = Rds::new(&aws, calls.clone());
    let metrics = Arc::new(Metrics::new(calls.clone()));
    let health = Arc::new(Health::new(Liveness {
        poll_interval: args.drift_interval,
        stale_polls: args.unhealthy_after_polls,
        reconcile_limit: args.reconcile_timeout,
    }));
    let server = tokio::spawn(http::serve(
        args.metrics_addr,
        metrics.clone(),
        health.clone(),
    ));

    let (stop, stopped) = watch::channel(false);
    stop_on_signal(stop.clone());

    let identity = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| format!("pid-{}", std::process::id()));
    let sharded = sharded(&args, &client, &identity, stopped.clone())?;
    let Some(leadership) = lead(&args, &client, &identity, &health, &stop, stopped.clone()).await
    else {
        return Ok(());
    };
    health.set_leading(true);
    let wake = rds_operator::observer::wake_channel();
    let (observer, poller, feed) = observe(&args, &aws, &rds, &metrics, &health, &stopped, &wake);
    let watched = health.clone();
    metrics.location(rds.place().clone(), move || watched.runtime().last_poll);
    let own = Arc::new(Location::own(rds, observer));
    let feeds = (metrics.clone(), safety_net(&args));
    let locations = Locations::new(
        aws.clone(),
        own,
        (calls.clone(), wake),
        stopped.clone(),
        feeds,
    );
    let (directory, watching) = directory(&client, args.ack_compat, &stopped);
    let parts = (
        client,
        Arc::new(locations),
        directory,
        identity,
        metrics,
        health.clone(),
    );
    let ctx = Arc::new(context(&args, parts, sharded.clone()).await?);
    rds_operator::kinds::run(
        ctx.clone(),
        args.namespaces,
        args.concurrency,
        stopped,
        health,
    )
    .await;
    log_calls(&calls);
    for task in [Some(watching), Some(poller), feed].into_iter().flatten() {
        task.abort();
    }
    server.abort();
    if leadership.lost.load(std::sync::atomic::Ordering::SeqCst) {
        error!("exiting: leadership lost");
        std::process::exit(1);
    }
    if let Some(election) = leadership.holder {
        election.release().await;
    }
    Ok(())
}

/// The namespaces and AWSAccounts placement reads, and the task that watches them.
fn directory(
    client: &kube::Client,
    ack: bool,
    stopped: &watch::Receiver<bool>,
) -> (
    rds_operator::locations::Directory,
    tokio::task::JoinHandle<()>,
) {
    let (accounts, watching_accounts) =
        rds_operator::awsaccount::directory::watch(client, stopped.clone());
    let (directory, watching) =
        rds_operator::locations::watch_directory(client, (accounts, ack), stopped.clone());
    let watching = tokio::spawn(async move {
        tokio::join!(watching, watching_accounts);
    });
    (directory, watching)
}

/// The shared poll's interval while an event feed's queue answers (default: ten drift intervals).
fn safety_net(args: &RunArgs) -> Duration {
    (args.safety_net_interval).unwrap_or(args.drift_interval * 10)
}

/// Every AWS call the run made, in the log.
fn log_calls(calls: &CallCounter) {
    for ((account, region, operation, outcome), n) in calls.snapshot() {
        info!(
            account,
            region,
            operation,
            outcome,
            calls = n,
            "AWS API calls"
        );
    }
}

/// What every reconcile shares, with the hash key read (or made) in the operator's namespace and
/// the tenancy settings.
async fn context(
    args: &RunArgs,
    (client, locations, directory, instance, metrics, health): (
        kube::Client,
        Arc<Locations>,
        rds_operator::locations::Directory,
        String,
        Arc<Metrics>,
        Arc<Health>,
    ),
    shards: Option<Arc<Shards>>,
) -> anyhow::Result<Context> {
    let own: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(client.clone(), &args.leader_election_namespace);
    let hash_key = rds_operator::secrets::hash_key(&own, &args.hash_key_secret)
        .await
        .context("cannot read or create the hash key Secret in the operator's namespace")?;
    let mut ctx = Context::new(Parts {
        client,
        locations,
        directory,
        own_namespace: args.leader_election_namespace.clone(),
        instance,
        metrics,
        health,
        hash_key,
    });
    ctx.watched = args.namespaces.clone();
    ctx.shards = shards;
    ctx.manage_accounts = args.manage_accounts.unwrap_or(args.namespaces.is_empty());
    ctx.read_budget = ReadBudget::new(args.namespace_read_budget);
    if let Some(path) = &args.ca_bundle {
        let pem = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the CA bundle {}", path.display()))?;
        anyhow::ensure!(
            pem.contains("-----BEGIN CERTIFICATE-----"),
            "the CA bundle {} holds no PEM certificate",
            path.display()
        );
        ctx.ca_bundle = Some(pem.into());
    }
    anyhow::ensure!(
        (Duration::from_secs(10)..=Duration::from_secs(14 * 60)).contains(&args.iam_token_refresh),
        "--iam-token-refresh must be between 10s and 14m: a token is valid 15 minutes"
    );
    ctx.iam_token_refresh = args.iam_token_refresh;
    ctx.roll_secret_readers = args.roll_secret_readers;
    let rolled_in = &args.roll_secret_readers_namespaces;
    ctx.roll_secret_readers_in =
        (!rolled_in.is_empty()).then(|| rolled_in.iter().cloned().collect());
    ctx.grants = Grants {
        adoption: args.grant_adoption.clone(),
        restore: args.grant_restore.clone(),
        share_to: args.grant_share_to.clone(),
        public_snapshots: args.grant_public_snapshots.clone(),
        roles: args.grant_roles.clone(),
    };
    Ok(ctx)
}

/// The observer with its shared poll running, and the event feed when the arguments name a queue.
fn observe(
    args: &RunArgs,
    aws: &aws_config::SdkConfig,
    rds: &Rds,
    metrics: &Arc<Metrics>,
    health: &Arc<Health>,
    stopped: &watch::Receiver<bool>,
    wake: &tokio::sync::broadcast::Sender<rds_operator::observer::Owner>,
) -> (
    Arc<Observer>,
    tokio::task::JoinHandle<()>,
    Option<tokio::task::JoinHandle<()>>,
) {
    let intervals = PollIntervals {
        busy: args.busy_poll_interval,
        settled: args.drift_interval,
    };
    let mut observer = Observer::new(
        rds.clone(),
        intervals,
        rds_operator::dbinstance::aws::observed,
    )
    .waking(wake.clone())
    .health_every(args.health_interval);
    if args.events_queue_url.is_some() {
        let safety_net = safety_net(args);
        observer = observer.with_event_feed(safety_net);
        info!(
            ?safety_net,
            "event feed on: the shared RDS poll is a safety net while the queue answers"
        );
    }
    let observer = Arc::new(observer);
    let poller = tokio::spawn({
        let observer = observer.clone();
        let stopped = stopped.clone();
        let health = health.clone();
        async move { observer.run(stopped, health).await }
    });
    let feed = args.events_queue_url.clone().map(|url| {
        let feed = Feed::new(
            aws,
            url,
            observer.clone(),
            metrics.clone(),
            (rds.calls().clone(), rds.place().clone()),
        );
        let stopped = stopped.clone();
        tokio::spawn(async move { feed.run(stopped).await })
    });
    (observer, poller, feed)
}

/// The AWS configuration: the SDK's defaults, with the endpoint override and every call bounded in
/// time; a region is required.
async fn aws_config(args: &RunArgs) -> anyhow::Result<aws_config::SdkConfig> {
    let timeouts = aws_config::timeout::TimeoutConfig::builder()
        .connect_timeout(args.aws_attempt_timeout.min(Duration::from_secs(5)))
        .operation_attempt_timeout(args.aws_attempt_timeout)
        .operation_timeout(args.aws_operation_timeout)
        .build();
    let mut aws =
        aws_config::defaults(aws_config::BehaviorVersion::latest()).timeout_config(timeouts);
    if let Some(url) = &args.aws_endpoint_url {
        aws = aws.endpoint_url(url);
    }
    let aws = aws.load().await;
    if aws.region().is_none() {
        anyhow::bail!("no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION)");
    }
    Ok(aws)
}

/// With --shards: this replica's shards, kept by a task of their own until shutdown.
fn sharded(
    args: &RunArgs,
    client: &kube::Client,
    identity: &str,
    stopped: watch::Receiver<bool>,
) -> anyhow::Result<Option<Arc<Shards>>> {
    if args.shards == 1 {
        return Ok(None);
    }
    if !args.leader_elect {
        anyhow::bail!("--shards needs --leader-elect");
    }
    let shards = Arc::new(Shards::new(
        client.clone(),
        &args.leader_election_namespace,
        &args.leader_election_lease_name,
        identity,
        usize::from(args.shards),
        args.leader_election_lease_duration,
    ));
    tokio::spawn(shards.clone().run(stopped));
    Ok(Some(shards))
}

/// This replica's leadership: the election it holds (None without --leader-elect), and whether it
/// was lost (which stops the controllers).
struct Leadership {
    holder: Option<Arc<LeaderElection>>,
    lost: Arc<std::sync::atomic::AtomicBool>,
}

/// With --leader-elect, waits to become leader (None: shut down while waiting), then keeps the
/// lease and stops everything when it is lost.
async fn lead(
    args: &RunArgs,
    client: &kube::Client,
    identity: &str,
    health: &Health,
    stop: &watch::Sender<bool>,
    mut stopped: watch::Receiver<bool>,
) -> Option<Leadership> {
    // With shards, every replica reconciles: each acts only on the shards it leads.
    let election = (args.leader_elect && args.shards == 1).then(|| {
        LeaderElection::new(
            client.clone(),
            &args.leader_election_namespace,
            &args.leader_election_lease_name,
            identity,
            args.leader_election_lease_duration,
        )
    });
    let lost = Arc::new(std::sync::atomic::AtomicBool::new(false));
    if let Some(election) = &election {
        // A standby replica is healthy and ready to take over.
        health.set_ready(true);
        tokio::select! {
            _ = election.acquire() => {}
            _ = stopped.wait_for(|s| *s) => return None,
        }
        health.set_ready(false);
    }
    let holder = election.map(Arc::new);
    if let Some(election) = holder.clone() {
        let stop = stop.clone();
        let lost = lost.clone();
        tokio::spawn(async move {
            election.hold().await;
            // Stop at once: reconciles under way must not go on calling RDS while another replica
            // may already lead. The process exits; its supervisor starts it again as a follower.
            lost.store(true, std::sync::atomic::Ordering::SeqCst);
            let _ = stop.send(true);
            error!("exiting: leadership lost");
            std::process::exit(1);
        });
    }
    Some(Leadership { holder, lost })
}

/// Turns `stop` true on SIGTERM or Ctrl-C.
fn stop_on_signal(stop: watch::Sender<bool>) {
    tokio::spawn(async move {
        shutdown_signal().await;
        info!("shutting down");
        let _ = stop.send(true);
    });
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
