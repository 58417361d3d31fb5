//! An AWS outage in one location (docs/outages.md): the location's breaker refuses its calls
//! while AWS throttles or does not answer there, one prober tests it, and its recovery wakes what
//! waited; another location goes on as usual meanwhile. The outage is moto_ext's
//! (`/_rds_ext/outage`): every RDS, tagging and Secrets Manager call signed by the account's keys
//! is answered as throttled, unavailable or failed, and counted, for 30 s.

use std::time::{Duration, Instant};

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use crate::common::{
    Operator, TIMEOUT, condition, create_account, create_role, dbinstance, describe, is_ready,
    moto_ext_get, moto_ext_post, rds_in, server_calls, setup, unique, wait_dbi, wait_for,
};

/// An account no other test uses: the outage covers all of its calls.
const ACCOUNT: &str = "333333333333";
const OUTAGE: Duration = Duration::from_secs(30);

async fn has_tag(rds: &aws_sdk_rds::Client, id: &str, key: &str) -> bool {
    describe(rds, id)
        .await
        .is_some_and(|i| i.tag_list().iter().any(|t| t.key() == Some(key)))
}

/// The identifiers of the account's instances that carry this DBInstance uid's ownership tag.
async fn databases_of(rds: &aws_sdk_rds::Client, uid: &str) -> Vec<String> {
    // Every page: one (MaxRecords 100) need not hold them while other tests run.
    let pages = rds.describe_db_instances().into_paginator().items().send();
    let listed: Vec<_> = (pages.try_collect().await).expect("DescribeDBInstances");
    (listed.iter())
        .filter(|i| {
            (i.tag_list().iter())
                .any(|t| t.key() == Some(rds_operator::crd::OWNER_TAG) && t.value() == Some(uid))
        })
        .filter_map(|i| i.db_instance_identifier().map(str::to_owned))
        .collect()
}

async fn tag(api: &Api<DBInstance>, name: &str, key: &str) {
    let patch = json!({"spec": {"tags": [{"key": key, "value": "on"}]}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch DBInstance tags");
}

/// A namespace, an AWSAccount of `account` (a role there) granted to it, and an operator that
/// manages accounts.
struct Bed {
    api: Api<DBInstance>,
    own_rds: aws_sdk_rds::Client,
    role: String,
    account_name: String,
    operator: Operator,
}

async fn bed(prefix: &str, account: &str) -> Bed {
    let (client, ns, api, own_rds) = setup(prefix).await;
    let role = create_role(account, &unique(prefix), None);
    let account_name = unique(prefix);
    create_account(
        &client,
        &account_name,
        json!({
            "assumeRoleChain": [{"roleARN": role}],
            "regions": ["us-east-1"],
            "namespaceSelector": {"names": [ns]},
        }),
    )
    .await;
    let operator = Operator::start_with(&ns, &["--manage-accounts=true"]);
    Bed {
        api,
        own_rds,
        role,
        account_name,
        operator,
    }
}

#[tokio::test]
async fn an_outage_in_one_account_holds_only_its_objects_and_they_are_applied_as_it_ends() {
    holds_only_its_objects("outage", ACCOUNT, "throttle,unavailable,internal").await;
}

/// The same outage at the network: every connection of the account reset before an answer (no
/// HTTP answer at all). Before, the SDK's "connection closed before message completed" was read
/// as a request never sent: no breaker opened, and each object retried on its own backoff.
#[tokio::test]
async fn a_network_outage_resetting_every_connection_holds_its_objects_as_an_http_one_does() {
    holds_only_its_objects("outreset", "333333333334", "reset").await;
}

/// The same with connections closed after the call was served (the answer lost with its
/// connection) and connections held open past the attempt timeout.
#[tokio::test]
async fn a_network_outage_of_lost_and_hung_connections_holds_its_objects_as_an_http_one_does() {
    holds_only_its_objects("outhang", "333333333335", "closed,hang").await;
}

/// One instance in the operator's own account, three in `account`; an outage of `faults` in
/// `account` while each gets a tag: the own account's goes through, the others wait on their
/// location (a few calls in all, not per object) and are applied within seconds of its end.
async fn holds_only_its_objects(prefix: &str, account: &str, faults: &str) {
    let Bed {
        api,
        own_rds,
        role,
        account_name,
        operator,
    } = bed(prefix, account).await;
    let refused_by_the_emulator = || {
        let body = moto_ext_get("/_rds_ext/outage").expect("moto_ext's outage state");
        let state: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        state["refused"][account].as_u64().unwrap_or(0)
    };
    let tag_key = unique("applied");
    // One instance in the operator's own account, three in the failing one.
    let own = unique("own");
    let failing: Vec<(String, String)> = (0..3)
        .map(|i| (format!("far-{i}"), unique(&format!("far{i}"))))
        .collect();
    api.create(&PostParams::default(), &dbinstance("own", &own, json!({})))
        .await
        .expect("create DBInstance");
    for (name, id) in &failing {
        let spec = json!({"accountRef": {"name": account_name}});
        api.create(&PostParams::default(), &dbinstance(name, id, spec))
            .await
            .expect("create DBInstance");
    }
    for name in std::iter::once("own").chain(failing.iter().map(|(n, _)| n.as_str())) {
        wait_dbi(&api, name, "Ready", TIMEOUT, is_ready).await;
    }
    let far_rds = rds_in(&role, None, "us-east-1").await;

    // The outage starts, and every instance gets a change to make.
    let before = refused_by_the_emulator();
    assert!(moto_ext_post(&format!(
        "/_rds_ext/outage?seconds={}&account={account}&faults={faults}&hold=25",
        OUTAGE.as_secs()
    )));
    let started = Instant::now();
    tag(&api, "own", &tag_key).await;
    for (name, _) in &failing {
        tag(&api, name, &tag_key).await;
    }

    // The own account's change goes through at its usual latency, during the outage.
    wait_for("the own account's tag applied", OUTAGE, || async {
        has_tag(&own_rds, &own, &tag_key).await.then_some(())
    })
    .await;
    assert!(
        started.elapsed() < OUTAGE,
        "applied during the other account's outage"
    );

    // The failing account's objects say that their location is unavailable, and when it is
    // tried again.
    for (name, _) in &failing {
        let db = wait_dbi(&api, name, "AWSUnavailable", OUTAGE, |db| {
            condition(db, "Synced").is_some_and(|(_, reason, message)| {
                reason == "AWSUnavailable" && message.contains("no call is made there")
            })
        })
        .await;
        let (_, _, message) = condition(&db, "Synced").unwrap();
        assert!(
            message.contains(account) && message.contains("next at"),
            "{message}"
        );
    }

    // The outage ends: every change is applied within seconds.
    tokio::time::sleep(OUTAGE.saturating_sub(started.elapsed())).await;
    let ended = Instant::now();
    let calls_in_outage = refused_by_the_emulator() - before;
    for (_, id) in &failing {
        wait_for("the failing account's tags applied", TIMEOUT, || async {
            has_tag(&far_rds, id, &tag_key).await.then_some(())
        })
        .await;
    }
    let recovered = ended.elapsed();
    for (name, _) in &failing {
        wait_dbi(&api, name, "Synced again", TIMEOUT, |db| {
            condition(db, "Synced").is_some_and(|(status, _, _)| status == "True")
        })
        .await;
    }
    eprintln!(
        "outage of {OUTAGE:?} ({faults}): {calls_in_outage} calls reached the failing account; its 3 changes applied {recovered:?} after it ended"
    );
    // Per location, not per object: the prober's calls (2 s after the breaker opened, then every
    // 4 to 6.25 s: 7 at most in 30 s) and the few on their way when it opened (one per object).
    assert!(
        calls_in_outage <= 15,
        "{calls_in_outage} calls reached the failing account during the outage"
    );
    assert!(
        recovered < Duration::from_secs(20),
        "applied {recovered:?} after the outage ended"
    );
    drop(operator);
}

/// A lost reply: the CreateDBInstance of a DBInstance is served (the database is made) and its
/// reply lost (moto_ext's fault `lost`: the caller gets InternalFailure). The operator finds the
/// database it made by its uid tag and never sends a second CreateDBInstance; the DBInstance is
/// Ready, its own.
#[tokio::test]
async fn a_create_whose_reply_is_lost_is_found_again_and_not_made_twice() {
    const FAULTY: &str = "555555555555";
    let Bed {
        api,
        role,
        account_name,
        operator,
        ..
    } = bed("lostreply", FAULTY).await;
    // Every CreateDBInstance of the account loses its reply for the next minute.
    assert!(moto_ext_post(&format!(
        "/_rds_ext/outage?seconds=60&account={FAULTY}&faults=lost&actions=CreateDBInstance"
    )));
    let id = unique("lost");
    let spec = json!({"accountRef": {"name": account_name}});
    api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await
        .expect("create DBInstance");
    let db = wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let uid = db.metadata.uid.clone().expect("uid");
    assert_eq!(
        server_calls(&id).get("CreateDBInstance").copied(),
        Some(1),
        "one CreateDBInstance reached RDS; its lost reply was not answered by a second"
    );
    assert_eq!(
        db.status.as_ref().and_then(|s| s.common.owned),
        Some(true),
        "the database is the DBInstance's own"
    );
    let far_rds = rds_in(&role, None, "us-east-1").await;
    assert_eq!(
        databases_of(&far_rds, &uid).await,
        vec![id.clone()],
        "one database for the DBInstance"
    );
    // The lost fault ends here; other tests' accounts were never covered.
    assert!(moto_ext_post(&format!(
        "/_rds_ext/outage?seconds=0&account={FAULTY}"
    )));
    drop(operator);
}

/// A brown-out: for 45 s, 30 % of one account's calls fail, throttled or served with their reply
/// lost, while a DBInstance is created and then changed there. It converges: Ready with the
/// change applied, one database for it, made by one CreateDBInstance.
#[tokio::test]
async fn under_thirty_percent_faults_and_lost_replies_a_dbinstance_converges_with_one_database() {
    const FAULTY: &str = "666666666666";
    const BROWN_OUT: Duration = Duration::from_secs(45);
    let Bed {
        api,
        role,
        account_name,
        operator,
        ..
    } = bed("brownout", FAULTY).await;
    assert!(moto_ext_post(&format!(
        "/_rds_ext/outage?seconds={}&account={FAULTY}&faults=throttle,lost,unavailable&rate=0.3",
        BROWN_OUT.as_secs()
    )));
    let started = Instant::now();
    let id = unique("brown");
    let spec = json!({"accountRef": {"name": account_name}});
    api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await
        .expect("create DBInstance");
    wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let key = unique("changed");
    tag(&api, "db", &key).await;
    // This test reads the account once the brown-out is over (its own reads are not faulted then).
    tokio::time::sleep(BROWN_OUT.saturating_sub(started.elapsed())).await;
    let far_rds = rds_in(&role, None, "us-east-1").await;
    wait_for("the change applied", TIMEOUT, || async {
        has_tag(&far_rds, &id, &key).await.then_some(())
    })
    .await;
    let db = wait_dbi(&api, "db", "Synced", TIMEOUT, |db| {
        condition(db, "Synced").is_some_and(|(status, _, _)| status == "True")
    })
    .await;
    let uid = db.metadata.uid.clone().expect("uid");
    assert_eq!(
        databases_of(&far_rds, &uid).await,
        vec![id.clone()],
        "one database for the DBInstance"
    );
    assert_eq!(
        server_calls(&id).get("CreateDBInstance").copied(),
        Some(1),
        "one CreateDBInstance served"
    );
    drop(operator);
}
