use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use rds_operator::controller::{self, Context};
use rds_operator::observer::{Observer, PollIntervals};
use rds_operator::planner::parse_duration;
use rds_operator::rds::Rds;
use rds_operator::telemetry::{self, LogFormat};

/// Kubernetes operator for AWS RDS DB instances.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run the controller (the default).
    Run,
    /// Print the DBInstance CustomResourceDefinition as YAML.
    Crd,
}

#[derive(clap::Args, Clone)]
struct RunArgs {
    /// Watch only this namespace (default: all namespaces).
    #[arg(long, env = "WATCH_NAMESPACE")]
    namespace: Option<String>,
    /// The drift interval: how often to compare a settled (e.g. available) instance with its spec.
    /// A DBInstance's spec.driftInterval overrides it.
    #[arg(long, alias = "poll-interval", env = "DRIFT_INTERVAL", default_value = "60s", value_parser = parse_duration)]
    drift_interval: Duration,
    /// How often to look at an instance RDS is busy with (creating, modifying, deleting...).
    #[arg(long, env = "BUSY_POLL_INTERVAL", default_value = "5s", value_parser = parse_duration)]
    busy_poll_interval: Duration,
    /// DBInstances reconciled at once.
    #[arg(long, env = "RECONCILE_CONCURRENCY", default_value_t = 8)]
    concurrency: u16,
    /// RDS endpoint (moto, LocalStack); by default the SDK's (AWS_ENDPOINT_URL or AWS itself).
    #[arg(long, env = "AWS_ENDPOINT_URL")]
    aws_endpoint_url: Option<String>,
    /// Log format.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value = "text")]
    log_format: LogFormat,
    /// Log filter when RUST_LOG is unset.
    #[arg(long, env = "LOG_LEVEL", default_value = "info")]
    log_level: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Crd) => {
            print!("{}", rds_operator::crd::crd_yaml());
            Ok(())
        }
        Some(Command::Run) | None => run(cli.run).await,
    }
}

async fn run(args: RunArgs) -> anyhow::Result<()> {
    telemetry::init(args.log_format, &args.log_level);
    let client = kube::Client::try_default()
        .await
        .context("no Kubernetes API to talk to (set KUBECONFIG or run in a cluster)")?;
    let mut aws = aws_config::defaults(aws_config::BehaviorVersion::latest());
    if let Some(url) = &args.aws_endpoint_url {
        aws = aws.endpoint_url(url);
    }
    let aws = aws.load().await;
    if aws.region().is_none() {
        anyhow::bail!("no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION)");
    }
    let rds = Rds::new(&aws);
    let intervals = PollIntervals {
        busy: args.busy_poll_interval,
        settled: args.drift_interval,
    };
    let instance = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| format!("pid-{}", std::process::id()));
    let ctx = Arc::new(Context::new(
        client,
        rds.clone(),
        Observer::new(rds, intervals),
        instance,
    ));
    controller::run(ctx.clone(), args.namespace, args.concurrency).await;
    for ((operation, outcome), n) in ctx.rds.calls().snapshot() {
        tracing::info!(operation, outcome, calls = n, "RDS API calls");
    }
    Ok(())
}
