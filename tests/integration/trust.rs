//! Trust boundaries: a DBInstance author reaches nothing that is not theirs.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, PostParams};
use rds_operator::dbinstance::{OWNER_NAME_TAG, OWNER_TAG};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::common::{
    self, Operator, condition, dbinstance, is_ready, setup, synced_reason, unique, wait_dbi,
};

const TIMEOUT: Duration = Duration::from_secs(90);

/// The Secret as stored, for byte-for-byte comparison.
async fn raw_secret(client: &kube::Client, ns: &str, name: &str) -> Secret {
    let mut s = Api::<Secret>::namespaced(client.clone(), ns)
        .get(name)
        .await
        .expect("Secret");
    // Only what a write would change: data, type, owners, labels, annotations.
    s.metadata.managed_fields = None;
    s
}

#[tokio::test]
async fn a_dbinstance_cannot_take_over_another_ones_password_secret() {
    let (client, ns, api, _rds) = setup("takeover").await;
    let operator = Operator::start(&ns);
    // The victim: the Coffee Manage database, password in db-password.
    let victim_id = unique("victim");
    api.create(
        &PostParams::default(),
        &dbinstance("victim", &victim_id, json!({})),
    )
    .await
    .expect("create victim");
    wait_dbi(&api, "victim", "ready", TIMEOUT, is_ready).await;
    let before = raw_secret(&client, &ns, "db-password").await;
    let rds_password = common::rds_master_password(&victim_id);
    assert_eq!(rds_password.as_deref(), Some("Sup3r-Secret-Passw0rd"));

    // The attacker may create DBInstances, not Secrets: it names the victim's password Secret as
    // its connection Secret.
    common::secret(
        &client,
        &ns,
        "attacker-password",
        "password",
        "Att4cker-Passw0rd!",
    )
    .await;
    let attacker_id = unique("attacker");
    let attack = json!({
        "masterUserPassword": {"name": "attacker-password", "key": "password"},
        "connectionSecret": {"name": "db-password"},
    });
    api.create(
        &PostParams::default(),
        &dbinstance("attacker", &attacker_id, attack),
    )
    .await
    .expect("create attacker");
    let attacker = wait_dbi(&api, "attacker", "refused", TIMEOUT, |db| {
        synced_reason(db) == "InvalidSpec"
    })
    .await;
    let (_, _, message) = condition(&attacker, "Synced").unwrap();
    assert!(
        message.contains("master password Secret of DBInstance victim"),
        "{message}"
    );
    // Passes of the operator's for anything to go wrong.
    let untouched = || async { raw_secret(&client, &ns, "db-password").await.data == before.data };
    let what = "the victim's Secret is unchanged byte for byte";
    common::holds_over_polls(&operator, what, untouched).await;
    let after = raw_secret(&client, &ns, "db-password").await;
    assert_eq!(
        after.data, before.data,
        "the victim's Secret is unchanged byte for byte"
    );
    assert_eq!(
        after.metadata.owner_references,
        before.metadata.owner_references
    );
    assert_eq!(
        after.metadata.resource_version,
        before.metadata.resource_version
    );
    assert_eq!(common::rds_master_password(&victim_id), rds_password);
    assert!(
        !common::event_reasons(&client, &ns, "victim")
            .await
            .contains(&"PasswordRotated".into())
    );
    let attacker_calls = common::server_calls(&attacker_id);
    assert!(
        !attacker_calls.contains_key("CreateDBInstance"),
        "nothing created for the attacker: {attacker_calls:?}"
    );

    // Deleting the attacker deletes nothing of the victim's.
    common::delete_and_wait(&api, "attacker").await;
    assert_eq!(
        raw_secret(&client, &ns, "db-password").await.data,
        before.data
    );
    common::delete_and_wait(&api, "victim").await;
    drop(operator);
}

#[tokio::test]
async fn a_secret_the_dbinstance_does_not_control_is_never_written() {
    let (client, ns, api, _rds) = setup("conflict").await;
    let _operator = Operator::start(&ns);
    // Someone's own Secret, used by nobody's DBInstance.
    common::secret(&client, &ns, "app-config", "password", "not-the-operators").await;
    let before = raw_secret(&client, &ns, "app-config").await;
    let id = unique("conflict");
    api.create(
        &PostParams::default(),
        &dbinstance(
            "db",
            &id,
            json!({"connectionSecret": {"name": "app-config"}}),
        ),
    )
    .await
    .expect("create");
    let db = wait_dbi(&api, "db", "ConnectionSecretConflict", TIMEOUT, |db| {
        synced_reason(db) == "ConnectionSecretConflict"
    })
    .await;
    let (_, _, message) = condition(&db, "Synced").unwrap();
    assert!(message.contains("app-config"), "{message}");
    assert!(
        common::event_reasons(&client, &ns, "db")
            .await
            .contains(&"ConnectionSecretConflict".into())
    );
    let after = raw_secret(&client, &ns, "app-config").await;
    assert_eq!(after.data, before.data);
    assert_eq!(
        after.metadata.resource_version,
        before.metadata.resource_version
    );
    common::delete_and_wait(&api, "db").await;
    let kept = raw_secret(&client, &ns, "app-config").await;
    assert_eq!(
        kept.data, before.data,
        "and it is not deleted with the DBInstance"
    );
}

#[tokio::test]
async fn status_holds_no_value_a_reader_can_check_a_password_against() {
    let (_client, ns, api, _rds) = setup("hash").await;
    let _operator = Operator::start(&ns);
    let id = unique("hash");
    api.create(&PostParams::default(), &dbinstance("db", &id, json!({})))
        .await
        .expect("create");
    let db = wait_dbi(&api, "db", "ready", TIMEOUT, is_ready).await;
    let stored = db
        .status
        .as_ref()
        .unwrap()
        .common
        .master_user_password_hash
        .clone()
        .unwrap();
    // Everything a reader of the DBInstance has: its uid and the sample's password.
    let uid = db.uid().unwrap();
    let password = "Sup3r-Secret-Passw0rd";
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    for guess in [
        format!("rds-operator:{uid}:{password}"),
        format!("{uid}{password}"),
        format!("{uid}\0{password}"),
        password.to_owned(),
    ] {
        assert_ne!(stored, hex(&Sha256::digest(guess.as_bytes())), "{guess:?}");
    }
    assert!(!stored.contains(password));
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn no_password_in_logs_even_at_trace() {
    let (_client, ns, api, _rds) = setup("trace").await;
    let args: Vec<String> = [
        "--namespace",
        &ns,
        "--busy-poll-interval",
        "1s",
        "--drift-interval",
        "5s",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    let operator = Operator::spawn(&args, common::kubeconfig(), &[("RUST_LOG", "trace")]);
    let id = unique("trace");
    api.create(
        &PostParams::default(),
        &dbinstance(
            "db",
            &id,
            json!({"connectionSecret": {"name": "db-connection"}}),
        ),
    )
    .await
    .expect("create");
    wait_dbi(&api, "db", "ready", TIMEOUT, is_ready).await;
    common::delete_and_wait(&api, "db").await;
    let logs = operator.logs();
    assert!(logs.contains("TRACE"), "the operator did log at trace");
    for needle in [
        "Sup3r-Secret-Passw0rd",
        "MasterUserPassword=",
        "Sup3r-Secret-Passw0rd".trim(),
    ] {
        assert!(!logs.contains(needle), "{needle} in the trace log");
    }
}

/// A DBUser's password, set in PostgreSQL with CREATE ROLE ... PASSWORD, is nowhere in a trace
/// log (the database client's statement logging is cut off, as the AWS SDK's is).
#[tokio::test]
async fn no_database_users_password_in_logs_even_at_trace() {
    let (client, ns, api, _rds) = setup("trace-users").await;
    let args: Vec<String> = ["--namespace", &ns, "--busy-poll-interval", "1s"]
        .iter()
        .map(|a| a.to_string())
        .collect();
    let operator = Operator::spawn(&args, common::kubeconfig(), &[("RUST_LOG", "trace")]);
    common::secret(
        &client,
        &ns,
        "user-password",
        "password",
        "Us3r-S3cret-in-PG",
    )
    .await;
    let spec = json!({"engine": "postgres", "engineVersion": "16.3",
                      "tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    api.create(
        &PostParams::default(),
        &dbinstance("db", &unique("trace-users"), spec),
    )
    .await
    .expect("create");
    wait_dbi(&api, "db", "ready", TIMEOUT, is_ready).await;
    let users: Api<rds_operator::dbuser::DBUser> = Api::namespaced(client.clone(), &ns);
    let user = serde_json::from_value(json!({
        "metadata": {"name": "app"},
        "spec": {"dbInstanceRef": {"name": "db"},
                 "passwordSecretRef": {"name": "user-password", "key": "password"},
                 "grants": [{"database": "COFFEE", "preset": "ReadOnly"}]},
    }))
    .expect("a DBUser");
    users
        .create(&PostParams::default(), &user)
        .await
        .expect("create DBUser");
    common::wait_object(&users, "app", "Ready", |u| {
        common::object_condition(u, "Ready").is_some_and(|(s, _, _)| s == "True")
    })
    .await;
    users
        .delete("app", &Default::default())
        .await
        .expect("delete DBUser");
    common::wait_object_gone(&users, "app").await;
    common::delete_and_wait(&api, "db").await;
    let logs = operator.logs();
    assert!(logs.contains("TRACE"), "the operator did log at trace");
    for needle in ["Us3r-S3cret-in-PG", "Sup3r-Secret-Passw0rd"] {
        assert!(!logs.contains(needle), "{needle} in the trace log");
    }
}

#[tokio::test]
async fn identifier_in_use_does_not_say_whose() {
    let (client, ns, api, rds) = setup("whose").await;
    let id = unique("whose");
    let tag = |k: &str, v: &str| aws_sdk_rds::types::Tag::builder().key(k).value(v).build();
    (rds.create_db_instance())
        .db_instance_identifier(&id)
        .engine("mysql")
        .db_instance_class("db.t3.micro")
        .allocated_storage(20)
        .tags(tag(OWNER_TAG, "another-uid"))
        .tags(tag(OWNER_NAME_TAG, "payments-team/ledger-db"))
        .send()
        .await
        .expect("another tenant's instance");
    let operator = Operator::start(&ns);
    api.create(&PostParams::default(), &dbinstance("db", &id, json!({})))
        .await
        .expect("create");
    let db = wait_dbi(&api, "db", "IdentifierInUse", TIMEOUT, |db| {
        synced_reason(db) == "IdentifierInUse"
    })
    .await;
    let (_, _, message) = condition(&db, "Synced").unwrap();
    let notes = common::event_notes(&client, &ns, "db").await;
    for text in [&message, &notes] {
        assert!(
            !text.contains("payments-team") && !text.contains("ledger-db"),
            "{text}"
        );
    }
    assert!(
        operator.logs().contains("payments-team/ledger-db"),
        "the owner is in the operator log"
    );
    common::delete_and_wait(&api, "db").await;
    assert!(
        common::describe(&rds, &id).await.is_some(),
        "their instance is untouched"
    );
}

#[tokio::test]
async fn a_password_rds_would_refuse_is_refused_before_any_call() {
    let (client, ns, api, _rds) = setup("badpw").await;
    let _operator = Operator::start(&ns);
    // A Secret made with --from-file from a file ending in a newline.
    common::secret(
        &client,
        &ns,
        "newline",
        "password",
        "Sup3r-Secret-Passw0rd\n",
    )
    .await;
    let id = unique("badpw");
    let spec = json!({"masterUserPassword": {"name": "newline", "key": "password"}});
    api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await
        .expect("create");
    let db = wait_dbi(&api, "db", "InvalidSpec", TIMEOUT, |db| {
        synced_reason(db) == "InvalidSpec"
    })
    .await;
    let (_, _, message) = condition(&db, "Synced").unwrap();
    assert!(message.contains("line break"), "{message}");
    assert!(!message.contains("Sup3r"), "{message}");
    let calls = common::server_calls(&id);
    assert!(
        calls.keys().all(|action| action.starts_with("Describe")),
        "no call but a read: {calls:?}"
    );
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn two_releases_in_one_namespace_each_reconcile_their_own() {
    let (_client, first_ns, first, _rds) = setup("release-a").await;
    let (_client, second_ns, second, _rds) = setup("release-b").await;
    let lease_ns = common::namespace(&common::client().await, "operators").await;
    let start = |ns: &str, lease: &str| {
        let args: Vec<String> = [
            "--namespace",
            ns,
            "--busy-poll-interval",
            "1s",
            "--drift-interval",
            "5s",
            "--leader-elect",
            "--leader-election-namespace",
            &lease_ns,
            "--leader-election-lease-name",
            lease,
            "--leader-election-lease-duration",
            "5s",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        Operator::spawn(&args, common::kubeconfig(), &[])
    };
    let _a = start(&first_ns, "release-a-leader");
    let _b = start(&second_ns, "release-b-leader");
    let (a, b) = (unique("relA"), unique("relB"));
    first
        .create(&PostParams::default(), &dbinstance("db", &a, json!({})))
        .await
        .expect("a");
    second
        .create(&PostParams::default(), &dbinstance("db", &b, json!({})))
        .await
        .expect("b");
    wait_dbi(&first, "db", "ready under release a", TIMEOUT, is_ready).await;
    wait_dbi(&second, "db", "ready under release b", TIMEOUT, is_ready).await;
    // Each release leads with its own lease, both held at once, and each database was made once:
    // neither release waited for the other's lease, and neither made the other's database.
    use k8s_openapi::api::coordination::v1::Lease;
    let leases: Api<Lease> = Api::namespaced(common::client().await, &lease_ns);
    let holder = |name: &'static str| {
        let leases = leases.clone();
        async move {
            let lease = (leases.get(name).await).unwrap_or_else(|e| panic!("lease {name}: {e}"));
            (lease.spec.and_then(|s| s.holder_identity)).unwrap_or_else(|| panic!("{name} held"))
        }
    };
    // (A holder's name is its host's when no POD_NAME is set, so both may read the same here.)
    let _ = (
        holder("release-a-leader").await,
        holder("release-b-leader").await,
    );
    assert_eq!(
        common::calls(&a, "CreateDBInstance"),
        1,
        "release a's database"
    );
    assert_eq!(
        common::calls(&b, "CreateDBInstance"),
        1,
        "release b's database"
    );
    common::delete_and_wait(&first, "db").await;
    common::delete_and_wait(&second, "db").await;
}

#[tokio::test]
async fn a_leader_cut_off_from_its_api_server_steps_down_before_the_standby_leads() {
    use k8s_openapi::api::coordination::v1::Lease;
    let (client, ns, api, rds) = setup("cutoff").await;
    let lease_ns = common::namespace(&client, "cutoff-lease").await;
    // The leader reaches the API server through a proxy that will stop answering.
    let kubeconfig = std::fs::read_to_string(common::kubeconfig()).expect("kubeconfig");
    let server = (kubeconfig.lines())
        .find_map(|l| l.trim().strip_prefix("server: https://"))
        .expect("server line")
        .to_owned();
    let proxy = common::Proxy::start(server.clone(), false);
    let proxied = std::env::temp_dir().join(format!("{}.kubeconfig", unique("cutoff")));
    std::fs::write(
        &proxied,
        kubeconfig.replace(&server, &format!("127.0.0.1:{}", proxy.port)),
    )
    .expect("write kubeconfig");
    let args = |lease_ns: &str| -> Vec<String> {
        [
            "--namespace",
            &ns,
            "--busy-poll-interval",
            "1s",
            "--drift-interval",
            "2s",
            "--leader-elect",
            "--leader-election-namespace",
            lease_ns,
            "--leader-election-lease-duration",
            "6s",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect()
    };
    let leases: Api<Lease> = Api::namespaced(client.clone(), &lease_ns);
    let holder = || {
        let leases = leases.clone();
        async move {
            let lease = leases.get_opt("rds-operator-leader").await.ok()??;
            lease.spec?.holder_identity
        }
    };
    let mut leader = Operator::spawn(&args(&lease_ns), &proxied, &[]);
    let leader_name = leader.name.clone();
    common::wait_for("the first operator to lead", TIMEOUT, || {
        let (holder, name) = (holder(), leader_name.clone());
        async move { (holder.await? == name).then_some(()) }
    })
    .await;
    let standby = Operator::spawn(&args(&lease_ns), common::kubeconfig(), &[]);
    let id = unique("cutoff");
    api.create(&PostParams::default(), &dbinstance("db", &id, json!({})))
        .await
        .expect("create");
    wait_dbi(
        &api,
        "db",
        "ready under the first leader",
        TIMEOUT,
        is_ready,
    )
    .await;

    // The leader's connection stops answering, without closing.
    proxy.hang.store(true, std::sync::atomic::Ordering::SeqCst);
    let standby_name = standby.name.clone();
    common::wait_for("the standby to lead", TIMEOUT, || {
        let (holder, name) = (holder(), standby_name.clone());
        async move { (holder.await? == name).then_some(()) }
    })
    .await;
    assert!(
        !leader.running(),
        "the cut-off leader stopped before the standby took over"
    );
    // The new leader acts: a spec change reaches RDS.
    api.patch(
        "db",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"spec": {"dbInstanceClass": "db.t3.small"}})),
    )
    .await
    .expect("patch");
    common::wait_for("the new class in RDS", TIMEOUT, || {
        let (rds, id) = (rds.clone(), id.clone());
        async move {
            let i = common::describe(&rds, &id).await?;
            (i.db_instance_class() == Some("db.t3.small")).then_some(())
        }
    })
    .await;
    assert!(
        leader.logs().contains("leadership lost"),
        "the old leader said why it stopped"
    );
    common::delete_and_wait(&api, "db").await;
    drop(standby);
}
