//! Several AWS accounts and regions from one operator (docs/accounts.md): AWSAccount, the grant of
//! an account to namespaces, a poll per (account, region), refusals that make no AWS call, and a
//! resource kept where it was created. moto acts in the account of the role AssumeRole returned
//! credentials for, and moto_ext checks the role's trust policy as IAM does.

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::awsaccount::AWSAccount;
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use crate::common::{
    self, Operator, TIMEOUT, condition, create_account, create_role, dbinstance, describe,
    is_ready, operator_metric, rds_in, rds_of_region, server_calls, setup, synced_reason, unique,
    wait_dbi, wait_for, wait_gone,
};

const ACCOUNT_A: &str = "111111111111";
const ACCOUNT_B: &str = "222222222222";
const OWN: &str = "123456789012";

fn account_condition(a: &AWSAccount, type_: &str) -> Option<(String, String, String)> {
    (a.status.as_ref()?.reported.conditions.iter())
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

async fn wait_account(
    api: &Api<AWSAccount>,
    name: &str,
    what: &str,
    check: impl Fn(&AWSAccount) -> bool,
) -> AWSAccount {
    wait_for(what, TIMEOUT, || async {
        let a = api.get_opt(name).await.ok()??;
        check(&a).then_some(a)
    })
    .await
}

/// The operator's DescribeDBInstances in one account and region, as its /metrics count them.
fn describes(operator: &Operator, account: &str, region: &str) -> f64 {
    operator_metric(
        operator,
        &format!(
            "rds_operator_rds_api_calls_total{{operation=\"DescribeDBInstances\",outcome=\"ok\",account=\"{account}\",region=\"{region}\"}}"
        ),
    )
}

fn placement(db: &DBInstance) -> (Option<String>, String, String) {
    let p = db
        .status
        .as_ref()
        .and_then(|s| s.common.placement.clone())
        .expect("placement recorded");
    (p.account, p.account_id, p.region)
}

#[tokio::test]
async fn instances_in_two_accounts_and_two_regions_are_each_observed_by_their_own_poll() {
    let (client, ns, api, rds) = setup("accounts").await;
    let tag = unique("acct");
    let role_a = create_role(ACCOUNT_A, &format!("{tag}-a"), Some("ext-a"));
    let role_b = create_role(ACCOUNT_B, &format!("{tag}-b"), None);
    // Account A is granted by name, account B by the namespace's label.
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let label = json!({"metadata": {"labels": {"team": tag}}});
    namespaces
        .patch(&ns, &PatchParams::default(), &Patch::Merge(&label))
        .await
        .expect("label namespace");
    let (name_a, name_b) = (format!("{tag}-a"), format!("{tag}-b"));
    let accounts = create_account(&client, &name_a, json!({
        "assumeRoleChain": [{"roleARN": role_a, "externalID": "ext-a", "sessionTags": {"team": tag}}],
        "regions": ["us-east-1", "eu-west-1"],
        "namespaceSelector": {"names": [ns]},
    }))
    .await;
    create_account(
        &client,
        &name_b,
        json!({
            "assumeRoleChain": [{"roleARN": role_b}],
            "regions": ["us-east-1"],
            "namespaceSelector": {"matchLabels": {"team": tag}},
        }),
    )
    .await;
    // This operator reconciles the AWSAccounts too (it counts their users across the cluster).
    let operator = Operator::start_with(&ns, &["--manage-accounts=true"]);
    let (id_own, id_a, id_b) = (unique("own"), unique("in-a"), unique("in-b"));
    for db in [
        dbinstance("own", &id_own, json!({})),
        dbinstance(
            "a",
            &id_a,
            json!({"accountRef": {"name": name_a}, "region": "eu-west-1"}),
        ),
        dbinstance("b", &id_b, json!({"accountRef": {"name": name_b}})),
    ] {
        api.create(&PostParams::default(), &db)
            .await
            .expect("create DBInstance");
    }
    for name in ["own", "a", "b"] {
        wait_dbi(&api, name, "Ready", TIMEOUT, is_ready).await;
    }

    // Each instance is in its own account and region, and nowhere else.
    let a_eu = rds_in(&role_a, Some("ext-a"), "eu-west-1").await;
    let a_us = rds_in(&role_a, Some("ext-a"), "us-east-1").await;
    let b_us = rds_in(&role_b, None, "us-east-1").await;
    assert!(
        describe(&a_eu, &id_a).await.is_some(),
        "{}",
        operator.logs()
    );
    assert!(describe(&a_us, &id_a).await.is_none());
    assert!(describe(&rds, &id_a).await.is_none());
    assert!(describe(&b_us, &id_b).await.is_some());
    assert!(describe(&rds, &id_b).await.is_none());
    assert!(describe(&rds, &id_own).await.is_some());
    assert!(describe(&b_us, &id_own).await.is_none());
    let get = |name: &'static str| {
        let api = api.clone();
        async move { api.get(name).await.expect("get DBInstance") }
    };
    assert_eq!(
        placement(&get("a").await),
        (Some(name_a.clone()), ACCOUNT_A.into(), "eu-west-1".into())
    );
    assert_eq!(
        placement(&get("b").await),
        (Some(name_b.clone()), ACCOUNT_B.into(), "us-east-1".into())
    );
    assert_eq!(
        placement(&get("own").await),
        (None, OWN.into(), "us-east-1".into())
    );
    let a = wait_account(
        &accounts,
        &name_a,
        "account A Ready with its id and one user",
        |a| {
            let s = a.status.clone().unwrap_or_default();
            account_condition(a, "Ready").is_some_and(|c| c.0 == "True")
                && s.account_id.as_deref() == Some(ACCOUNT_A)
                && s.resources == Some(1)
        },
    )
    .await;
    let caller = a.status.and_then(|s| s.caller_arn).unwrap_or_default();
    assert!(
        caller.starts_with(&format!("arn:aws:sts::{ACCOUNT_A}:assumed-role/{tag}-a/")),
        "{caller}"
    );

    // Each (account, region) has its own paginated poll, at the floor: one DescribeDBInstances
    // per drift interval (5 s) for the pair, whatever its instances.
    let pairs = [
        (OWN, "us-east-1"),
        (ACCOUNT_A, "eu-west-1"),
        (ACCOUNT_B, "us-east-1"),
    ];
    let before: Vec<f64> = pairs
        .iter()
        .map(|(a, r)| describes(&operator, a, r))
        .collect();
    tokio::time::sleep(Duration::from_secs(16)).await;
    for ((account, region), before) in pairs.iter().zip(before) {
        let polls = describes(&operator, account, region) - before;
        assert!(
            (2.0..=5.0).contains(&polls),
            "{account}/{region}: {polls} describes in 16 s, where its own poll makes 3 or 4"
        );
    }
    // Each pair's poll has its own health: when it last succeeded, by account id and region.
    for (account, region) in pairs {
        let last = operator_metric(
            &operator,
            &format!(
                "rds_operator_location_last_poll_timestamp_seconds{{account=\"{account}\",region=\"{region}\"}}"
            ),
        );
        assert!(
            last > common::epoch() - 15.0,
            "{account}/{region} polled at {last}"
        );
    }
    assert_eq!(
        describes(&operator, ACCOUNT_A, "us-east-1"),
        0.0,
        "no resource lives in A's us-east-1: no poll there"
    );

    // An account in use is not deleted: it waits, saying who uses it, until none does.
    accounts
        .delete(&name_a, &DeleteParams::default())
        .await
        .expect("delete account");
    let waiting = wait_account(&accounts, &name_a, "account A waiting InUse", |a| {
        account_condition(a, "Synced").is_some_and(|c| c.1 == "InUse")
    })
    .await;
    let message = account_condition(&waiting, "Synced").unwrap().2;
    assert!(message.contains(&format!("{ns}/a")), "{message}");
    assert!(
        is_ready(&get("a").await),
        "the instance keeps working meanwhile"
    );
    common::delete_and_wait(&api, "a").await;
    assert!(
        describe(&a_eu, &id_a).await.is_none(),
        "deleted in its own account and region"
    );
    wait_for("account A gone", TIMEOUT, || async {
        accounts
            .get_opt(&name_a)
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;
    for name in ["b", "own"] {
        common::delete_and_wait(&api, name).await;
    }
    accounts
        .delete(&name_b, &DeleteParams::default())
        .await
        .expect("delete account");
}

#[tokio::test]
async fn a_namespace_the_account_does_not_select_is_refused_with_no_call_made() {
    let (client, ns, api, _) = setup("notgranted").await;
    let tag = unique("acct");
    let role = create_role(ACCOUNT_A, &tag, None);
    let accounts = create_account(
        &client,
        &tag,
        json!({
            "assumeRoleChain": [{"roleARN": role}],
            "regions": ["us-east-1"],
            "namespaceSelector": {"names": ["someone-else"]},
        }),
    )
    .await;
    let operator = Operator::start(&ns);
    let id = unique("refused");
    api.create(
        &PostParams::default(),
        &dbinstance("db", &id, json!({"accountRef": {"name": tag}})),
    )
    .await
    .expect("create DBInstance");
    let db = wait_dbi(&api, "db", "AccountNotGranted", TIMEOUT, |db| {
        synced_reason(db) == "AccountNotGranted"
    })
    .await;
    assert_eq!(
        condition(&db, "Stalled").map(|c| c.0).as_deref(),
        Some("True")
    );
    let message = condition(&db, "Synced").unwrap().2;
    assert!(
        message.contains(&format!("not granted to namespace {ns}")),
        "{message}"
    );
    let events = common::event_reasons(&client, &ns, "db").await;
    assert!(
        events.iter().any(|r| r == "AccountNotGranted"),
        "{events:?}"
    );
    // No call was made for it, in any account.
    let none = || async { server_calls(&id).is_empty() };
    let object = ("DBInstance", "db");
    common::holds_over_pokes(&operator, &api, object, "no call made for it", none).await;
    assert_eq!(describes(&operator, ACCOUNT_A, "us-east-1"), 0.0);
    assert!(
        db.status.and_then(|s| s.common.placement).is_none(),
        "nothing recorded"
    );

    // Granting the namespace (a change of the account) wakes it, and it is made there.
    let grant = json!({"spec": {"namespaceSelector": {"names": ["someone-else", ns]}}});
    accounts
        .patch(&tag, &PatchParams::default(), &Patch::Merge(&grant))
        .await
        .expect("grant");
    wait_dbi(&api, "db", "Ready once granted", TIMEOUT, is_ready).await;
    let in_a = rds_in(&role, None, "us-east-1").await;
    assert!(describe(&in_a, &id).await.is_some());
    common::delete_and_wait(&api, "db").await;
    accounts
        .delete(&tag, &DeleteParams::default())
        .await
        .expect("delete account");
}

#[tokio::test]
async fn an_external_id_mismatch_is_reported_and_does_not_hold_up_another_account() {
    let (client, ns, api, _) = setup("extid").await;
    let tag = unique("acct");
    let (bad, good) = (format!("{tag}-bad"), format!("{tag}-good"));
    let bad_role = create_role(ACCOUNT_A, &bad, Some("the-right-one"));
    let good_role = create_role(ACCOUNT_B, &good, None);
    let accounts = create_account(
        &client,
        &bad,
        json!({
            "assumeRoleChain": [{"roleARN": bad_role, "externalID": "a-wrong-one"}],
            "regions": ["us-east-1"],
            "namespaceSelector": {"names": [ns]},
        }),
    )
    .await;
    create_account(
        &client,
        &good,
        json!({
            "assumeRoleChain": [{"roleARN": good_role}],
            "regions": ["us-east-1"],
            "namespaceSelector": {"names": [ns]},
        }),
    )
    .await;
    let operator = Operator::start_with(&ns, &["--manage-accounts=true"]);
    let (id_bad, id_good) = (unique("bad"), unique("good"));
    for db in [
        dbinstance("bad", &id_bad, json!({"accountRef": {"name": bad}})),
        dbinstance("good", &id_good, json!({"accountRef": {"name": good}})),
    ] {
        api.create(&PostParams::default(), &db)
            .await
            .expect("create DBInstance");
    }
    // AWS's refusal, in the account's status and in the instance's.
    let denied = wait_account(&accounts, &bad, "the account reports AccessDenied", |a| {
        account_condition(a, "Ready").is_some_and(|c| c.0 == "False" && c.1 == "AccountUnavailable")
    })
    .await;
    let message = account_condition(&denied, "Ready").unwrap().2;
    assert!(
        message.contains("AccessDenied") && message.contains(&bad_role),
        "{message}"
    );
    let db = wait_dbi(&api, "bad", "AccountUnavailable", TIMEOUT, |db| {
        synced_reason(db) == "AccountUnavailable"
    })
    .await;
    let message = condition(&db, "Synced").unwrap().2;
    assert!(
        message.contains("not authorized to perform: sts:AssumeRole"),
        "{message}"
    );
    // Meanwhile the other account's instance is made and ready.
    wait_dbi(&api, "good", "Ready", TIMEOUT, is_ready).await;
    assert!(!is_ready(&api.get("bad").await.unwrap()));
    assert!(
        server_calls(&id_bad).is_empty(),
        "no RDS call for the refused one"
    );
    assert!(
        operator_metric(
            &operator,
            "rds_operator_rds_api_calls_total{operation=\"AssumeRole\",outcome=\"invalid_input\""
        ) >= 2.0,
        "AssumeRole is retried with backoff"
    );

    // Mending the external ID (a new generation: new credentials) lets it through.
    let mend = json!({"spec": {"assumeRoleChain": [{"roleARN": bad_role, "externalID": "the-right-one"}]}});
    accounts
        .patch(&bad, &PatchParams::default(), &Patch::Merge(&mend))
        .await
        .expect("mend");
    wait_dbi(&api, "bad", "Ready once mended", TIMEOUT, is_ready).await;
    for name in ["bad", "good"] {
        common::delete_and_wait(&api, name).await;
    }
    for name in [bad, good] {
        accounts
            .delete(&name, &DeleteParams::default())
            .await
            .expect("delete account");
    }
}

#[tokio::test]
async fn a_region_change_on_an_existing_instance_is_refused_and_nothing_is_made_elsewhere() {
    let (client, ns, api, rds) = setup("region").await;
    let operator = Operator::start(&ns);
    let id = unique("stays");
    api.create(&PostParams::default(), &dbinstance("db", &id, json!({})))
        .await
        .expect("create DBInstance");
    let db = wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    assert_eq!(placement(&db), (None, OWN.into(), "us-east-1".into()));
    // The namespace's default region changes: the instance stays, refused, and no create is
    // made in the new region.
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let moved = json!({"metadata": {"annotations": {"rds.operator.rs/region": "eu-west-1"}}});
    namespaces
        .patch(&ns, &PatchParams::default(), &Patch::Merge(&moved))
        .await
        .expect("annotate");
    common::patch_spec(
        &api,
        "db",
        json!({"tags": [{"key": "app", "value": "moved"}]}),
    )
    .await;
    let refused = wait_dbi(&api, "db", "AccountOrRegionMismatch", TIMEOUT, |db| {
        synced_reason(db) == "AccountOrRegionMismatch"
    })
    .await;
    assert_eq!(
        condition(&refused, "Stalled").map(|c| c.0).as_deref(),
        Some("True")
    );
    assert_eq!(
        placement(&refused),
        (None, OWN.into(), "us-east-1".into()),
        "the record is kept"
    );
    let message = condition(&refused, "Synced").unwrap().2;
    assert!(
        message.contains("region us-east-1") && message.contains("region eu-west-1"),
        "{message}"
    );
    // spec.region says the same.
    common::patch_spec(&api, "db", json!({"region": "eu-west-1"})).await;
    let refused =
        || async { synced_reason(&api.get("db").await.unwrap()) == "AccountOrRegionMismatch" };
    let what = "still refused once spec.region says the same";
    common::holds_over_pokes(&operator, &api, ("DBInstance", "db"), what, refused).await;
    let eu = rds_of_region("eu-west-1").await;
    assert!(
        describe(&eu, &id).await.is_none(),
        "nothing was created in eu-west-1"
    );
    assert_eq!(common::calls(&id, "CreateDBInstance"), 1);
    // Put back, it is managed again, where it is.
    common::patch_spec(&api, "db", json!({"region": "us-east-1"})).await;
    wait_dbi(&api, "db", "Synced again", TIMEOUT, |db| {
        synced_reason(db) == "Synced"
    })
    .await;
    assert!(describe(&rds, &id).await.is_some());
    common::delete_and_wait(&api, "db").await;
    wait_gone(&api, "db", TIMEOUT).await;
}

#[tokio::test]
async fn ack_annotations_and_role_map_are_honoured_with_ack_compat() {
    let (client, ns, api, _) = setup("ack").await;
    let (_, other, other_api, _) = setup("ack-unmapped").await;
    let role = create_role(ACCOUNT_B, &unique("ack"), None);
    // ACK's role map, in the operator's namespace ("default" here, as POD_NAMESPACE is unset).
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let map: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "ack-role-account-map"},
        "data": {ACCOUNT_B: role},
    }))
    .unwrap();
    maps.patch(
        "ack-role-account-map",
        &PatchParams::apply("tests").force(),
        &Patch::Apply(&map),
    )
    .await
    .expect("role map");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let annotate = |account: &str| {
        json!({"metadata": {"annotations": {
            "services.k8s.aws/owner-account-id": account,
            "services.k8s.aws/default-region": "eu-west-1",
        }}})
    };
    for (namespace, account) in [(&ns, ACCOUNT_B), (&other, "444444444444")] {
        namespaces
            .patch(
                namespace,
                &PatchParams::default(),
                &Patch::Merge(&annotate(account)),
            )
            .await
            .expect("annotate");
    }
    let _operator = Operator::start_with(&ns, &["--namespace", &other, "--ack-compat"]);
    let (id, id_other) = (unique("ack"), unique("unmapped"));
    api.create(&PostParams::default(), &dbinstance("db", &id, json!({})))
        .await
        .expect("create");
    other_api
        .create(
            &PostParams::default(),
            &dbinstance("db", &id_other, json!({})),
        )
        .await
        .expect("create");
    let db = wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    assert_eq!(placement(&db), (None, ACCOUNT_B.into(), "eu-west-1".into()));
    assert!(
        describe(&rds_in(&role, None, "eu-west-1").await, &id)
            .await
            .is_some()
    );
    wait_dbi(&other_api, "db", "AccountNotGranted", TIMEOUT, |db| {
        synced_reason(db) == "AccountNotGranted"
    })
    .await;
    assert!(server_calls(&id_other).is_empty());
    common::delete_and_wait(&api, "db").await;
    other_api.delete("db", &DeleteParams::default()).await.ok();
}

#[tokio::test]
async fn each_account_has_its_own_event_feed() {
    let (client, ns, api, _) = setup("acctfeed").await;
    let tag = unique("acct");
    let role = create_role(ACCOUNT_A, &tag, None);
    // The feed in the account and region, as docs/events.md sets it up: a queue, and a rule
    // sending RDS's CloudTrail records there (moto_ext puts them on the account's bus).
    let (key, secret, token) = common::assumed(&role, None).await;
    let env = [
        ("AWS_ACCESS_KEY_ID", key.as_str()),
        ("AWS_SECRET_ACCESS_KEY", secret.as_str()),
        ("AWS_SESSION_TOKEN", token.as_str()),
        ("AWS_REGION", "eu-west-1"),
    ];
    let queue = common::coffee_network_with(&["--event-feed", &tag], &env);
    assert!(queue.contains(ACCOUNT_A), "{queue}");
    create_account(
        &client,
        &tag,
        json!({
            "assumeRoleChain": [{"roleARN": role}],
            "regions": ["eu-west-1"],
            "eventQueues": [{"region": "eu-west-1", "queueURL": queue}],
            "namespaceSelector": {"names": [ns]},
        }),
    )
    .await;
    // A drift interval of a minute: only the feed can put a change right within seconds.
    let operator = Operator::start_with(&ns, &["--drift-interval", "60s"]);
    let id = unique("fed");
    let spec = json!({"accountRef": {"name": tag}, "region": "eu-west-1"});
    api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await
        .expect("create");
    wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let there = rds_in(&role, None, "eu-west-1").await;
    let modifies = || {
        operator_metric(
            &operator,
            &format!(
                "rds_operator_rds_api_calls_total{{operation=\"ModifyDBInstance\",outcome=\"ok\",account=\"{ACCOUNT_A}\",region=\"eu-west-1\"}}"
            ),
        )
    };
    // Settled: what follows the create (its own status writes) has run its course.
    tokio::time::sleep(Duration::from_secs(8)).await;
    assert_eq!(modifies(), 0.0);
    common::console_modify(&there, &id, |m| m.db_instance_class("db.t3.small")).await;
    let changed = std::time::Instant::now();
    // The operator's own ModifyDBInstance, putting the class back, well within the drift interval.
    wait_for(
        "the drift put right through the account's feed",
        Duration::from_secs(20),
        || async { (modifies() >= 1.0).then_some(()) },
    )
    .await;
    eprintln!(
        "drift in account {ACCOUNT_A} put right after {:.1} s",
        changed.elapsed().as_secs_f64()
    );
    common::wait_class(&there, &id, "db.t3.micro").await;
    let received = operator_metric(
        &operator,
        &format!(
            "rds_operator_rds_api_calls_total{{operation=\"ReceiveMessage\",outcome=\"ok\",account=\"{ACCOUNT_A}\",region=\"eu-west-1\"}}"
        ),
    );
    assert!(
        received >= 1.0,
        "the feed read the account's queue: {}",
        operator.logs()
    );
    common::delete_and_wait(&api, "db").await;
    common::coffee_network_with(&["--no-event-feed", &tag], &env);
    Api::<AWSAccount>::all(client.clone())
        .delete(&tag, &DeleteParams::default())
        .await
        .ok();
}
