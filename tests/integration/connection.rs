//! The connection Secret: what the Coffee Manage app consumes, for each password source.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use crate::common::TIMEOUT;
use crate::common::dbinstance;
use crate::common::setup;
use crate::common::{self, Operator, is_ready, wait_dbi, wait_for};

const STANDARD_KEYS: [&str; 7] = [
    "host", "port", "username", "password", "dbname", "engine", "uri",
];
const COFFEE_KEYS: [&str; 4] = [
    "APP_DB_HOST",
    "APP_DB_USER",
    "APP_DB_PASSWORD",
    "APP_DB_NAME",
];

pub(crate) fn coffee_connection() -> serde_json::Value {
    json!({
        "name": "db-connection",
        "extraKeys": {
            "APP_DB_HOST": "{{ host }}",
            "APP_DB_USER": "{{ username }}",
            "APP_DB_PASSWORD": "{{ password }}",
            "APP_DB_NAME": "{{ dbname }}",
        }
    })
}

/// Waits for the connection Secret to satisfy `check`.
async fn wait_secret(
    client: &Client,
    ns: &str,
    name: &str,
    what: &str,
    check: impl Fn(&BTreeMap<String, String>) -> bool,
) -> BTreeMap<String, String> {
    wait_for(what, TIMEOUT, || async {
        let data = common::secret_data(client, ns, name).await?;
        check(&data).then_some(data)
    })
    .await
}

/// Every standard key with the right value, and the Coffee Manage keys.
fn assert_connection(data: &BTreeMap<String, String>, db: &DBInstance, password: &str) {
    for key in STANDARD_KEYS.iter().chain(COFFEE_KEYS.iter()) {
        assert!(
            data.contains_key(*key),
            "connection Secret lacks {key}: {:?}",
            data.keys()
        );
    }
    let endpoint = db
        .status
        .as_ref()
        .and_then(|s| s.common.endpoint.clone())
        .expect("endpoint");
    assert_eq!(data["host"], endpoint.address);
    assert_eq!(data["port"], endpoint.port.to_string());
    assert_eq!(data["username"], "admin");
    assert_eq!(data["password"], password);
    assert_eq!(data["dbname"], "COFFEE");
    assert_eq!(data["engine"], "mysql");
    assert_eq!(
        data["uri"],
        format!(
            "mysql://admin:{}@{}:{}/COFFEE",
            rds_operator::dbinstance::connection::encode(password),
            endpoint.address,
            endpoint.port
        )
    );
    assert_eq!(data["APP_DB_HOST"], data["host"]);
    assert_eq!(data["APP_DB_USER"], "admin");
    assert_eq!(data["APP_DB_PASSWORD"], password);
    assert_eq!(data["APP_DB_NAME"], "COFFEE");
}

/// No password anywhere a person or a log collector can see it.
async fn assert_no_leak(
    client: &Client,
    ns: &str,
    name: &str,
    operator: &Operator,
    passwords: &[&str],
) {
    let api: Api<DBInstance> = Api::namespaced(client.clone(), ns);
    let status = api
        .get_opt(name)
        .await
        .unwrap()
        .map(|db| serde_json::to_string(&db.status).unwrap())
        .unwrap_or_default();
    let events = common::event_notes(client, ns, name).await;
    let logs = operator.logs();
    assert!(!logs.is_empty(), "the operator log was captured");
    for password in passwords {
        assert!(!logs.contains(password), "password in the operator log");
        assert!(!events.contains(password), "password in an Event");
        assert!(!status.contains(password), "password in status");
    }
}

#[tokio::test]
async fn secret_reference_password_and_a_secret_that_follows_reality() {
    let (client, ns, api, rds) = setup("conn").await;
    let id = common::unique("conn");
    let operator = Operator::start(&ns);
    api.create(
        &PostParams::default(),
        &dbinstance(
            "conn",
            &id,
            json!({"connectionSecret": coffee_connection()}),
        ),
    )
    .await
    .expect("create");
    let db = wait_dbi(&api, "conn", "Ready", TIMEOUT, is_ready).await;
    let data = wait_secret(
        &client,
        &ns,
        "db-connection",
        "the connection Secret",
        |_| true,
    )
    .await;
    assert_eq!(
        common::rds_master_password(&id).as_deref(),
        Some("Sup3r-Secret-Passw0rd"),
        "RDS got the Secret's password"
    );
    assert_connection(&data, &db, "Sup3r-Secret-Passw0rd");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let secret = secrets.get("db-connection").await.unwrap();
    assert_eq!(
        secret.owner_references()[0].uid,
        db.metadata.uid.clone().unwrap(),
        "owned by the DBInstance"
    );

    // Tampered with -> restored.
    secrets
        .patch(
            "db-connection",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"APP_DB_PASSWORD": "wrong", "host": "evil"}})),
        )
        .await
        .unwrap();
    wait_secret(
        &client,
        &ns,
        "db-connection",
        "the tampered Secret restored",
        |d| d["APP_DB_PASSWORD"] == "Sup3r-Secret-Passw0rd" && d["host"] == data["host"],
    )
    .await;
    // Deleted -> restored (a new object).
    let old_uid = secrets.get("db-connection").await.unwrap().uid();
    secrets
        .delete("db-connection", &DeleteParams::default())
        .await
        .unwrap();
    wait_for("the deleted Secret restored", TIMEOUT, || async {
        let restored = secrets.get_opt("db-connection").await.ok()??;
        (restored.uid() != old_uid && restored.data.as_ref().map(|d| d.len()) == Some(data.len()))
            .then_some(())
    })
    .await;

    // Port changed -> updated.
    api.patch(
        "conn",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"port": 3307}})),
    )
    .await
    .unwrap();
    wait_secret(&client, &ns, "db-connection", "the new port", |d| {
        d["port"] == "3307" && d["uri"].contains(":3307/")
    })
    .await;

    // Password rotated in the referenced Secret -> RDS and the connection Secret follow. (With
    // characters a URI must escape; it used to use '/' and '@', which RDS refuses and the operator
    // now refuses first.)
    secrets
        .patch(
            "db-password",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"password": "N3w-Passw0rd%with#chars"}})),
        )
        .await
        .unwrap();
    let rotated = wait_secret(&client, &ns, "db-connection", "the rotated password", |d| {
        d["password"] == "N3w-Passw0rd%with#chars"
    })
    .await;
    assert_eq!(
        common::rds_master_password(&id).as_deref(),
        Some("N3w-Passw0rd%with#chars")
    );
    assert_eq!(rotated["APP_DB_PASSWORD"], "N3w-Passw0rd%with#chars");
    assert!(
        rotated["uri"].contains("N3w-Passw0rd%25with%23chars"),
        "{}",
        rotated["uri"]
    );

    assert_no_leak(
        &client,
        &ns,
        "conn",
        &operator,
        &["Sup3r-Secret-Passw0rd", "N3w-Passw0rd%with#chars"],
    )
    .await;
    common::delete_and_wait(&api, "conn").await;
    // Changed openly in issue 77: the garbage collector deletes it, following its ownerReference,
    // once the CR is gone (the operator holds no delete on Secrets); it was gone before the CR.
    gone_with_its_owner(&client, &ns, &["db-connection"]).await;
    assert!(common::describe(&rds, &id).await.is_none());
}

#[tokio::test]
async fn generated_password() {
    let (client, ns, api, _rds) = setup("genpw").await;
    let id = common::unique("genpw");
    let operator = Operator::start(&ns);
    let mut db = dbinstance(
        "genpw",
        &id,
        json!({"connectionSecret": coffee_connection()}),
    );
    db.spec.password.master_user_password = None;
    api.create(&PostParams::default(), &db)
        .await
        .expect("create");
    let db = wait_dbi(&api, "genpw", "Ready", TIMEOUT, is_ready).await;
    let generated = common::secret_data(&client, &ns, "genpw-master-password")
        .await
        .expect("generated password Secret")["password"]
        .clone();
    // Strong, and within every engine's limits (Oracle takes 30 at most; this used to be 32).
    assert_eq!(generated.len(), 30, "a strong password every engine takes");
    assert_eq!(
        common::rds_master_password(&id).as_deref(),
        Some(generated.as_str())
    );
    let data = wait_secret(
        &client,
        &ns,
        "db-connection",
        "the connection Secret",
        |_| true,
    )
    .await;
    assert_connection(&data, &db, &generated);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    assert_eq!(
        secrets
            .get("genpw-master-password")
            .await
            .unwrap()
            .owner_references()[0]
            .uid,
        db.metadata.uid.clone().unwrap()
    );
    assert_no_leak(&client, &ns, "genpw", &operator, &[&generated]).await;
    common::delete_and_wait(&api, "genpw").await;
    gone_with_its_owner(&client, &ns, &["genpw-master-password", "db-connection"]).await;
}

/// The Secrets `names`, deleted by the garbage collector (kube-controller-manager) once their
/// owner is gone.
async fn gone_with_its_owner(client: &kube::Client, ns: &str, names: &[&str]) {
    common::wait_for(
        "the owned Secrets gone with their owner",
        TIMEOUT,
        || async {
            for name in names {
                if common::secret_data(client, ns, name).await.is_some() {
                    return None;
                }
            }
            Some(())
        },
    )
    .await;
}

#[tokio::test]
async fn rds_managed_password() {
    let (client, ns, api, rds) = setup("managed").await;
    let id = common::unique("managed");
    let operator = Operator::start(&ns);
    let mut db = dbinstance(
        "managed",
        &id,
        json!({"connectionSecret": coffee_connection(), "manageMasterUserPassword": true}),
    );
    db.spec.password.master_user_password = None;
    api.create(&PostParams::default(), &db)
        .await
        .expect("create");
    let db = wait_dbi(&api, "managed", "Ready", TIMEOUT, is_ready).await;
    let arn = common::describe(&rds, &id)
        .await
        .and_then(|i| {
            i.master_user_secret()
                .and_then(|s| s.secret_arn().map(str::to_owned))
        })
        .expect("RDS manages the password in Secrets Manager");
    let sm = aws_sdk_secretsmanager::Client::new(
        &aws_config::defaults(aws_config::BehaviorVersion::latest())
            .endpoint_url(common::aws_endpoint())
            .region(aws_config::Region::new(common::region()))
            .load()
            .await,
    );
    let current = |sm: aws_sdk_secretsmanager::Client, arn: String| async move {
        let text = sm
            .get_secret_value()
            .secret_id(arn)
            .send()
            .await
            .unwrap()
            .secret_string()
            .unwrap()
            .to_owned();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["password"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let password = current(sm.clone(), arn.clone()).await;
    let data = wait_secret(
        &client,
        &ns,
        "db-connection",
        "the connection Secret",
        |_| true,
    )
    .await;
    assert_connection(&data, &db, &password);
    assert!(
        common::secret_data(&client, &ns, "managed-master-password")
            .await
            .is_none(),
        "no generated password"
    );

    // RDS rotates the secret: the connection Secret follows within the drift interval.
    let rotated = "Rotated-By-Secrets-Manager-2026";
    sm.put_secret_value()
        .secret_id(&arn)
        .secret_string(json!({"username": "admin", "password": rotated}).to_string())
        .send()
        .await
        .expect("rotate");
    wait_secret(
        &client,
        &ns,
        "db-connection",
        "the rotated managed password",
        |d| d["password"] == rotated,
    )
    .await;
    assert_no_leak(&client, &ns, "managed", &operator, &[&password, rotated]).await;
    common::delete_and_wait(&api, "managed").await;
}

#[tokio::test]
async fn a_template_with_an_unknown_placeholder_is_refused() {
    let (_client, ns, api, _rds) = setup("template").await;
    let id = common::unique("template");
    let _operator = Operator::start(&ns);
    api.create(
        &PostParams::default(),
        &dbinstance(
            "template",
            &id,
            json!({"connectionSecret": {"name": "db-connection", "extraKeys": {"APP_DB_HOST": "{{ hostname }}"}}}),
        ),
    )
    .await
    .expect("create");
    let db = wait_dbi(
        &api,
        "template",
        "Synced=False InvalidSpec",
        TIMEOUT,
        |db| common::condition(db, "Synced").is_some_and(|c| c.1 == "InvalidSpec"),
    )
    .await;
    let message = common::condition(&db, "Synced").unwrap().2;
    assert!(
        message.contains("APP_DB_HOST") && message.contains("unknown placeholder {{ hostname }}"),
        "{message}"
    );
    assert_eq!(
        common::server_calls(&id).get("CreateDBInstance"),
        None,
        "nothing is created half-way"
    );
    // Fixed -> goes ahead at once.
    api.patch(
        "template",
        &PatchParams::default(),
        &Patch::Merge(
            json!({"spec": {"connectionSecret": {"extraKeys": {"APP_DB_HOST": "{{ host }}"}}}}),
        ),
    )
    .await
    .unwrap();
    wait_dbi(&api, "template", "Ready after the fix", TIMEOUT, is_ready).await;
    common::delete_and_wait(&api, "template").await;
}

#[tokio::test]
async fn the_coffee_manage_example_gets_every_variable_it_reads() {
    let client = common::client_with_crd().await;
    let ns = common::namespace(&client, "coffee").await;
    let dir = format!("{}/deploy/examples/coffee-manage", common::REPO);
    let read = |file: &str| std::fs::read_to_string(format!("{dir}/{file}")).expect("example file");
    let password: Secret = serde_yaml::from_str(&read("password-secret.yaml")).unwrap();
    let mut db: DBInstance = serde_yaml::from_str(&read("dbinstance.yaml")).unwrap();
    let deployment: Deployment = serde_yaml::from_str(&read("deployment.yaml")).unwrap();
    let identifier = common::unique("coffee-db");
    db.spec.db_instance_identifier = Some(identifier.clone());
    // The example's subnet group, with the emulator's subnets in place of the placeholders.
    let mut group: rds_operator::dbsubnetgroup::DBSubnetGroup =
        serde_yaml::from_str(&read("dbsubnetgroup.yaml")).unwrap();
    group.spec.subnet_ids = crate::subnetgroups::coffee_subnets(&common::rds().await).await;
    group.spec.db_subnet_group_name = Some(common::unique("coffee-db-subnets"));
    let reference = db
        .spec
        .network
        .db_subnet_group_ref
        .as_ref()
        .expect("the example refers to its group");
    assert_eq!(reference.name, group.metadata.name.clone().unwrap());
    Api::<rds_operator::dbsubnetgroup::DBSubnetGroup>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &group)
        .await
        .expect("the example DBSubnetGroup is accepted");

    Api::<Secret>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &password)
        .await
        .unwrap();
    let api: Api<DBInstance> = Api::namespaced(client.clone(), &ns);
    let _operator = Operator::start(&ns);
    api.create(&PostParams::default(), &db)
        .await
        .expect("the example DBInstance is accepted");
    // The Deployment is valid for the API server (no kubelet runs it here).
    Api::<Deployment>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &deployment)
        .await
        .expect("the example Deployment is accepted");
    wait_dbi(&api, "coffee-db", "Ready", TIMEOUT, is_ready).await;

    let connection = db
        .spec
        .connection
        .connection_secret
        .as_ref()
        .expect("the example asks for a connection Secret");
    let data = wait_secret(
        &client,
        &ns,
        &connection.name,
        "the connection Secret",
        |_| true,
    )
    .await;
    let container = &deployment.spec.unwrap().template.spec.unwrap().containers[0];
    let from: Vec<_> = container
        .env_from
        .iter()
        .flatten()
        .filter_map(|e| e.secret_ref.as_ref().map(|r| r.name.clone()))
        .collect();
    assert_eq!(
        from,
        vec![connection.name.clone()],
        "the Deployment reads the Secret the operator writes"
    );
    let mut reads: Vec<String> = COFFEE_KEYS.iter().map(|k| k.to_string()).collect();
    reads.extend(
        container
            .env
            .iter()
            .flatten()
            .filter_map(|e| e.value_from.as_ref()?.secret_key_ref.as_ref())
            .map(|r| r.key.clone()),
    );
    for var in reads {
        assert!(
            data.contains_key(&var),
            "the app reads {var}, which the Secret lacks: {:?}",
            data.keys()
        );
    }
    assert_eq!(data["APP_DB_PASSWORD"], "Coffee-Manage-Demo-2026");
    assert_eq!(data["APP_DB_NAME"], "COFFEE");
    assert_eq!(data["APP_DB_USER"], "admin");
    // The example's read replica: the same variables, with coffee-db's credentials.
    let mut replica: DBInstance = serde_yaml::from_str(&read("replica.yaml")).unwrap();
    let replica_id = common::unique("coffee-reports");
    replica.spec.db_instance_identifier = Some(replica_id.clone());
    api.create(&PostParams::default(), &replica)
        .await
        .expect("the example replica is accepted");
    wait_dbi(
        &api,
        "coffee-db-reports",
        "the replica Ready",
        TIMEOUT,
        is_ready,
    )
    .await;
    let name = replica
        .spec
        .connection
        .connection_secret
        .as_ref()
        .unwrap()
        .name
        .clone();
    let copy = wait_secret(&client, &ns, &name, "the replica's Secret", |_| true).await;
    for key in COFFEE_KEYS {
        assert!(copy.contains_key(key), "the replica's Secret lacks {key}");
    }
    assert_eq!(copy["APP_DB_PASSWORD"], data["APP_DB_PASSWORD"]);
    assert_eq!(copy["APP_DB_USER"], "admin");
    assert_eq!(copy["APP_DB_NAME"], "COFFEE");
    assert_eq!(common::calls(&replica_id, "CreateDBInstanceReadReplica"), 1);
    common::delete_and_wait(&api, "coffee-db-reports").await;
    common::delete_and_wait(&api, "coffee-db").await;
}
