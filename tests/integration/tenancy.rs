//! Multi-tenant clusters: two namespaces, one AWS account, one operator. Nothing team A applies
//! gives it team B's data, or changes, takes or deletes team B's database; what a platform admin
//! grants, it gets.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};
use rds_operator::dbinstance::{
    ADOPTABLE_BY_TAG, DBInstance, OWNER_NAME_TAG, OWNER_TAG, RESTORABLE_BY_TAG,
    SECRET_OWNER_ANNOTATION,
};
use rds_operator::dbsubnetgroup::DBSubnetGroup;
use serde_json::json;

use crate::common::TIMEOUT;
use crate::common::{
    self, Operator, calls, dbinstance, is_ready, patch_spec, setup, synced_reason, unique,
    wait_dbi, wait_for,
};
use crate::subnetgroups::coffee_subnets;
use crate::takeover::stack_instance;

struct Tenants {
    client: kube::Client,
    a: String,
    b: String,
    api_a: Api<DBInstance>,
    api_b: Api<DBInstance>,
    rds: aws_sdk_rds::Client,
}

/// Namespaces A and B, each with the password Secret `db-password`, and one operator for both.
async fn tenants(prefix: &str) -> (Tenants, Operator) {
    tenants_with(prefix, &[]).await
}

async fn tenants_with(prefix: &str, args: &[&str]) -> (Tenants, Operator) {
    let (client, a, api_a, rds) = setup(&format!("{prefix}-a")).await;
    let b = common::namespace(&client, &format!("{prefix}-b")).await;
    common::secret(&client, &b, "db-password", "password", "Team-B-Passw0rd").await;
    let api_b = Api::namespaced(client.clone(), &b);
    let operator = Operator::start_with(&format!("{a},{b}"), args);
    let t = Tenants {
        client,
        a,
        b,
        api_a,
        api_b,
        rds,
    };
    (t, operator)
}

/// Creates the DBInstance `name` for instance `id` with `spec` merged in.
async fn apply(api: &Api<DBInstance>, name: &str, id: &str, spec: serde_json::Value) {
    (api.create(&PostParams::default(), &dbinstance(name, id, spec))
        .await)
        .unwrap_or_else(|e| panic!("create {name}: {e}"));
}

async fn add_tag(rds: &aws_sdk_rds::Client, arn: &str, key: &str, value: &str) {
    let tag = aws_sdk_rds::types::Tag::builder()
        .key(key)
        .value(value)
        .build();
    (rds.add_tags_to_resource())
        .resource_name(arn)
        .tags(tag)
        .send()
        .await
        .expect("the platform admin's tag");
}

/// The platform admin's grant of an unowned instance to these namespaces (space-separated).
async fn grant_adoption(rds: &aws_sdk_rds::Client, id: &str, namespaces: &str) {
    let i = common::describe(rds, id).await.expect("the instance");
    add_tag(
        rds,
        i.db_instance_arn().expect("arn"),
        ADOPTABLE_BY_TAG,
        namespaces,
    )
    .await;
}

fn stalled(db: &DBInstance) -> bool {
    common::condition(db, "Stalled").is_some_and(|c| c.0 == "True")
}

/// Team B's database, Ready, and what it looked like then.
async fn team_b_database(t: &Tenants, id: &str, policy: &str) -> aws_sdk_rds::types::DbInstance {
    let spec = json!({"deletionPolicy": policy, "backupRetentionPeriod": 1});
    apply(&t.api_b, "db", id, spec).await;
    wait_dbi(&t.api_b, "db", "team B ready", TIMEOUT, |db| {
        is_ready(db) && synced_reason(db) == "Synced"
    })
    .await;
    common::describe(&t.rds, id)
        .await
        .expect("team B's instance")
}

/// Team B's database is as it was: Ready and Synced, same class, password and tags, nothing sent.
async fn team_b_untouched(t: &Tenants, id: &str, before: &aws_sdk_rds::types::DbInstance) {
    let db = t.api_b.get("db").await.expect("team B's DBInstance");
    assert!(
        is_ready(&db) && synced_reason(&db) == "Synced",
        "{:?}",
        db.status
    );
    let now = common::describe(&t.rds, id)
        .await
        .expect("team B's instance");
    assert_eq!(now.db_instance_class(), before.db_instance_class());
    assert_eq!(common::tags_of(&now), common::tags_of(before));
    assert_eq!(
        common::rds_master_password(id).as_deref(),
        Some("Team-B-Passw0rd")
    );
    assert_eq!(calls(id, "ModifyDBInstance"), 0);
}

#[tokio::test]
async fn another_namespaces_snapshot_or_instance_is_not_restored_until_granted() {
    let (t, operator) = tenants("restore").await;
    let b_id = unique("teamb");
    let before = team_b_database(&t, &b_id, "Delete").await;
    // A manual snapshot of B's database: it carries B's ownership tags (copyTagsToSnapshot).
    let snapshot = format!("{b_id}-manual");
    let created = (t.rds.create_db_snapshot())
        .db_instance_identifier(&b_id)
        .db_snapshot_identifier(&snapshot)
        .send()
        .await
        .expect("B's snapshot");
    let snapshot_arn = created
        .db_snapshot()
        .and_then(|s| s.db_snapshot_arn())
        .expect("arn");
    let snapshot_tags: BTreeMap<_, _> = (created.db_snapshot().unwrap().tag_list().iter())
        .map(|t| (t.key().unwrap_or_default(), t.value().unwrap_or_default()))
        .collect();
    assert_eq!(
        snapshot_tags.get(OWNER_NAME_TAG).copied(),
        Some(format!("{}/db", t.b).as_str()),
        "the operator created B's instance with copyTagsToSnapshot"
    );

    // Team A names B's snapshot, and B's instance at its latest restorable time.
    let (from_snapshot, from_instance) = (unique("steal"), unique("stealpitr"));
    let specs = [
        (
            "copy",
            &from_snapshot,
            json!({"dbSnapshotIdentifier": snapshot}),
        ),
        (
            "pitr",
            &from_instance,
            json!({"sourceDBInstanceIdentifier": b_id, "useLatestRestorableTime": true}),
        ),
    ];
    for (name, id, from) in &specs {
        let spec = json!({"deletionPolicy": "Delete", "restoreFrom": from});
        apply(&t.api_a, name, id, spec).await;
    }
    for (name, _, _) in &specs {
        let db = wait_dbi(&t.api_a, name, "RestoreSourceNotOwned", TIMEOUT, |db| {
            synced_reason(db) == "RestoreSourceNotOwned"
        })
        .await;
        assert!(stalled(&db), "{:?}", db.status);
        let message = common::condition(&db, "Synced").unwrap().2;
        assert!(
            !message.contains(&t.b),
            "the message does not say whose: {message}"
        );
    }
    // No restore call, no instance, no Secret with B's data.
    let none = || async {
        calls(&from_snapshot, "RestoreDBInstanceFromDBSnapshot") == 0
            && calls(&from_instance, "RestoreDBInstanceToPointInTime") == 0
            && common::describe(&t.rds, &from_snapshot).await.is_none()
            && common::describe(&t.rds, &from_instance).await.is_none()
    };
    common::holds_over_polls(&operator, "nothing restored from B's", none).await;
    team_b_untouched(&t, &b_id, &before).await;

    // Whoever controls the account grants A the snapshot: A restores it, under its own ownership.
    add_tag(&t.rds, snapshot_arn, RESTORABLE_BY_TAG, &t.a).await;
    let db = wait_dbi(&t.api_a, "copy", "restored and Ready", TIMEOUT, |db| {
        is_ready(db) && synced_reason(db) == "Synced"
    })
    .await;
    let restored = common::describe(&t.rds, &from_snapshot)
        .await
        .expect("restored");
    assert_eq!(
        common::tags_of(&restored).get(OWNER_TAG),
        db.metadata.uid.as_ref()
    );
    assert_eq!(calls(&from_snapshot, "RestoreDBInstanceFromDBSnapshot"), 1);
    // The point-in-time restore, never granted, still made no call.
    assert_eq!(calls(&from_instance, "RestoreDBInstanceToPointInTime"), 0);
    team_b_untouched(&t, &b_id, &before).await;
    for (name, _, _) in &specs {
        common::delete_and_wait(&t.api_a, name).await;
    }
    common::delete_and_wait(&t.api_b, "db").await;
}

#[tokio::test]
async fn an_unowned_instance_is_observed_or_adopted_only_where_granted_and_never_from_two() {
    let (t, operator) = tenants("claim").await;
    let id = unique("stack");
    // A CloudFormation-made instance; the platform admin grants it to B.
    stack_instance(&t.rds, &id, "db.t3.small", &t.b).await;
    let observe = json!({"managementPolicy": "ObserveOnly", "connectionSecret": {"name": "conn"}});
    t.api_b
        .create(
            &PostParams::default(),
            &dbinstance("db", &id, observe.clone()),
        )
        .await
        .expect("B observes");
    wait_dbi(&t.api_b, "db", "B observes", TIMEOUT, |db| {
        synced_reason(db) == "Observed"
    })
    .await;

    // A, not granted, can neither adopt nor observe it.
    let adopt = json!({"adoptionPolicy": "Adopt", "backupRetentionPeriod": 0});
    apply(&t.api_a, "adopt", &id, adopt).await;
    apply(&t.api_a, "watch", &id, observe).await;
    let db = wait_dbi(&t.api_a, "adopt", "IdentifierInUse", TIMEOUT, |db| {
        synced_reason(db) == "IdentifierInUse"
    })
    .await;
    assert!(
        common::condition(&db, "Synced")
            .unwrap()
            .2
            .contains(ADOPTABLE_BY_TAG),
        "{:?}",
        db.status
    );
    wait_dbi(&t.api_a, "watch", "NotGranted", TIMEOUT, |db| {
        synced_reason(db) == "NotGranted"
    })
    .await;
    let conn: Api<Secret> = Api::namespaced(t.client.clone(), &t.a);
    assert!(
        conn.get_opt("conn").await.expect("get").is_none(),
        "no Secret for A"
    );

    // Granted to A as well, the adoption is still refused: B observes it.
    grant_adoption(&t.rds, &id, &format!("{} {}", t.b, t.a)).await;
    wait_dbi(&t.api_a, "watch", "A observes, granted", TIMEOUT, |db| {
        synced_reason(db) == "Observed"
    })
    .await;
    let refused = || async {
        let db = t.api_a.get("adopt").await.expect("get");
        synced_reason(&db) == "IdentifierInUse"
    };
    common::holds_over_polls(&operator, "the adoption still refused", refused).await;
    let i = common::describe(&t.rds, &id).await.expect("instance");
    assert!(
        !common::tags_of(&i).contains_key(OWNER_TAG),
        "nobody took it"
    );
    for action in [
        "AddTagsToResource",
        "ModifyDBInstance",
        "RemoveTagsFromResource",
    ] {
        // The admin's own AddTagsToResource is the one counted.
        let expected = u64::from(action == "AddTagsToResource");
        assert_eq!(calls(&id, action), expected, "{action}");
    }
    let b = t.api_b.get("db").await.expect("get");
    assert!(
        is_ready(&b) && synced_reason(&b) == "Observed",
        "{:?}",
        b.status
    );
    let conn_b: Api<Secret> = Api::namespaced(t.client.clone(), &t.b);
    assert!(conn_b.get_opt("conn").await.expect("get").is_some());

    // Once B stops observing, A may adopt what it is granted.
    common::delete_and_wait(&t.api_b, "db").await;
    wait_dbi(&t.api_a, "adopt", "adopted", TIMEOUT, |db| {
        synced_reason(db) == "AdoptedWithDifferences"
    })
    .await;
    for name in ["watch", "adopt"] {
        patch_spec(&t.api_a, name, json!({"deletionPolicy": "Delete"})).await;
        common::delete_and_wait(&t.api_a, name).await;
    }
}

#[tokio::test]
async fn an_instance_only_observed_or_used_before_by_another_team_is_never_restored() {
    let (t, operator) = tenants("lost").await;
    // 1. A observes a stack's instance, then is switched to Full; the real owner deletes the
    //    instance with a final snapshot. A creates and restores nothing.
    let stack = unique("stack");
    stack_instance(&t.rds, &stack, "db.t3.small", &t.a).await;
    let observe = json!({"managementPolicy": "ObserveOnly"});
    t.api_a
        .create(
            &PostParams::default(),
            &dbinstance("watch", &stack, observe),
        )
        .await
        .expect("A observes");
    wait_dbi(&t.api_a, "watch", "Observed", TIMEOUT, |db| {
        synced_reason(db) == "Observed"
    })
    .await;
    patch_spec(&t.api_a, "watch", json!({"managementPolicy": "Full"})).await;
    wait_dbi(&t.api_a, "watch", "IdentifierInUse", TIMEOUT, |db| {
        synced_reason(db) == "IdentifierInUse"
    })
    .await;
    (t.rds.delete_db_instance())
        .db_instance_identifier(&stack)
        .final_db_snapshot_identifier(format!("{stack}-final"))
        .send()
        .await
        .expect("the owner deletes it");

    // 2. B's database is deleted with a final snapshot; A then uses the identifier, and its own
    //    instance is deleted outside the operator, with no snapshot of its own.
    let reused = unique("reused");
    team_b_database(&t, &reused, "Snapshot").await;
    common::delete_and_wait(&t.api_b, "db").await;
    let snapshots_of = |id: String| {
        let rds = t.rds.clone();
        async move {
            let out = (rds.describe_db_snapshots())
                .db_instance_identifier(id)
                .send()
                .await;
            let out = out.expect("snapshots");
            // The manual ones: moto deletes every automated snapshot of an identifier with the
            // instance that has it now (AWS keeps each instance's automated backups apart).
            let mut ids: Vec<String> = (out.db_snapshots().iter())
                .filter(|s| s.snapshot_type() == Some("manual"))
                .filter_map(|s| s.db_snapshot_identifier().map(str::to_owned))
                .collect();
            ids.sort();
            ids
        }
    };
    let team_b_snapshots = snapshots_of(reused.clone()).await;
    assert!(
        team_b_snapshots.iter().any(|s| s.contains("-final-")),
        "{team_b_snapshots:?}"
    );
    let spec = json!({"deletionPolicy": "Delete", "backupRetentionPeriod": 0});
    apply(&t.api_a, "reuse", &reused, spec).await;
    wait_dbi(&t.api_a, "reuse", "ready", TIMEOUT, is_ready).await;
    (t.rds.delete_db_instance())
        .db_instance_identifier(&reused)
        .skip_final_snapshot(true)
        .delete_automated_backups(true)
        .send()
        .await
        .expect("deleted outside the operator");

    wait_dbi(&t.api_a, "watch", "NotFound", TIMEOUT, |db| {
        synced_reason(db) == "NotFound"
    })
    .await;
    wait_dbi(&t.api_a, "reuse", "DeletedOutOfBand", TIMEOUT, |db| {
        synced_reason(db) == "DeletedOutOfBand"
    })
    .await;
    let none = || async {
        let mut none = true;
        for id in [&stack, &reused] {
            none &= calls(id, "RestoreDBInstanceFromDBSnapshot") == 0
                && common::describe(&t.rds, id).await.is_none();
        }
        none
    };
    common::holds_over_polls(&operator, "nothing restored", none).await;
    assert_eq!(calls(&stack, "CreateDBInstance"), 1, "the stack's own");
    // B's snapshots are where B left them, and no other was taken.
    assert_eq!(snapshots_of(reused.clone()).await, team_b_snapshots);
    for name in ["watch", "reuse"] {
        common::delete_and_wait(&t.api_a, name).await;
    }
}

async fn secret_bytes(api: &Api<Secret>, name: &str) -> (BTreeMap<String, Vec<u8>>, Secret) {
    let s = api.get(name).await.expect("Secret");
    let data = (s.data.clone().unwrap_or_default().into_iter())
        .map(|(k, v)| (k, v.0))
        .collect();
    (data, s)
}

#[tokio::test]
async fn retain_keeps_the_password_through_foreground_and_background_deletion() {
    let (t, _operator) = tenants("retain").await;
    let secrets: Api<Secret> = Api::namespaced(t.client.clone(), &t.a);
    // "fg": Retain from the start; "bg": Delete at first, then Retain.
    let (fg, bg) = (unique("retainfg"), unique("retainbg"));
    for (name, id, policy) in [("fg", &fg, "Retain"), ("bg", &bg, "Delete")] {
        let spec = json!({
            "deletionPolicy": policy,
            "connectionSecret": {"name": format!("{name}-conn")},
        });
        let mut db = dbinstance(name, id, spec);
        db.spec.password.master_user_password = None;
        t.api_a
            .create(&PostParams::default(), &db)
            .await
            .expect("create");
    }
    let fg_db = wait_dbi(&t.api_a, "fg", "ready", TIMEOUT, is_ready).await;
    let advisories = fg_db
        .status
        .as_ref()
        .map(|s| s.advisories.clone())
        .unwrap_or_default();
    assert!(
        advisories
            .iter()
            .any(|a| a.contains("manageMasterUserPassword")),
        "{advisories:?}"
    );
    let reasons = common::event_reasons(&t.client, &t.a, "fg").await;
    assert!(
        reasons.contains(&"PasswordOnlyInNamespace".into()),
        "{reasons:?}"
    );
    wait_dbi(&t.api_a, "bg", "ready", TIMEOUT, is_ready).await;
    let owner_refs = |s: &Secret| {
        s.metadata
            .owner_references
            .clone()
            .unwrap_or_default()
            .len()
    };
    wait_for("the connection Secrets", TIMEOUT, || async {
        let fg = secrets.get_opt("fg-conn").await.ok()??;
        let bg = secrets.get_opt("bg-conn").await.ok()??;
        Some((fg, bg))
    })
    .await;
    let (_, bg_secret) = secret_bytes(&secrets, "bg-master-password").await;
    assert_eq!(
        owner_refs(&bg_secret),
        1,
        "under Delete the Secret is owned"
    );
    patch_spec(&t.api_a, "bg", json!({"deletionPolicy": "Retain"})).await;
    wait_for("bg's Secrets without ownerReference", TIMEOUT, || async {
        let p = secrets.get("bg-master-password").await.ok()?;
        let c = secrets.get("bg-conn").await.ok()?;
        (owner_refs(&p) == 0 && owner_refs(&c) == 0).then_some(())
    })
    .await;

    let mut kept = Vec::new();
    for name in [
        "fg-master-password",
        "fg-conn",
        "bg-master-password",
        "bg-conn",
    ] {
        let (data, s) = secret_bytes(&secrets, name).await;
        assert_eq!(owner_refs(&s), 0, "{name} has no ownerReference");
        let annotations = s.metadata.annotations.clone().unwrap_or_default();
        assert!(annotations.contains_key(SECRET_OWNER_ANNOTATION), "{name}");
        kept.push((name, data));
    }
    t.api_a
        .delete("fg", &DeleteParams::foreground())
        .await
        .expect("foreground deletion");
    t.api_a
        .delete("bg", &DeleteParams::background())
        .await
        .expect("background deletion");
    common::wait_gone(&t.api_a, "fg", TIMEOUT).await;
    common::wait_gone(&t.api_a, "bg", TIMEOUT).await;
    // The garbage collector has had its turn (kube-controller-manager runs it).
    tokio::time::sleep(Duration::from_secs(5)).await;
    for (name, data) in &kept {
        let (now, _) = secret_bytes(&secrets, name).await;
        assert_eq!(&now, data, "{name} is there, byte for byte");
    }
    for (prefix, id) in [("fg", &fg), ("bg", &bg)] {
        let (data, _) = secret_bytes(&secrets, &format!("{prefix}-master-password")).await;
        let password = String::from_utf8(data["password"].clone()).expect("utf-8");
        assert_eq!(
            common::rds_master_password(id).as_deref(),
            Some(password.as_str())
        );
        assert!(common::describe(&t.rds, id).await.is_some(), "retained");
        (t.rds.delete_db_instance())
            .db_instance_identifier(id.as_str())
            .skip_final_snapshot(true)
            .send()
            .await
            .expect("the test's own cleanup");
    }
}

#[tokio::test]
async fn a_tag_that_was_there_before_stays_when_the_spec_drops_it() {
    let (t, operator) = tenants("tags").await;
    let id = unique("tags");
    t.api_a
        .create(
            &PostParams::default(),
            &dbinstance("db", &id, json!({"deletionPolicy": "Delete"})),
        )
        .await
        .expect("create");
    wait_dbi(&t.api_a, "db", "ready", TIMEOUT, is_ready).await;
    // The platform's backup plan tags the instance; the team then lists the same tag, and a
    // tag of its own.
    let arn = common::describe(&t.rds, &id)
        .await
        .unwrap()
        .db_instance_arn()
        .unwrap()
        .to_owned();
    add_tag(&t.rds, &arn, "backup-plan", "daily").await;
    let listed = json!({"tags": [
        {"key": "app", "value": "coffee-manage"},
        {"key": "backup-plan", "value": "daily"},
        {"key": "team", "value": "cafe"},
    ]});
    patch_spec(&t.api_a, "db", listed).await;
    let db = wait_dbi(&t.api_a, "db", "team tag applied", TIMEOUT, |db| {
        (db.status.as_ref()).is_some_and(|s| s.common.applied_tag_keys.contains(&"team".to_owned()))
    })
    .await;
    let applied = db.status.unwrap().common.applied_tag_keys;
    assert_eq!(
        applied,
        vec!["app", "team"],
        "backup-plan stays the platform's"
    );
    // Both leave the spec: the team's tag goes, the platform's stays.
    patch_spec(
        &t.api_a,
        "db",
        json!({"tags": [{"key": "app", "value": "coffee-manage"}]}),
    )
    .await;
    wait_for("team tag removed", TIMEOUT, || async {
        let i = common::describe(&t.rds, &id).await?;
        (!common::tags_of(&i).contains_key("team")).then_some(())
    })
    .await;
    let kept = || async {
        let tags = common::tags_of(&common::describe(&t.rds, &id).await.expect("instance"));
        tags.get("backup-plan").map(String::as_str) == Some("daily")
    };
    common::holds_over_polls(&operator, "the tag from before stays", kept).await;
    let tags = common::tags_of(&common::describe(&t.rds, &id).await.expect("instance"));
    assert_eq!(
        tags.get("backup-plan").map(String::as_str),
        Some("daily"),
        "{tags:?}"
    );
    common::delete_and_wait(&t.api_a, "db").await;
}

#[tokio::test]
async fn a_group_another_namespace_manages_is_refused_and_its_deletion_finishes() {
    let (t, _operator) = tenants("groups").await;
    let groups: Api<DBSubnetGroup> = Api::namespaced(t.client.clone(), &t.b);
    let group_name = unique("bsubnets");
    let group: DBSubnetGroup = serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBSubnetGroup",
        "metadata": {"name": "subnets"},
        "spec": {
            "dbSubnetGroupName": group_name,
            "dbSubnetGroupDescription": "team B's subnets",
            "subnetIDs": coffee_subnets(&t.rds).await,
        }
    }))
    .expect("DBSubnetGroup");
    groups
        .create(&PostParams::default(), &group)
        .await
        .expect("B's group");
    common::wait_object(
        &groups,
        "subnets",
        "B's group Ready",
        |g: &DBSubnetGroup| common::object_condition(g, "Ready").is_some_and(|c| c.0 == "True"),
    )
    .await;
    // A names B's group by its RDS name.
    let id = unique("groups");
    let spec = json!({"dbSubnetGroupName": group_name, "deletionPolicy": "Delete"});
    apply(&t.api_a, "db", &id, spec).await;
    let db = wait_dbi(&t.api_a, "db", "GroupNotOwned", TIMEOUT, |db| {
        synced_reason(db) == "GroupNotOwned"
    })
    .await;
    assert!(stalled(&db));
    assert!(!common::condition(&db, "Synced").unwrap().2.contains(&t.b));
    assert_eq!(calls(&id, "CreateDBInstance"), 0);
    // B deletes its group: RDS lets it go, since nothing uses it.
    groups
        .delete("subnets", &DeleteParams::default())
        .await
        .expect("delete");
    common::wait_object_gone(&groups, "subnets").await;
    let gone = (t.rds.describe_db_subnet_groups())
        .db_subnet_group_name(&group_name)
        .send()
        .await;
    assert!(gone.is_err(), "the group is gone from RDS");
    common::delete_and_wait(&t.api_a, "db").await;
}

#[tokio::test]
async fn one_namespace_cannot_spend_the_accounts_read_rate_for_another() {
    // A shared poll every minute, and a budget of 10 direct reads a minute per namespace.
    let args = ["--drift-interval", "60s", "--namespace-read-budget", "10"];
    let (t, operator) = tenants_with("budget", &args).await;
    // Five instances, each observed by one DBInstance of A: one direct read of an instance serves
    // every observer of it for a while, so five observers of one instance could share their reads
    // and never reach the budget.
    let ids: Vec<String> = (0..5).map(|i| unique(&format!("budget{i}"))).collect();
    for id in &ids {
        stack_instance(&t.rds, id, "db.t3.small", &t.a).await;
    }
    let id = ids[0].clone();
    grant_adoption(&t.rds, &id, &format!("{} {}", t.a, t.b)).await;
    // A: five observers that each want a direct read every 10 s (30 a minute); B: one.
    let spec = json!({"managementPolicy": "ObserveOnly", "driftInterval": "10s"});
    for (i, id) in ids.iter().enumerate() {
        let name = format!("watch-{i}");
        let db = dbinstance(&name, id, spec.clone());
        t.api_a
            .create(&PostParams::default(), &db)
            .await
            .expect("A observes");
    }
    apply(&t.api_b, "watch", &id, spec).await;
    let started = std::time::Instant::now();
    wait_dbi(&t.api_b, "watch", "B observes", TIMEOUT, |db| {
        is_ready(db) && synced_reason(db) == "Observed"
    })
    .await;
    tokio::time::sleep(Duration::from_secs(40)).await;
    let reads = |ns: &str, outcome: &str| {
        let prefix = format!(
            "rds_operator_namespace_reads_total{{object_namespace=\"{ns}\",outcome=\"{outcome}\"}}"
        );
        common::operator_metric(&operator, &prefix)
    };
    let minutes = started.elapsed().as_secs_f64() / 60.0;
    let (a_direct, a_limited) = (reads(&t.a, "direct"), reads(&t.a, "limited"));
    eprintln!(
        "read budget: in {minutes:.2} min, A {a_direct} direct and {a_limited} limited, B {} direct",
        reads(&t.b, "direct")
    );
    assert!(a_limited > 0.0, "A was held to its budget");
    assert!(
        a_direct <= 10.0 + 10.0 * minutes + 1.0,
        "A made {a_direct} direct reads in {minutes:.2} minutes"
    );
    assert!(reads(&t.b, "direct") >= 3.0, "B read directly every 10 s");
    assert_eq!(reads(&t.b, "limited"), 0.0, "B's budget is its own");
    // Held to its budget, A sees the shared poll's view: observed, not failed.
    for i in 0..5 {
        let db = t.api_a.get(&format!("watch-{i}")).await.expect("get");
        assert_eq!(synced_reason(&db), "Observed", "{:?}", db.status);
    }
    let b = t.api_b.get("watch").await.expect("get");
    assert!(
        is_ready(&b) && synced_reason(&b) == "Observed",
        "{:?}",
        b.status
    );
    for id in &ids {
        (t.rds.delete_db_instance())
            .db_instance_identifier(id)
            .skip_final_snapshot(true)
            .send()
            .await
            .expect("the test's own cleanup");
    }
}
