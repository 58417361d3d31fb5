//! A data-loss failover of a global database is approved by its primary's region being silent,
//! never by a throttle. The global database lives in regions no other test uses (its primary in
//! ap-southeast-2, its secondary in ap-northeast-1), so the emulator's outage of the primary's
//! region (`/_rds_ext/outage?region=`) touches no other test.

use std::time::Duration;

use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::globalcluster::GlobalCluster;
use serde_json::json;

use crate::clusters::ready as cluster_ready;
use crate::common::{self, Operator, object_condition, setup, unique, wait_object};

const PRIMARY: &str = "ap-southeast-2";
const SECONDARY: &str = "ap-northeast-1";

/// The Synced condition's reason and message.
fn synced(g: &GlobalCluster) -> (String, String) {
    object_condition(g, "Synced").map_or_else(Default::default, |c| (c.1, c.2))
}

/// An outage of the primary's region (every account): `faults` for `seconds`.
fn outage(faults: &str, seconds: u64) {
    let path = format!("/_rds_ext/outage?seconds={seconds}&region={PRIMARY}&faults={faults}");
    assert!(common::moto_ext_post(&path), "start the outage");
}

#[tokio::test]
async fn a_throttled_primary_region_never_approves_a_failover_and_a_silent_one_does_once() {
    let (client, ns, _instances, _rds) = setup("gdbfo").await;
    let (id, sec, gid) = (unique("gfo-p"), unique("gfo-s"), unique("gfo-g"));
    let (password, mut primary, mut global, mut secondary) =
        crate::global_clusters::examples(&id, &sec, &gid);
    primary.spec.placement.region = Some(PRIMARY.into());
    global.spec.placement.region = Some(PRIMARY.into());
    secondary.spec.placement.region = Some(SECONDARY.into());

    let _operator = Operator::start(&ns);
    let pp = PostParams::default();
    let clusters = crate::global_clusters::primary_ready(&client, &ns, &password, &primary).await;
    let globals: Api<GlobalCluster> = Api::namespaced(client.clone(), &ns);
    (globals.create(&pp, &global).await).expect("the GlobalCluster");
    wait_object(&globals, "coffee-global", "Synced", |g| {
        synced(g).0 == "Synced"
    })
    .await;
    (clusters.create(&pp, &secondary).await).expect("the secondary");
    wait_object(
        &clusters,
        "coffee-aurora-eu",
        "the secondary Ready",
        cluster_ready,
    )
    .await;

    // failoverTo, approved once the primary's region has answered nothing for 8 s.
    let failover = json!({"spec": {"failoverTo": {"name": "coffee-aurora-eu", "allowDataLoss": true,
                                                    "failoverAfter": "8s"}}});
    (globals.patch(
        "coffee-global",
        &PatchParams::default(),
        &Patch::Merge(&failover),
    ))
    .await
    .expect("failoverTo");
    wait_object(&globals, "coffee-global", "awaiting approval", |g| {
        synced(g).0 == "FailoverAwaitingApproval"
    })
    .await;

    // 25 s of throttling in the primary's region (its breaker open throughout, three times
    // failoverAfter): never approved, nothing sent.
    outage("throttle", 25);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(25);
    while tokio::time::Instant::now() < deadline {
        let g = (globals.get("coffee-global").await).expect("the GlobalCluster");
        let (reason, message) = synced(&g);
        assert_ne!(reason, "SwitchingOver", "{message}");
        let sent = common::calls(&gid, "FailoverGlobalCluster");
        assert_eq!(sent, 0, "{reason}: {message}");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }

    // Silent (503 to every call) for longer than failoverAfter: sent once, in the target's
    // region, its approval recorded with the evidence.
    outage("unavailable", 40);
    let approved = wait_object(&globals, "coffee-global", "the failover approved", |g| {
        (g.status.as_ref().and_then(|s| s.role_change.as_ref()))
            .is_some_and(|r| r.approved_by.is_some())
    })
    .await;
    let change = (approved.status.and_then(|s| s.role_change)).expect("recorded");
    let evidence = change.approved_by.expect("its approval");
    let silent = format!("the primary's region {PRIMARY} answered no call for ");
    assert!(evidence.starts_with(&silent), "{evidence}");
    assert!(
        evidence.contains("the last with ServiceUnavailable"),
        "{evidence}"
    );
    common::wait_for("RDS has the failover", Duration::from_secs(30), || async {
        (common::calls(&gid, "FailoverGlobalCluster") >= 1).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(common::calls(&gid, "FailoverGlobalCluster"), 1, "sent once");

    // The outage over (this test's is of every account, "*"), everything is deleted.
    common::wait_for("the outage over", Duration::from_secs(60), || async {
        let state = common::moto_ext_get("/_rds_ext/outage")?;
        (!state.contains("\"*\"")).then_some(())
    })
    .await;
    let dp = DeleteParams::default();
    (clusters.delete("coffee-aurora-eu", &dp).await).expect("delete the secondary");
    (clusters.delete("coffee-aurora", &dp).await).expect("delete the primary");
    (globals.delete("coffee-global", &dp).await).expect("delete the GlobalCluster");
    common::wait_object_gone(&clusters, "coffee-aurora-eu").await;
    common::wait_object_gone(&clusters, "coffee-aurora").await;
    common::wait_object_gone(&globals, "coffee-global").await;
}
