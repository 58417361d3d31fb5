//! IAM database authentication: the emulator lets a user made for IAM in only with a valid token
//! of its own (MariaDB and PostgreSQL), and a DBUser with auth IAM keeps a valid token in its
//! connection Secret, replaced before it expires. The emulator's tokens live `TOKEN_LIFE` seconds
//! here (RDS's 15 minutes, shortened), the operator replaces them every 10.

use std::time::{Duration, Instant};

use aws_sdk_rds::auth_token::{AuthTokenGenerator, Config};
use aws_sdk_rds::config::Credentials;
use kube::api::{Api, PostParams};
use rds_operator::dbuser::DBUser;
use serde_json::json;

use crate::common::{self, *};
use crate::engines::psql;

const MASTER_PASSWORD: &str = "Sup3r-Secret-Passw0rd";
/// How long the emulator lets a token log in, in seconds (every test here sets the same).
const TOKEN_LIFE: u64 = 20;

fn token_life() {
    assert!(
        moto_ext_post(&format!("/_rds_ext/config?iam_token_life={TOKEN_LIFE}")),
        "set the emulator's token life"
    );
}

/// A token for `user` at `host:port`, signed in `region` with these credentials (the emulator's
/// own when None).
async fn token(
    host: &str,
    port: i32,
    user: &str,
    region: &str,
    credentials: Option<Credentials>,
) -> String {
    let sdk = emulator_sdk_config().await;
    let mut config = Config::builder()
        .hostname(host)
        .port(u64::try_from(port).unwrap())
        .username(user)
        .region(aws_sdk_rds::config::Region::new(region.to_owned()));
    if let Some(credentials) = credentials {
        config = config.credentials(credentials);
    }
    let generator = AuthTokenGenerator::new(config.build().expect("token config"));
    let made = generator.auth_token(&sdk).await.expect("a token");
    made.as_str().to_owned()
}

/// Creates a real-engine instance with IAM database authentication on; its endpoint.
async fn instance(
    rds: &aws_sdk_rds::Client,
    id: &str,
    engine: &str,
    master: &str,
) -> (String, i32) {
    (rds.create_db_instance()
        .db_instance_identifier(id)
        .engine(engine)
        .db_instance_class("db.t3.micro")
        .allocated_storage(20)
        .master_username(master)
        .master_user_password(MASTER_PASSWORD)
        .enable_iam_database_authentication(true)
        .tags(
            aws_sdk_rds::types::Tag::builder()
                .key("moto-ext:real-engine")
                .value("true")
                .build(),
        ))
    .send()
    .await
    .expect("create the instance");
    wait_for("the instance available", TIMEOUT, || async {
        let answer = rds
            .describe_db_instances()
            .db_instance_identifier(id)
            .send();
        let found = answer.await.ok()?;
        let db = found.db_instances()[0].clone();
        let endpoint = db.endpoint()?;
        let found = (endpoint.address()?.to_owned(), endpoint.port()?);
        (db.db_instance_status() == Some("available")).then_some(found)
    })
    .await
}

fn as_mariadb(host: &str, port: i32, user: &str, password: &str, sql: &str) -> (bool, String) {
    let port = port.to_string();
    mariadb(host, Some(&port), user, password, "information_schema", sql)
}

#[tokio::test]
async fn the_emulator_lets_an_iam_user_in_only_with_a_valid_unexpired_token_of_its_own() {
    token_life();
    let rds = rds().await;
    let id = common::unique("iam-tokens");
    let (host, port) = instance(&rds, &id, "mysql", "admin").await;
    let (made, out) = as_mariadb(
        &host,
        port,
        "admin",
        MASTER_PASSWORD,
        "CREATE USER app IDENTIFIED WITH AWSAuthenticationPlugin AS 'RDS'",
    );
    assert!(made, "{out}");
    let region = region();
    let valid = token(&host, port, "app", &region, None).await;
    let (ok, out) = as_mariadb(&host, port, "app", &valid, "SELECT CURRENT_USER()");
    assert!(ok && out.contains("app@%"), "a valid token logs in: {out}");
    let forger = Credentials::new("test", "not-the-secret", None, None, "forger");
    let refused = [
        (
            "signed with another secret key",
            token(&host, port, "app", &region, Some(forger)).await,
        ),
        (
            "made for another user",
            token(&host, port, "admin", &region, None).await,
        ),
        (
            "made for another host",
            token("10.255.0.1", port, "app", &region, None).await,
        ),
        (
            "made for another region",
            token(&host, port, "app", "eu-west-1", None).await,
        ),
        ("a password", "app-password".to_owned()),
    ];
    for (what, password) in refused {
        let (ok, out) = as_mariadb(&host, port, "app", &password, "SELECT 1");
        assert!(!ok && out.contains("Access denied"), "{what}: {out}");
    }
    // The valid token is refused once its life is over.
    tokio::time::sleep(Duration::from_secs(TOKEN_LIFE + 1)).await;
    let (ok, out) = as_mariadb(&host, port, "app", &valid, "SELECT 1");
    assert!(!ok && out.contains("Access denied"), "expired: {out}");
    let fresh = token(&host, port, "app", &region, None).await;
    let (ok, out) = as_mariadb(&host, port, "app", &fresh, "SELECT 1");
    assert!(ok, "a fresh token logs in again: {out}");
    // IAM database authentication turned off: no token logs in.
    (rds.modify_db_instance()
        .db_instance_identifier(&id)
        .enable_iam_database_authentication(false)
        .apply_immediately(true))
    .send()
    .await
    .expect("turn IAM authentication off");
    wait_for("IAM authentication off", TIMEOUT, || async {
        let answer = rds
            .describe_db_instances()
            .db_instance_identifier(&id)
            .send();
        let db = answer.await.ok()?.db_instances()[0].clone();
        (db.iam_database_authentication_enabled() == Some(false)
            && db.db_instance_status() == Some("available"))
        .then_some(())
    })
    .await;
    let fresh = token(&host, port, "app", &region, None).await;
    let (ok, out) = as_mariadb(&host, port, "app", &fresh, "SELECT 1");
    assert!(!ok && out.contains("Access denied"), "IAM off: {out}");
    delete_instance(&rds, &id).await;
}

#[tokio::test]
async fn a_postgresql_member_of_rds_iam_logs_in_with_a_token_only() {
    token_life();
    let rds = rds().await;
    let id = common::unique("iam-pg");
    let (host, port) = instance(&rds, &id, "postgres", "pgmaster").await;
    let conninfo = |user: &str, password: &str| {
        format!(
            "host={host} port={port} user={user} password={password} dbname=postgres sslmode=require"
        )
    };
    let (made, out) = psql(
        &conninfo("pgmaster", MASTER_PASSWORD),
        "CREATE USER app; GRANT rds_iam TO app;",
    );
    assert!(made, "{out}");
    let region = region();
    // A token signed with temporary credentials is longer than 512 bytes (pam_exec's limit).
    let session = Credentials::new("test", "test", Some("x".repeat(600)), None, "session");
    for (what, password, logs_in) in [
        (
            "a valid token",
            token(&host, port, "app", &region, None).await,
            true,
        ),
        (
            "a token with a session token the key does not have",
            token(&host, port, "app", &region, Some(session)).await,
            false,
        ),
        (
            "a token of the master user",
            token(&host, port, "pgmaster", &region, None).await,
            false,
        ),
        ("a password", "app-password".to_owned(), false),
    ] {
        let (ok, out) = psql(&conninfo("app", &password), "SELECT current_user");
        assert_eq!(ok, logs_in, "{what}: {out}");
        if logs_in {
            assert!(out.contains("app"), "{what}: {out}");
        }
    }
    // The master user, no member of rds_iam, still logs in with its password.
    let (ok, out) = psql(&conninfo("pgmaster", MASTER_PASSWORD), "SELECT 1");
    assert!(ok, "{out}");
    delete_instance(&rds, &id).await;
}

async fn delete_instance(rds: &aws_sdk_rds::Client, id: &str) {
    (rds.delete_db_instance()
        .db_instance_identifier(id)
        .skip_final_snapshot(true))
    .send()
    .await
    .expect("delete the instance");
}

#[tokio::test]
async fn an_iam_dbusers_secret_token_logs_in_and_is_replaced_before_it_expires() {
    token_life();
    let (client, ns, api, rds) = setup("user-tokens").await;
    let id = common::unique("user-tokens");
    let _operator = Operator::start_with(&ns, &["--iam-token-refresh", "10s"]);
    let spec = json!({"tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await
        .expect("create DBInstance");
    let db = wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let users: Api<DBUser> = Api::namespaced(client.clone(), &ns);
    let user: DBUser = serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBUser",
        "metadata": {"name": "app"},
        "spec": {
            "dbInstanceRef": {"name": "db"},
            "auth": "IAM",
            "grants": [{"database": "COFFEE", "preset": "ReadWrite"}],
            "connectionSecret": {"name": "app-db"},
        },
    }))
    .expect("a DBUser");
    users
        .create(&PostParams::default(), &user)
        .await
        .expect("create DBUser");
    // The instance has IAM authentication off: waited for, and no user made.
    wait_object(&users, "app", "IAMAuthenticationOff", |u| {
        object_condition(u, "Synced").is_some_and(|(_, reason, _)| reason == "IAMAuthenticationOff")
    })
    .await;
    let endpoint = (db.status.as_ref())
        .and_then(|s| s.common.endpoint.clone())
        .expect("the endpoint");
    let port = endpoint.port.to_string();
    let as_master = |sql: &str| {
        let port = Some(port.as_str());
        mariadb(
            &endpoint.address,
            port,
            "admin",
            MASTER_PASSWORD,
            "COFFEE",
            sql,
        )
    };
    let app_users = || as_master("SELECT COUNT(*) FROM mysql.user WHERE User = 'app'").1;
    assert_eq!(app_users().trim(), "0", "no user before IAM is on");
    patch_spec(&api, "db", json!({"enableIAMDatabaseAuthentication": true})).await;
    let ready = wait_object(&users, "app", "DBUser app Ready", |u| {
        object_condition(u, "Ready").is_some_and(|(s, _, _)| s == "True")
            && object_condition(u, "Synced").is_some_and(|(s, _, _)| s == "True")
    })
    .await;
    let status = ready.status.expect("status");
    let resource = db.status.as_ref().and_then(|s| s.dbi_resource_id.clone());
    let policy = status.iam_policy.expect("the policy statement");
    assert!(
        policy.contains(&format!(":dbuser:{}/app", resource.expect("resource id")))
            && policy.contains("rds-db:connect"),
        "{policy}"
    );
    // Through the Secret only: its token logs in, writes as ReadWrite allows, and every token
    // the Secret holds over two token lives logs in when read.
    let first = secret_data(&client, &ns, "app-db").await.expect("app-db");
    assert!(
        first["password"].starts_with(&format!(
            "{}:{}/?Action=connect&DBUser=app&",
            first["host"], first["port"]
        )),
        "a token in place of a password"
    );
    let (made, out) = as_master("CREATE TABLE beans (id INT)");
    assert!(made, "{out}");
    let (wrote, out) = mariadb_keys(&first, &first["password"], "INSERT INTO beans VALUES (0)");
    assert!(wrote, "the token logs in and writes: {out}");
    let start = Instant::now();
    let mut seen = vec![first["password"].clone()];
    while start.elapsed() < Duration::from_secs(2 * TOKEN_LIFE + 5) {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let now = secret_data(&client, &ns, "app-db").await.expect("app-db");
        let (ok, out) = mariadb_keys(&now, &now["password"], "INSERT INTO beans VALUES (1)");
        assert!(ok, "the Secret's token at {:?}: {out}", start.elapsed());
        if seen.last() != Some(&now["password"]) {
            seen.push(now["password"].clone());
        }
    }
    assert!(
        seen.len() >= 4,
        "replaced every 10 s: {} tokens",
        seen.len()
    );
    // The first token, past its life, is refused: the Secret's token was replaced in time.
    let (ok, out) = mariadb_keys(&first, &first["password"], "SELECT 1");
    assert!(!ok && out.contains("Access denied"), "expired: {out}");
    // Deleted: the user is dropped.
    users
        .delete("app", &Default::default())
        .await
        .expect("delete DBUser");
    wait_object_gone(&users, "app").await;
    assert_eq!(app_users().trim(), "0", "dropped with the DBUser");
    drop(rds);
}

/// When `token` (an IAM token) was signed, in seconds since the epoch.
fn signed_at(token: &str) -> i64 {
    let date = (token.split(['?', '&']))
        .find_map(|p| p.strip_prefix("X-Amz-Date="))
        .expect("a signed token");
    chrono::NaiveDateTime::parse_from_str(date, "%Y%m%dT%H%M%SZ")
        .expect("its date")
        .and_utc()
        .timestamp()
}

/// An admission policy that refuses every change to the Secret `name` of `ns` (403, as RBAC
/// would); dropped with the returned guard's names.
async fn refuse_secret_writes(client: &kube::Client, ns: &str, name: &str) -> String {
    use k8s_openapi::api::admissionregistration::v1::{
        ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    };
    let policy_name = common::unique("hold-secret");
    let policy: ValidatingAdmissionPolicy = serde_json::from_value(json!({
        "metadata": {"name": policy_name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["UPDATE"], "resources": ["secrets"]}]},
            "validations": [{"expression": format!("object.metadata.name != '{name}'"),
                "reason": "Forbidden", "message": format!("the test holds Secret {name}")}],
        },
    }))
    .unwrap();
    let binding: ValidatingAdmissionPolicyBinding = serde_json::from_value(json!({
        "metadata": {"name": policy_name},
        "spec": {"policyName": policy_name, "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchLabels":
                {"kubernetes.io/metadata.name": ns}}}},
    }))
    .unwrap();
    let pp = PostParams::default();
    (Api::<ValidatingAdmissionPolicy>::all(client.clone())
        .create(&pp, &policy)
        .await)
        .expect("the policy");
    (Api::<ValidatingAdmissionPolicyBinding>::all(client.clone())
        .create(&pp, &binding)
        .await)
        .expect("its binding");
    policy_name
}

/// The master login fails (the master password changed in the database behind the operator's
/// back): the Secret's token is still renewed every 10 s, logs in, and the user stays Ready. Then
/// the Secret cannot be written (an admission policy refuses it): the user is not Ready before the
/// token the Secret holds expires; once it can be written, Ready again with a token that logs in.
#[tokio::test]
async fn an_iam_users_token_is_renewed_while_the_master_login_fails_and_not_ready_before_it_expires()
 {
    token_life();
    let (client, ns, api, _rds) = setup("user-tokens-away").await;
    let id = common::unique("user-tokens-away");
    let _operator = Operator::start_with(&ns, &["--iam-token-refresh", "10s"]);
    let spec = json!({"enableIAMDatabaseAuthentication": true,
        "tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    (api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await)
        .expect("create DBInstance");
    let db = wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let users: Api<DBUser> = Api::namespaced(client.clone(), &ns);
    let user: DBUser = serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBUser",
        "metadata": {"name": "app"},
        "spec": {"dbInstanceRef": {"name": "db"}, "auth": "IAM",
            "grants": [{"database": "COFFEE", "preset": "ReadWrite"}],
            "connectionSecret": {"name": "app-db"}},
    }))
    .expect("a DBUser");
    (users.create(&PostParams::default(), &user).await).expect("create DBUser");
    let ready = |u: &DBUser| object_condition(u, "Ready").is_some_and(|(s, _, _)| s == "True");
    wait_object(&users, "app", "DBUser app Ready", ready).await;
    let endpoint = (db.status.as_ref())
        .and_then(|s| s.common.endpoint.clone())
        .expect("the endpoint");
    let port = endpoint.port.to_string();
    let as_master = |password: &str, sql: &str| {
        mariadb(
            &endpoint.address,
            Some(&port),
            "admin",
            password,
            "COFFEE",
            sql,
        )
    };
    let (made, out) = as_master(MASTER_PASSWORD, "CREATE TABLE beans (id INT)");
    assert!(made, "{out}");
    const CHANGED: &str = "Changed-Behind-Its-Back-1";
    // Every account of the master user's (one per host it may come from).
    let alter_all = |from: &str, to: &str| {
        let (ok, hosts) = as_master(from, "SELECT Host FROM mysql.user WHERE User = 'admin'");
        assert!(ok, "{hosts}");
        let accounts: Vec<String> = (hosts.lines().map(str::trim).filter(|h| !h.is_empty()))
            .map(|h| format!("'admin'@'{h}' IDENTIFIED BY '{to}'"))
            .collect();
        as_master(from, &format!("ALTER USER {}", accounts.join(", ")))
    };
    let (changed, out) = alter_all(MASTER_PASSWORD, CHANGED);
    assert!(changed, "{out}");
    let (old, out) = as_master(MASTER_PASSWORD, "SELECT 1");
    assert!(!old, "the old master password is refused: {out}");
    let failing = wait_object(&users, "app", "Synced=False", |u| {
        object_condition(u, "Synced").is_some_and(|(status, _, _)| status == "False")
    })
    .await;
    let synced = object_condition(&failing, "Synced").unwrap();
    assert_eq!(synced.1, "DatabaseUnreachable", "{synced:?}");

    // Over two token lives: Ready, and the Secret's token logs in whenever read.
    let start = Instant::now();
    let mut seen = Vec::new();
    while start.elapsed() < Duration::from_secs(2 * TOKEN_LIFE + 5) {
        let now = secret_data(&client, &ns, "app-db").await.expect("app-db");
        let (ok, out) = mariadb_keys(&now, &now["password"], "INSERT INTO beans VALUES (1)");
        assert!(ok, "the Secret's token at {:?}: {out}", start.elapsed());
        let u = users.get("app").await.expect("the DBUser");
        assert!(
            ready(&u),
            "Ready while its token logs in: {:?}",
            object_condition(&u, "Ready")
        );
        if seen.last() != Some(&now["password"]) {
            seen.push(now["password"].clone());
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    assert!(seen.len() >= 4, "renewed every 10 s: {} tokens", seen.len());

    // The Secret cannot be written: not Ready, before the token it holds expires.
    let policy = refuse_secret_writes(&client, &ns, "app-db").await;
    let refused = wait_object(&users, "app", "Ready=False", |u| !ready(u)).await;
    let at = common::epoch() as i64;
    let held = secret_data(&client, &ns, "app-db").await.expect("app-db");
    let expires = signed_at(&held["password"]) + TOKEN_LIFE as i64;
    assert!(
        at < expires,
        "not Ready at {at}, the token expires at {expires}"
    );
    let (_, reason, message) = object_condition(&refused, "Ready").unwrap();
    assert_eq!(reason, "ConnectionSecretNotWritten", "{message}");
    assert!(message.contains("app-db"), "{message}");

    // Written again: Ready, with a token that logs in.
    use k8s_openapi::api::admissionregistration::v1::{
        ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    };
    let dp = Default::default();
    (Api::<ValidatingAdmissionPolicyBinding>::all(client.clone())
        .delete(&policy, &dp)
        .await)
        .expect("drop the binding");
    (Api::<ValidatingAdmissionPolicy>::all(client.clone())
        .delete(&policy, &dp)
        .await)
        .expect("drop the policy");
    wait_object(&users, "app", "Ready again", ready).await;
    let now = secret_data(&client, &ns, "app-db").await.expect("app-db");
    let (ok, out) = mariadb_keys(&now, &now["password"], "SELECT 1");
    assert!(ok, "the renewed token logs in: {out}");

    // The master password back, so the user can be dropped.
    let (restored, out) = alter_all(CHANGED, MASTER_PASSWORD);
    assert!(restored, "{out}");
    (users.delete("app", &Default::default()).await).expect("delete DBUser");
    wait_object_gone(&users, "app").await;
    common::delete_and_wait(&api, "db").await;
}
