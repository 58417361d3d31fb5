//! kubectl-rds, the kubectl plugin for the people who run the databases (docs/kubectl-rds.md):
//! `kubectl rds status|connect|approve|snapshot`. It reads and writes the operator's objects
//! through the kubeconfig kubectl uses, never AWS.

mod approve;
mod connect;
mod port_ack;
mod redact;
mod report;
mod screen;
mod snapshot;
mod status;

use std::io::IsTerminal;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(name = "kubectl-rds", version, about = "rds-operator's kubectl plugin")]
struct Cli {
    /// The namespace (default: the kubeconfig context's).
    #[arg(short = 'n', long, global = true)]
    namespace: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// One screen for a database (a DBInstance or a DBCluster of the name): state, conditions,
    /// members, replicas, blue/green, global database, snapshots, proxies, maintenance, drift,
    /// health, and its Secret's keys (never their values).
    Status {
        name: String,
        #[arg(short = 'o', long, value_enum, default_value_t = Output::Tree)]
        output: Output,
    },
    /// Runs mariadb/mysql or psql on the database with its connection Secret's values (the
    /// password in a private file, TLS verified with the Secret's ca.crt); arguments after --
    /// go to the client.
    Connect {
        name: String,
        /// The reader endpoint of a DBCluster.
        #[arg(long)]
        reader: bool,
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// Writes the annotation that approves a switchover (of a DBInstance or DBCluster), a pending
    /// maintenance ACTION, or a GlobalCluster's failover to the DBCluster ACTION, after saying
    /// what the operator will do.
    Approve {
        name: String,
        what: approve::What,
        action: Option<String>,
        /// Approve a failover that loses data without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Ports ACK rds-controller manifests to this operator's (stdout); what could not be carried
    /// is listed on stderr. A FILE of - is standard input.
    PortAck {
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// A tarball for a support request: the namespace's rds.operator.rs objects, their Events,
    /// its Secrets' names and keys (never a value), the operator Pods' logs.
    Report {
        /// Where to write it (default: rds-operator-report-NAMESPACE-TIME.tar.gz).
        #[arg(short = 'o', long)]
        output: Option<String>,
        /// The operator's namespace, for its logs.
        #[arg(long, default_value = "rds-operator")]
        operator_namespace: String,
    },
    /// Makes a DBSnapshot of a DBInstance (a DBClusterSnapshot of a DBCluster).
    Snapshot {
        name: String,
        /// Wait until it is Ready.
        #[arg(long)]
        wait: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Output {
    Tree,
    Json,
}

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("kubectl rds: {e:#}");
            std::process::exit(1);
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<i32> {
    if let Command::PortAck { files } = &cli.command {
        return port(files);
    }
    let client = kube::Client::try_default().await?;
    let namespace =
        (cli.namespace.clone()).unwrap_or_else(|| client.default_namespace().to_owned());
    match cli.command {
        Command::Status { name, output } => {
            let Some(view) = status::gather(&client, &namespace, &name).await? else {
                anyhow::bail!("no DBInstance or DBCluster {name} in namespace {namespace}");
            };
            match output {
                Output::Json => println!("{}", serde_json::to_string_pretty(&view)?),
                Output::Tree => {
                    print!("{}", screen::render(&view, std::io::stdout().is_terminal()))
                }
            }
            Ok(0)
        }
        Command::Connect { name, reader, args } => {
            let data = secret_of(&client, &namespace, &name).await?;
            connect::run(&data, reader, &args)
        }
        Command::Approve {
            name,
            what,
            action,
            yes,
        } => {
            approve::run(&client, &namespace, (&name, what, action.as_deref()), yes).await?;
            Ok(0)
        }
        Command::Snapshot { name, wait } => {
            snapshot::run(&client, &namespace, &name, wait).await?;
            Ok(0)
        }
        Command::Report {
            output,
            operator_namespace,
        } => {
            let entries = report::gather(&client, &namespace, &operator_namespace).await?;
            let stamp: String = (chrono::Utc::now().to_rfc3339().chars())
                .filter(char::is_ascii_digit)
                .take(14)
                .collect();
            let root = format!("rds-operator-report-{namespace}-{stamp}");
            let path = output.unwrap_or_else(|| format!("{root}.tar.gz"));
            report::tarball(&root, &entries, std::fs::File::create(&path)?)?;
            println!("{path}: {} files", entries.len());
            Ok(0)
        }
        Command::PortAck { .. } => unreachable!("ported above, without a cluster"),
    }
}

/// port-ack: the files ported to stdout, what was left out on stderr.
fn port(files: &[String]) -> anyhow::Result<i32> {
    let mut ported = port_ack::Ported::default();
    for file in files {
        let text = match file.as_str() {
            "-" => std::io::read_to_string(std::io::stdin())?,
            path => std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{path}: {e}"))?,
        };
        port_ack::port(&text, &mut ported).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
    }
    print!("{}", port_ack::to_yaml(&ported.documents)?);
    for line in &ported.left {
        eprintln!("left out: {line}");
    }
    Ok(0)
}

/// The values of the database's connection Secret.
async fn secret_of(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    let Some(view) = status::gather(client, namespace, name).await? else {
        anyhow::bail!("no DBInstance or DBCluster {name} in namespace {namespace}");
    };
    let Some(secret) = view.secret else {
        anyhow::bail!(
            "{} {name} has no connection Secret (spec.connectionSecret)",
            view.kind
        );
    };
    let api: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(client.clone(), namespace);
    let data = api.get(&secret.name).await?.data.unwrap_or_default();
    Ok((data.into_iter())
        .map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned()))
        .collect())
}
