//! TLS as RDS serves it, through the connection Secret: the emulator's real servers present a
//! certificate of the test bed's CA (in the role of RDS's CA bundle), RDS for PostgreSQL 15 and
//! later refuses plain connections by default (rds.force_ssl=1), and an operator given the bundle
//! (`--ca-bundle`) writes it into the Secret (`ca.crt`, `{{ caBundle }}`) with a verifying
//! `sslmode`, so a client checks the server it reaches. The stand-in Coffee Manage app connects
//! with TLS and verifies the server through the Secret's CA, and refuses a server another CA
//! signed.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use crate::common::{self, REPO, dbinstance, moto_ext_get, run_client, unique};
use crate::engines::{Real, psql, ready_real_with};

/// The test bed's CA bundle, in a file of the test's own.
pub(crate) fn ca_file(name: &str) -> (String, PathBuf) {
    let pem = moto_ext_get("/_rds_ext/ca.pem").expect("the emulator's CA bundle");
    assert!(pem.contains("BEGIN CERTIFICATE"), "{pem}");
    let path = std::env::temp_dir().join(format!("{}.pem", unique(name)));
    std::fs::write(&path, &pem).expect("write the CA bundle");
    (pem, path)
}

fn spec(engine: &str, version: &str) -> serde_json::Value {
    crate::engines::real(json!({
        "engine": engine,
        "engineVersion": version,
        "connectionSecret": {"name": "db-connection", "extraKeys": {
            "APP_DB_HOST": "{{ host }}", "APP_DB_USER": "{{ username }}",
            "APP_DB_PASSWORD": "{{ password }}", "APP_DB_NAME": "{{ dbname }}",
            "APP_DB_CA": "{{ caBundle }}",
        }},
    }))
}

/// The DBInstance `db` Ready on a real server, under an operator given the CA bundle.
async fn ready(prefix: &str, spec: serde_json::Value, ca: &std::path::Path) -> Real {
    let args = ["--ca-bundle", ca.to_str().unwrap()];
    ready_real_with(prefix, &args, |id| dbinstance("db", id, spec)).await
}

/// RDS for PostgreSQL 16: a plain connection is refused (rds.force_ssl defaults to 1 from 15 on);
/// the Secret's uri verifies the server (`sslmode=verify-full`) against its `ca.crt`, and gets TLS.
#[tokio::test]
async fn a_plain_connection_to_postgres_16_is_refused_and_the_secret_verifies_the_server() {
    let (pem, ca) = ca_file("ca-pg");
    let Real {
        api,
        secret: s,
        _operator,
        ..
    } = ready("tlspg", spec("postgres", "16.3"), &ca).await;
    assert_eq!(s["ca.crt"], pem, "the Secret carries the CA bundle");
    assert_eq!(s["APP_DB_CA"], pem);
    assert_eq!(s["sslmode"], "verify-full");
    assert!(
        s["uri"].ends_with("?sslmode=verify-full"),
        "the uri verifies"
    );
    let plain = format!(
        "host={} port={} user={} password={} dbname={} sslmode=disable",
        s["host"], s["port"], s["username"], s["password"], s["dbname"]
    );
    let (ok, out) = psql(&plain, "SELECT 1");
    assert!(
        !ok && out.contains("no encryption"),
        "a plain connection is refused: {out}"
    );
    // The Secret's own CA bundle, as an app mounts it.
    let mounted = std::env::temp_dir().join(format!("{}.crt", unique("mounted")));
    std::fs::write(&mounted, &s["ca.crt"]).unwrap();
    let verified = format!("{}&sslrootcert={}", s["uri"], mounted.display());
    let sql = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()";
    let (ok, out) = psql(&verified, sql);
    assert!(ok && out.trim() == "t", "a verified TLS connection: {out}");
    common::delete_and_wait(&api, "db").await;
}

/// Runs the stand-in Coffee Manage app (tests/env/app/app.js) once with a Secret's four APP_DB_*
/// variables and `ca` as APP_DB_CA; (succeeded, what it printed).
fn coffee_manage(s: &BTreeMap<String, String>, ca: &str) -> (bool, String) {
    let mut cmd = Command::new("node");
    cmd.arg(format!("{REPO}/tests/env/app/app.js"))
        .env("NODE_PATH", format!("{REPO}/tests/env/node/node_modules"))
        .env("APP_ONCE", "1")
        .env("APP_DB_CA", ca);
    for key in [
        "APP_DB_HOST",
        "APP_DB_USER",
        "APP_DB_PASSWORD",
        "APP_DB_NAME",
    ] {
        cmd.env(key, &s[key]);
    }
    run_client(&mut cmd, "node (the stand-in Coffee Manage app)")
}

/// The Coffee Manage app on MySQL with the Secret's CA: a TLS connection that verified the server
/// (the row is written and read back over TLS); the same app given another CA refuses the server.
#[tokio::test]
async fn the_coffee_manage_app_connects_with_tls_and_verifies_the_server_through_the_secret() {
    let (_, ca) = ca_file("ca-mysql");
    let Real {
        api,
        secret: s,
        _operator,
        ..
    } = ready("tlsmy", spec("mysql", "8.0.42"), &ca).await;
    assert_eq!(s["sslmode"], "VERIFY_IDENTITY");
    let (ok, out) = coffee_manage(&s, &s["APP_DB_CA"]);
    assert!(ok, "the app connects with the Secret's CA: {out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("{\"suppliers\""))
        .unwrap_or_default();
    let printed: serde_json::Value = serde_json::from_str(line).expect("the app's JSON line");
    assert!(
        printed["tls"]
            .as_str()
            .is_some_and(|v| v.starts_with("TLSv1.")),
        "over TLS: {out}"
    );
    assert_eq!(
        printed["suppliers"].as_array().map(Vec::len),
        Some(1),
        "{out}"
    );
    // A CA that did not sign the server's certificate: the app refuses the server.
    let other = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=other",
        ])
        .args(["-keyout", "/dev/null", "-out", "/dev/stdout"])
        .output()
        .expect("openssl");
    let other = String::from_utf8(other.stdout).unwrap();
    assert!(other.contains("BEGIN CERTIFICATE"));
    let (ok, out) = coffee_manage(&s, &other);
    assert!(
        !ok && out.to_lowercase().contains("certificate"),
        "another CA is refused: {out}"
    );
    common::delete_and_wait(&api, "db").await;
}
