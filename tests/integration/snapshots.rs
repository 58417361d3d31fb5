//! The DBSnapshot kind: a snapshot of the Coffee Manage database taken once and restored by
//! reference with its rows (a real MariaDB behind the emulator), deletion by policy, and the
//! tenancy rules of its source.

use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::dbsnapshot::DBSnapshot;
use serde_json::json;

use crate::common::{self, Operator, dbinstance, is_ready, setup, unique, wait_dbi};
use crate::engines::{Real, SUPPLIERS, mariadb, mariadb_keys, ready_real_with, real};

/// The DBSnapshot `name` of this spec.
pub(crate) fn snapshot(name: &str, spec: serde_json::Value) -> DBSnapshot {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBSnapshot",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("valid DBSnapshot")
}

fn ready(s: &DBSnapshot) -> bool {
    common::object_condition(s, "Ready").is_some_and(|c| c.0 == "True")
}

pub(crate) fn synced_reason(s: &DBSnapshot) -> String {
    common::object_condition(s, "Synced").map_or_else(String::new, |c| c.1)
}

/// The manual snapshots RDS has of this identifier, with their state.
async fn snapshots_in_rds(rds: &aws_sdk_rds::Client, identifier: &str) -> Vec<(String, String)> {
    let out = (rds.describe_db_snapshots())
        .db_snapshot_identifier(identifier)
        .send()
        .await;
    (out.map(|o| o.db_snapshots().to_vec())
        .unwrap_or_default()
        .iter())
    .map(|s| {
        (
            s.db_snapshot_identifier().unwrap_or_default().to_owned(),
            s.status().unwrap_or_default().to_owned(),
        )
    })
    .collect()
}

/// Creates the DBInstance `name` (identifier `id`) on a real server, restored by `dbSnapshotRef`
/// from the DBSnapshot `snapshot` with a password of its own and `extra` merged into its spec,
/// waits until it is Ready and in sync and its connection Secret has that password, and runs `sql`
/// with the Secret's credentials: (succeeded, output).
async fn restore_and_query(
    real_db: &Real,
    (name, id): (&str, &str),
    snapshot: &str,
    extra: serde_json::Value,
    sql: &str,
) -> (bool, String) {
    let (client, ns, api) = (&real_db.client, &real_db.ns, &real_db.api);
    let (password, connection) = (format!("{name}-password"), format!("{name}-connection"));
    common::secret(client, ns, &password, "password", "Rest0red-Passw0rd-2026").await;
    let mut spec = real(json!({
        "restoreFrom": {"dbSnapshotRef": {"name": snapshot}},
        "masterUserPassword": {"name": password, "key": "password"},
        "connectionSecret": {"name": connection},
        "deletionPolicy": "Delete",
    }));
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    (api.create(&PostParams::default(), &dbinstance(name, id, spec)))
        .await
        .expect("create the restored DBInstance");
    wait_dbi(api, name, "restored and in sync", common::TIMEOUT, |db| {
        is_ready(db) && common::synced_reason(db) == "Synced"
    })
    .await;
    let r = common::wait_for(
        "the restored connection Secret",
        common::TIMEOUT,
        || async {
            common::secret_data(client, ns, &connection)
                .await
                .filter(|d| d.get("password").map(String::as_str) == Some("Rest0red-Passw0rd-2026"))
        },
    )
    .await;
    let port = r.get("port").map(String::as_str);
    mariadb(
        &r["host"],
        port,
        &r["username"],
        &r["password"],
        "COFFEE",
        sql,
    )
}

/// Creates the DBInstance `db` (identifier `id`, deletionPolicy Delete) and waits until it is
/// Ready.
pub(crate) async fn ready_db(api: &Api<rds_operator::dbinstance::DBInstance>, id: &str) {
    let db = dbinstance("db", id, json!({"deletionPolicy": "Delete"}));
    (api.create(&PostParams::default(), &db))
        .await
        .expect("create the DBInstance");
    wait_dbi(api, "db", "ready", common::TIMEOUT, is_ready).await;
}

#[tokio::test]
async fn a_dbsnapshot_of_the_coffee_database_restores_by_reference_with_the_row_written_before_it()
{
    let mut id = String::new();
    let real_db = ready_real_with("snapref", &[], |new| {
        id = new.to_owned();
        dbinstance("db", new, real(json!({})))
    })
    .await;
    let (client, ns, api, rds, s) = (
        &real_db.client,
        &real_db.ns,
        &real_db.api,
        &real_db.rds,
        &real_db.secret,
    );
    let (ok, out) = mariadb_keys(s, &s["password"], SUPPLIERS);
    assert!(ok, "{out}");
    let snapshots: Api<DBSnapshot> = Api::namespaced(client.clone(), ns);
    let name = unique("before-change");
    let spec = json!({"dbSnapshotIdentifier": name, "source": {"name": "db"}});
    snapshots
        .create(&PostParams::default(), &snapshot("before-change", spec))
        .await
        .expect("create the DBSnapshot");
    // The status follows RDS through creating to available.
    let states = std::sync::Mutex::new(Vec::new());
    let taken = common::wait_object(&snapshots, "before-change", "available", |s| {
        let state = s.status.as_ref().and_then(|s| s.report.state.clone());
        states.lock().expect("states").extend(state);
        ready(s)
    })
    .await;
    let states = states.into_inner().expect("states");
    let status = taken.status.expect("a status");
    assert_eq!(status.report.state.as_deref(), Some("available"));
    assert_eq!(status.report.percent_progress, Some(100));
    assert_eq!(status.db_instance_identifier.as_deref(), Some(id.as_str()));
    assert_eq!(status.report.engine.as_deref(), Some("mysql"));
    assert!(
        status
            .report
            .arn
            .is_some_and(|a| a.ends_with(&format!(":snapshot:{name}")))
    );
    assert!(states.iter().any(|s| s == "creating"), "{states:?}");
    assert_eq!(
        common::calls(&id, "CreateDBSnapshot"),
        1,
        "one CreateDBSnapshot"
    );
    // A row written after the snapshot is not in it.
    let (ok, out) = mariadb_keys(
        s,
        &s["password"],
        "INSERT INTO suppliers (id, name) VALUES (2, 'Later Ltd')",
    );
    assert!(ok, "{out}");
    let restored = unique("restored");
    let sql = "SELECT GROUP_CONCAT(id ORDER BY id) FROM suppliers";
    let (ok, out) = restore_and_query(
        &real_db,
        ("restored", &restored),
        "before-change",
        json!({}),
        sql,
    )
    .await;
    assert!(
        ok && out.trim() == "1",
        "the row written before the snapshot, and not the one after: {out}"
    );
    assert_eq!(
        common::calls(&restored, "RestoreDBInstanceFromDBSnapshot"),
        1
    );
    // deletionPolicy Delete (the default): the snapshot goes with the object.
    (snapshots.delete("before-change", &DeleteParams::default()))
        .await
        .expect("delete the DBSnapshot");
    common::wait_object_gone(&snapshots, "before-change").await;
    assert!(snapshots_in_rds(rds, &name).await.is_empty());
    common::delete_and_wait(api, "restored").await;
    common::delete_and_wait(api, "db").await;
}

#[tokio::test]
async fn a_retained_dbsnapshot_stays_and_another_namespaces_instance_is_refused_with_no_call() {
    let (client, ns, api, rds) = setup("snapkeep").await;
    let other = common::namespace(&client, "snapother").await;
    let _operator = Operator::start_with(&ns, &["--namespace", &other]);
    let id = unique("snapkeep");
    ready_db(&api, &id).await;
    let snapshots: Api<DBSnapshot> = Api::namespaced(client.clone(), &ns);
    let kept = unique("kept");
    let spec = json!({
        "dbSnapshotIdentifier": kept,
        "source": {"dbInstanceIdentifier": id},
        "deletionPolicy": "Retain",
    });
    (snapshots.create(&PostParams::default(), &snapshot("kept", spec)))
        .await
        .expect("create the DBSnapshot");
    common::wait_object(&snapshots, "kept", "available", ready).await;
    assert_eq!(common::calls(&id, "CreateDBSnapshot"), 1);

    // Another namespace names this namespace's instance, by identifier and by a name it does
    // not have: refused, and no CreateDBSnapshot reaches RDS.
    let theirs: Api<DBSnapshot> = Api::namespaced(client.clone(), &other);
    let stolen = unique("stolen");
    let spec = json!({"dbSnapshotIdentifier": stolen, "source": {"dbInstanceIdentifier": id}});
    (theirs.create(&PostParams::default(), &snapshot("stolen", spec)))
        .await
        .expect("create the other namespace's DBSnapshot");
    let spec = json!({"source": {"name": "db"}});
    (theirs.create(&PostParams::default(), &snapshot("unresolved", spec)))
        .await
        .expect("create the other namespace's second DBSnapshot");
    common::wait_object(&theirs, "stolen", "SourceNotOwned", |s| {
        synced_reason(s) == "SourceNotOwned"
    })
    .await;
    common::wait_object(&theirs, "unresolved", "ReferencesUnresolved", |s| {
        synced_reason(s) == "ReferencesUnresolved"
    })
    .await;
    assert!(snapshots_in_rds(&rds, &stolen).await.is_empty());
    assert_eq!(
        common::calls(&id, "CreateDBSnapshot"),
        1,
        "only this namespace's own snapshot was taken"
    );

    // deletionPolicy Retain: the object goes, the snapshot stays.
    (snapshots.delete("kept", &DeleteParams::default()))
        .await
        .expect("delete the DBSnapshot");
    common::wait_object_gone(&snapshots, "kept").await;
    assert_eq!(
        snapshots_in_rds(&rds, &kept).await,
        vec![(kept.clone(), "available".to_owned())]
    );
    assert_eq!(common::calls(&kept, "DeleteDBSnapshot"), 0);
    for name in ["stolen", "unresolved"] {
        (theirs.delete(name, &DeleteParams::default()))
            .await
            .expect("delete a refused DBSnapshot");
        common::wait_object_gone(&theirs, name).await;
    }
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn a_kill_between_the_create_call_and_the_status_write_takes_no_second_snapshot() {
    let (client, ns, api, rds) = setup("snapcrash").await;
    let id = unique("snapcrash");
    let mut operator = Operator::start(&ns);
    ready_db(&api, &id).await;
    let snapshots: Api<DBSnapshot> = Api::namespaced(client.clone(), &ns);
    let name = unique("crashed");
    let spec = json!({"dbSnapshotIdentifier": name, "source": {"name": "db"}});
    (snapshots.create(&PostParams::default(), &snapshot("crashed", spec)))
        .await
        .expect("create the DBSnapshot");
    // Killed the moment the emulator has served CreateDBSnapshot, with no ARN in the status: only
    // the snapshot's ownership tags say it is this object's.
    common::wait_for(
        "CreateDBSnapshot to reach the emulator",
        common::TIMEOUT,
        || {
            let id = id.clone();
            async move { (common::calls(&id, "CreateDBSnapshot") >= 1).then_some(()) }
        },
    )
    .await;
    operator.kill();
    drop(operator);
    // The kill may land after a status write that saw the snapshot; the write is taken back, as
    // if it never happened.
    let unwritten = json!({"status": {"arn": null, "state": null, "percentProgress": null}});
    (snapshots.patch_status(
        "crashed",
        &PatchParams::default(),
        &Patch::Merge(&unwritten),
    ))
    .await
    .expect("take the status write back");
    let before = snapshots.get("crashed").await.expect("the DBSnapshot");
    assert!(
        before.status.and_then(|s| s.report.arn).is_none(),
        "no ARN recorded"
    );
    let _restarted = Operator::start(&ns);
    common::wait_object(&snapshots, "crashed", "available after the restart", ready).await;
    assert_eq!(
        common::calls(&id, "CreateDBSnapshot"),
        1,
        "a second create was sent"
    );
    assert_eq!(
        snapshots_in_rds(&rds, &name).await,
        vec![(name.clone(), "available".to_owned())]
    );
    (snapshots.delete("crashed", &DeleteParams::default()))
        .await
        .expect("delete the DBSnapshot");
    common::wait_object_gone(&snapshots, "crashed").await;
    assert!(snapshots_in_rds(&rds, &name).await.is_empty());
    common::delete_and_wait(&api, "db").await;
}

/// The manual snapshots of an instance RDS has: (name, state, this object's by its uid tag).
async fn snapshots_of(
    rds: &aws_sdk_rds::Client,
    instance: &str,
    uid: &str,
) -> Vec<(String, String, bool)> {
    let out = (rds.describe_db_snapshots())
        .db_instance_identifier(instance)
        .snapshot_type("manual")
        .send()
        .await
        .expect("DescribeDBSnapshots");
    (out.db_snapshots().iter())
        .map(|s| {
            let ours = (s.tag_list().iter())
                .any(|t| t.key() == Some(rds_operator::crd::OWNER_TAG) && t.value() == Some(uid));
            (
                s.db_snapshot_identifier().unwrap_or_default().to_owned(),
                s.status().unwrap_or_default().to_owned(),
                ours,
            )
        })
        .collect()
}

#[tokio::test]
async fn a_schedule_keeps_exactly_keep_snapshots_and_deletes_only_its_own() {
    let (client, ns, api, rds) = setup("snapsched").await;
    let id = unique("snapsched");
    let operator = Operator::start(&ns);
    ready_db(&api, &id).await;
    // A snapshot made by hand, named like the schedule's.
    let base = unique("every6s");
    let by_hand = format!("{base}-20000101000000");
    (rds.create_db_snapshot())
        .db_instance_identifier(&id)
        .db_snapshot_identifier(&by_hand)
        .send()
        .await
        .expect("a snapshot by hand");
    let snapshots: Api<DBSnapshot> = Api::namespaced(client.clone(), &ns);
    // Every 6 s (the emulator takes 3 s per snapshot), keeping 2.
    let spec = json!({
        "dbSnapshotIdentifier": base,
        "source": {"name": "db"},
        "schedule": {"cron": "*/6 * * * * *", "keep": 2},
    });
    (snapshots.create(&PostParams::default(), &snapshot("every6s", spec)))
        .await
        .expect("create the scheduled DBSnapshot");
    let made = snapshots.get("every6s").await.expect("the DBSnapshot");
    let uid = made.metadata.uid.clone().expect("a uid");
    // Four ticks taken (five CreateDBSnapshot with the one by hand), then a moment with none
    // being taken and the oldest deleted: exactly two of its own, both available, and the one by
    // hand. Until then, never more than one past keep (the one just taken, before the oldest
    // goes).
    let most = std::sync::atomic::AtomicUsize::new(0);
    let settled = common::wait_for("four ticks taken, two kept", common::TIMEOUT, || {
        let (rds, id, uid, most) = (rds.clone(), id.clone(), uid.clone(), &most);
        async move {
            let all = snapshots_of(&rds, &id, &uid).await;
            let available = all.iter().filter(|s| s.2 && s.1 == "available").count();
            most.fetch_max(available, std::sync::atomic::Ordering::Relaxed);
            let creating = all.iter().any(|s| s.1 != "available");
            let ticks = common::calls(&id, "CreateDBSnapshot") >= 5;
            (ticks && !creating && available == 2).then_some(all)
        }
    })
    .await;
    assert!(most.into_inner() <= 3, "never more than one past keep");
    let ours: Vec<_> = settled
        .iter()
        .filter(|s| s.2)
        .map(|s| s.0.clone())
        .collect();
    assert_eq!(ours.len(), 2, "exactly keep of its own: {settled:?}");
    assert!(
        ours.iter()
            .all(|n| n.starts_with(&format!("{base}-")) && n != &by_hand),
        "{ours:?}"
    );
    assert!(
        settled.iter().any(|s| s.0 == by_hand && !s.2),
        "the one by hand stays: {settled:?}"
    );
    assert_eq!(common::calls(&by_hand, "DeleteDBSnapshot"), 0);
    let status = common::wait_object(&snapshots, "every6s", "its status lists them", |s| {
        let kept = (s.status.as_ref())
            .and_then(|s| s.report.schedule.as_ref())
            .map(|s| s.kept.len());
        ready(s) && kept.is_some_and(|n| (2..=3).contains(&n))
    })
    .await
    .status
    .expect("a status");
    assert!(
        status
            .report
            .schedule
            .expect("schedule")
            .next_tick
            .is_some()
    );
    // Deleted with a schedule, its snapshots stay by default (Retain), and no tick follows.
    (snapshots.delete("every6s", &DeleteParams::default()))
        .await
        .expect("delete the scheduled DBSnapshot");
    common::wait_object_gone(&snapshots, "every6s").await;
    let gone = snapshots_of(&rds, &id, &uid).await;
    let names = |v: &[(String, String, bool)]| {
        v.iter()
            .filter(|s| s.2)
            .map(|s| s.0.clone())
            .collect::<Vec<_>>()
    };
    // Longer than the schedule's six seconds, and three listings of the instance's location.
    let polls = common::listings(&operator);
    let no_tick = || async { names(&snapshots_of(&rds, &id, &uid).await) == names(&gone) };
    let at_least = std::time::Duration::from_secs(7);
    let counted = (polls, "listings of the location");
    common::holds_while(counted, at_least, "no tick after the delete", no_tick).await;
    let after = snapshots_of(&rds, &id, &uid).await;
    assert_eq!(
        names(&after),
        names(&gone),
        "kept, and no tick after the deletion"
    );
    assert!(names(&after).len() >= 2, "{after:?}");
    for (name, _, _) in after {
        let _ = rds
            .delete_db_snapshot()
            .db_snapshot_identifier(name)
            .send()
            .await;
    }
    common::delete_and_wait(&api, "db").await;
}

/// The account a DBSnapshot is shared with, reached through an AWSAccount granted to the
/// namespace.
const SHARE_ACCOUNT: &str = "777777777777";

/// Who RDS lets restore a snapshot (its restore attribute).
async fn restorers(rds: &aws_sdk_rds::Client, snapshot: &str) -> Vec<String> {
    let out = (rds.describe_db_snapshot_attributes())
        .db_snapshot_identifier(snapshot)
        .send()
        .await
        .expect("DescribeDBSnapshotAttributes");
    (out.db_snapshot_attributes_result().iter())
        .flat_map(|r| r.db_snapshot_attributes().iter())
        .filter(|a| a.attribute_name() == Some("restore"))
        .flat_map(|a| a.attribute_values().iter().cloned())
        .collect()
}

#[tokio::test]
async fn a_share_to_a_granted_account_lets_it_restore_and_copy_and_one_to_an_account_not_granted_makes_no_call()
 {
    let (client, ns, api, rds) = setup("snapshare").await;
    let role = common::create_role(SHARE_ACCOUNT, &unique("snapshare"), None);
    let account_name = unique("snapshare");
    let account = json!({
        "assumeRoleChain": [{"roleARN": role}],
        "regions": ["us-east-1"],
        "namespaceSelector": {"names": [ns]},
    });
    common::create_account(&client, &account_name, account).await;
    // The restore in the other account reads no tags of a shared snapshot: a grant lets it.
    let grant = format!("--grant-restore={ns}");
    let _operator = Operator::start_with(&ns, &["--manage-accounts=true", &grant]);
    let id = unique("snapshare");
    ready_db(&api, &id).await;
    let snapshots: Api<DBSnapshot> = Api::namespaced(client.clone(), &ns);
    let shared = unique("shared");
    let spec = json!({
        "dbSnapshotIdentifier": shared,
        "source": {"name": "db"},
        "sharedWith": [SHARE_ACCOUNT],
    });
    (snapshots.create(&PostParams::default(), &snapshot("shared", spec)))
        .await
        .expect("create the shared DBSnapshot");
    let taken = common::wait_object(&snapshots, "shared", "shared", |s| {
        let shared_with = s.status.as_ref().map(|s| s.report.shared_with.clone());
        ready(s) && synced_reason(s) == "Synced" && shared_with == Some(vec![SHARE_ACCOUNT.into()])
    })
    .await;
    assert_eq!(
        restorers(&rds, &shared).await,
        vec![SHARE_ACCOUNT.to_owned()]
    );
    let arn = taken.status.and_then(|s| s.report.arn).expect("an ARN");

    // The other account restores it, by its ARN.
    let restored = unique("fromshare");
    let spec = json!({
        "accountRef": {"name": account_name},
        "restoreFrom": {"dbSnapshotIdentifier": arn},
        "deletionPolicy": "Delete",
    });
    (api.create(
        &PostParams::default(),
        &dbinstance("restored", &restored, spec),
    ))
    .await
    .expect("create the DBInstance of the other account");
    wait_dbi(
        &api,
        "restored",
        "restored in the other account",
        common::TIMEOUT,
        is_ready,
    )
    .await;
    let theirs = common::rds_in(&role, None, "us-east-1").await;
    assert!(
        common::describe(&theirs, &restored).await.is_some(),
        "the instance is in the account the snapshot was shared with"
    );
    assert_eq!(
        common::calls(&restored, "RestoreDBInstanceFromDBSnapshot"),
        1
    );

    // The other account copies it, by its ARN: a DBSnapshot placed there (its tags are not
    // visible from there: --grant-restore lets the namespace copy it).
    let copied = unique("copied");
    let spec = json!({
        "dbSnapshotIdentifier": copied,
        "accountRef": {"name": account_name},
        "copyFrom": {"dbSnapshotIdentifier": arn},
    });
    (snapshots.create(&PostParams::default(), &snapshot("copied", spec)))
        .await
        .expect("create the copy in the other account");
    common::wait_object(&snapshots, "copied", "copied in the other account", ready).await;
    assert_eq!(
        snapshots_in_rds(&theirs, &copied).await,
        vec![(copied.clone(), "available".to_owned())],
        "the copy is in the account the snapshot was shared with"
    );
    assert!(snapshots_in_rds(&rds, &copied).await.is_empty());
    assert_eq!(common::calls(&copied, "CopyDBSnapshot"), 1);

    // An account nothing grants: refused, and no ModifyDBSnapshotAttribute.
    let leak = unique("leak");
    let spec = json!({
        "dbSnapshotIdentifier": leak,
        "source": {"name": "db"},
        "sharedWith": ["999999999999"],
    });
    (snapshots.create(&PostParams::default(), &snapshot("leak", spec)))
        .await
        .expect("create the DBSnapshot shared with an account not granted");
    common::wait_object(&snapshots, "leak", "ShareNotGranted", |s| {
        synced_reason(s) == "ShareNotGranted"
    })
    .await;
    assert_eq!(common::calls(&leak, "ModifyDBSnapshotAttribute"), 0);
    assert!(restorers(&rds, &leak).await.is_empty());

    common::delete_and_wait(&api, "restored").await;
    for name in ["copied", "shared", "leak"] {
        (snapshots.delete(name, &DeleteParams::default()))
            .await
            .expect("delete a DBSnapshot");
        common::wait_object_gone(&snapshots, name).await;
    }
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn a_copy_to_another_region_restored_there_reads_the_row() {
    let real_db = ready_real_with("snapcopy", &[], |new| {
        dbinstance("db", new, real(json!({})))
    })
    .await;
    let (client, ns, api, s) = (&real_db.client, &real_db.ns, &real_db.api, &real_db.secret);
    let (ok, out) = mariadb_keys(s, &s["password"], SUPPLIERS);
    assert!(ok, "{out}");
    let snapshots: Api<DBSnapshot> = Api::namespaced(client.clone(), ns);
    let spec = json!({"dbSnapshotIdentifier": unique("original"), "source": {"name": "db"}});
    (snapshots.create(&PostParams::default(), &snapshot("original", spec)))
        .await
        .expect("create the DBSnapshot");
    common::wait_object(&snapshots, "original", "available", ready).await;
    // Its copy in another region of the account.
    let copy = unique("copy");
    let spec = json!({
        "dbSnapshotIdentifier": copy,
        "region": "eu-west-1",
        "copyFrom": {"name": "original"},
    });
    (snapshots.create(&PostParams::default(), &snapshot("copy", spec)))
        .await
        .expect("create the copy");
    let copied = common::wait_object(&snapshots, "copy", "copied", ready).await;
    let arn = copied.status.and_then(|s| s.report.arn).expect("an ARN");
    assert!(arn.contains(":eu-west-1:") && arn.ends_with(&copy), "{arn}");
    assert_eq!(common::calls(&copy, "CopyDBSnapshot"), 1);
    // Restored there, it has the row.
    let west = unique("west");
    let sql = "SELECT name FROM suppliers WHERE id = 1";
    let region = json!({"region": "eu-west-1"});
    let (ok, out) = restore_and_query(&real_db, ("west", &west), "copy", region, sql).await;
    assert!(
        ok && out.trim() == "Coffee Beans Ltd",
        "the row, in the other region: {out}"
    );
    common::delete_and_wait(api, "west").await;
    for name in ["copy", "original"] {
        (snapshots.delete(name, &DeleteParams::default()))
            .await
            .expect("delete a DBSnapshot");
        common::wait_object_gone(&snapshots, name).await;
    }
    common::delete_and_wait(api, "db").await;
}

/// The regions RDS replicates the instance's automated backups to.
async fn backup_regions(rds: &aws_sdk_rds::Client, id: &str) -> Vec<String> {
    let instance = common::describe(rds, id).await.expect("the instance");
    (instance.db_instance_automated_backups_replications().iter())
        .filter_map(|r| r.db_instance_automated_backups_arn())
        .filter_map(|arn| arn.split(':').nth(3).map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn automated_backup_replication_starts_is_reported_and_stops() {
    let (_client, ns, api, rds) = setup("backuprepl").await;
    let _operator = Operator::start(&ns);
    let id = unique("backuprepl");
    let spec = json!({
        "deletionPolicy": "Delete",
        "backupRetentionPeriod": 1,
        "automatedBackupReplication": {"region": "us-west-2", "retentionPeriod": 3},
    });
    (api.create(&PostParams::default(), &dbinstance("db", &id, spec)))
        .await
        .expect("create the DBInstance");
    let db = wait_dbi(&api, "db", "replicating, reported", common::TIMEOUT, |db| {
        let reported = (db.status.as_ref())
            .and_then(|s| s.automated_backup_replication.as_ref())
            .and_then(|r| r.automated_backups_arn.clone());
        is_ready(db) && reported.is_some_and(|arn| arn.contains(":us-west-2:"))
    })
    .await;
    assert_eq!(backup_regions(&rds, &id).await, vec!["us-west-2"]);
    assert_eq!(
        common::calls(&id, "StartDBInstanceAutomatedBackupsReplication"),
        1
    );
    let reported = db.status.and_then(|s| s.automated_backup_replication);
    assert_eq!(reported.map(|r| r.region).as_deref(), Some("us-west-2"));
    // Removed from the spec: stopped, and no longer reported.
    common::patch_spec(&api, "db", json!({"automatedBackupReplication": null})).await;
    wait_dbi(&api, "db", "replication stopped", common::TIMEOUT, |db| {
        let status = db.status.as_ref();
        is_ready(db)
            && status.is_some_and(|s| s.automated_backup_replication.is_none())
            && status.and_then(|s| s.reported.observed_generation) == db.metadata.generation
    })
    .await;
    assert!(backup_regions(&rds, &id).await.is_empty());
    assert_eq!(
        common::calls(&id, "StopDBInstanceAutomatedBackupsReplication"),
        1
    );
    common::delete_and_wait(&api, "db").await;
}
