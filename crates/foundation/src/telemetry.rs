//! Logging: `tracing` to stderr, as text for people or JSON for clusters, with the request and body
//! tracing of the AWS SDK and HTTP crates cut off whatever the log level says (at debug and trace
//! they print request parameters, such as MasterUserPassword).

use tracing::Metadata;
use tracing_subscriber::filter::FilterFn;
use tracing_subscriber::{EnvFilter, fmt, prelude::*};

/// Log line format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// Crates whose debug and trace output can carry request bodies or headers.
const WIRE_CRATES: &[&str] = &[
    "aws_smithy",
    "aws_sdk_",
    "aws_config",
    "aws_sigv4",
    "aws_runtime",
    "aws_credential_types",
    "hyper",
    "h2",
    "reqwest",
    "rustls",
    "tower",
    "kube_client",
    // The database clients of DBUser: at debug they print the statements they send, and a
    // statement that sets a password holds it (CREATE ROLE ... PASSWORD).
    "tokio_postgres",
    "postgres_protocol",
    "mysql_async",
    "mysql_common",
];

/// Whether a log line may be written: the wire crates say nothing below info.
pub fn allowed(meta: &Metadata<'_>) -> bool {
    let wire = WIRE_CRATES.iter().any(|c| meta.target().starts_with(c));
    !wire || *meta.level() <= tracing::Level::INFO
}

/// Installs the global subscriber; `RUST_LOG` overrides `default_filter`, but never lets the wire
/// crates log below info.
pub fn init(format: LogFormat, default_filter: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    let registry = tracing_subscriber::registry()
        .with(FilterFn::new(allowed))
        .with(filter);
    match format {
        LogFormat::Text => registry
            .with(fmt::layer().with_writer(std::io::stderr))
            .init(),
        LogFormat::Json => registry
            .with(
                fmt::layer()
                    .json()
                    .with_current_span(true)
                    .with_writer(std::io::stderr),
            )
            .init(),
    }
}
