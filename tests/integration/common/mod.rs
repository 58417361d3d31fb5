//! The test bed: a real kube-apiserver (tests/env/controlplane.sh) and moto (localstack/moto.sh),
//! shared by every test in this binary; each test gets its own namespace and RDS identifiers.

#![allow(dead_code, unused_imports)] // each test binary and module uses a different part of the bed

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use rds_operator::dbinstance::DBInstance;

mod cluster;
mod emulator;
mod node;
mod operator;
mod proxy;
mod s3;
mod sns;
mod sql;
mod waits;

pub use cluster::*;
pub use emulator::*;
pub use node::*;
pub use operator::*;
pub use proxy::*;
pub use s3::*;
pub use sns::*;
pub use sql::*;
pub use waits::*;

/// A DBInstance like the Coffee Manage one (MySQL 8.0.42, db.t3.micro, 20 GiB gp2, password from the
/// Secret `db-password`), with `extra` merged into its spec.
pub fn dbinstance(name: &str, identifier: &str, extra: serde_json::Value) -> DBInstance {
    let mut spec = serde_json::json!({
        "dbInstanceIdentifier": identifier,
        "engine": "mysql",
        "engineVersion": "8.0.42",
        "dbInstanceClass": "db.t3.micro",
        "allocatedStorage": 20,
        "storageType": "gp2",
        "masterUsername": "admin",
        "masterUserPassword": {"name": "db-password", "key": "password"},
        "dbName": "COFFEE",
        "tags": [{"key": "app", "value": "coffee-manage"}],
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            spec.insert(k.clone(), v.clone());
        }
    }
    serde_json::from_value(serde_json::json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBInstance",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("valid DBInstance")
}

/// A fresh namespace holding the password Secret `db-password`, with clients of the API server
/// and the emulator.
pub async fn setup(prefix: &str) -> (Client, String, Api<DBInstance>, aws_sdk_rds::Client) {
    let client = client_with_crd().await;
    let ns = namespace(&client, prefix).await;
    secret(
        &client,
        &ns,
        "db-password",
        "password",
        "Sup3r-Secret-Passw0rd",
    )
    .await;
    let api = Api::namespaced(client.clone(), &ns);
    (client, ns, api, rds().await)
}

/// Creates the DBInstance `db` (identifier `id`, `spec` merged) whose reference names a group that
/// does not exist yet, and waits until it reports so (Synced reason ReferencesUnresolved).
pub async fn create_waiting_for_a_reference(
    api: &Api<DBInstance>,
    id: &str,
    spec: serde_json::Value,
) {
    api.create(&PostParams::default(), &dbinstance("db", id, spec))
        .await
        .expect("create DBInstance");
    wait_dbi(api, "db", "ReferencesUnresolved", TIMEOUT, |db| {
        synced_reason(db) == "ReferencesUnresolved"
    })
    .await;
}
