//! A data-loss failover of a global database is approved by the silence of the region RDS reports
//! its writer in (no answer, a connection reset or closed, a 5xx), never by a throttle, never by
//! the silence of the GlobalCluster's own region once the writer has moved, and never recorded as
//! sent before RDS took it. Each test's global database lives in regions no other test uses, so
//! the emulator's outage of a region (`/_rds_ext/outage?region=`, every account) touches no other
//! test.

use std::time::Duration;

use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::dbcluster::DBCluster;
use rds_operator::globalcluster::{FAILOVER_ANNOTATION, GlobalCluster};
use serde_json::json;

use crate::clusters::ready as cluster_ready;
use crate::common::{self, Operator, object_condition, setup, unique, wait_object};

/// The Synced condition's reason and message.
fn synced(g: &GlobalCluster) -> (String, String) {
    object_condition(g, "Synced").map_or_else(Default::default, |c| (c.1, c.2))
}

fn writer(g: &GlobalCluster) -> Option<String> {
    g.status.as_ref().and_then(|s| s.writer.clone())
}

/// An outage of `region` (every account): `faults` for `seconds`, of these actions only when
/// `actions` names any.
fn outage(region: &str, faults: &str, seconds: u64, actions: &str) {
    let path = format!(
        "/_rds_ext/outage?seconds={seconds}&region={region}&faults={faults}&actions={actions}"
    );
    assert!(common::moto_ext_post(&path), "start the outage");
}

/// Waits until the outage of `region` is over.
async fn outage_over(region: &str) {
    let key = format!("\"*|{region}\"");
    common::wait_for("the outage over", Duration::from_secs(150), || async {
        let state = common::moto_ext_get("/_rds_ext/outage")?;
        (!state.contains(&key)).then_some(())
    })
    .await;
}

/// A global database of the examples: its primary DBCluster coffee-aurora in `regions[0]`, the
/// GlobalCluster coffee-global there, and a secondary DBCluster in each other region
/// (coffee-aurora-eu, then coffee-aurora-ca), all Ready, under one operator.
struct Bed {
    operator: Operator,
    client: kube::Client,
    ns: String,
    clusters: Api<DBCluster>,
    globals: Api<GlobalCluster>,
    /// The global database's RDS identifier, and the secondaries' (in the order of the regions).
    gid: String,
    secondaries: Vec<String>,
}

async fn bed(prefix: &str, regions: &[&str]) -> Bed {
    let (client, ns, _instances, _rds) = setup(prefix).await;
    let (id, gid) = (
        unique(&format!("{prefix}-p")),
        unique(&format!("{prefix}-g")),
    );
    let first = unique(&format!("{prefix}-s"));
    let (password, mut primary, mut global, secondary) =
        crate::global_clusters::examples(&id, &first, &gid);
    primary.spec.placement.region = Some(regions[0].into());
    global.spec.placement.region = Some(regions[0].into());
    let operator = Operator::start(&ns);
    let pp = PostParams::default();
    let clusters = crate::global_clusters::primary_ready(&client, &ns, &password, &primary).await;
    let globals: Api<GlobalCluster> = Api::namespaced(client.clone(), &ns);
    (globals.create(&pp, &global).await).expect("the GlobalCluster");
    wait_object(&globals, "coffee-global", "Synced", |g| {
        synced(g).0 == "Synced"
    })
    .await;
    let mut secondaries = Vec::new();
    for (i, region) in regions[1..].iter().enumerate() {
        let mut s = secondary.clone();
        let name = ["coffee-aurora-eu", "coffee-aurora-ca"][i];
        let identifier = match i {
            0 => first.clone(),
            _ => unique(&format!("{prefix}-t")),
        };
        s.metadata.name = Some(name.into());
        s.spec.db_cluster_identifier = Some(identifier.clone());
        s.spec.placement.region = Some((*region).into());
        if let Some(secret) = s.spec.connection.connection_secret.as_mut() {
            secret.name = format!("{name}-connection");
        }
        (clusters.create(&pp, &s).await).expect("a secondary");
        wait_object(&clusters, name, "the secondary Ready", cluster_ready).await;
        secondaries.push(identifier);
    }
    Bed {
        operator,
        client,
        ns,
        clusters,
        globals,
        gid,
        secondaries,
    }
}

impl Bed {
    async fn patch(&self, patch: serde_json::Value) {
        (self.globals)
            .patch(
                "coffee-global",
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
            .expect("patch the GlobalCluster");
    }

    /// Watches the GlobalCluster once a second for `seconds`: no FailoverGlobalCluster reaches
    /// RDS, and `check` holds of Synced's reason and message each time. Returns the GlobalCluster
    /// at the end and how many times the operator read the global database meanwhile (each of
    /// its passes reads it directly while a failover waits), which proves it was deciding.
    async fn no_failover_for(
        &self,
        seconds: u64,
        check: impl Fn(&str, &str),
    ) -> (GlobalCluster, u64) {
        let reads = || common::calls(&self.gid, "DescribeGlobalClusters");
        let before = reads();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
        while tokio::time::Instant::now() < deadline {
            let g = (self.globals.get("coffee-global").await).expect("the GlobalCluster");
            let (reason, message) = synced(&g);
            check(&reason, &message);
            let sent = common::calls(&self.gid, "FailoverGlobalCluster");
            assert_eq!(sent, 0, "{reason}: {message}");
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        let g = (self.globals.get("coffee-global").await).expect("the GlobalCluster");
        (g, reads() - before)
    }

    /// Deletes the secondaries, the primary and the GlobalCluster, and waits until they are gone.
    async fn delete_all(&self, secondaries: &[&str]) {
        let dp = DeleteParams::default();
        for name in secondaries.iter().chain(&["coffee-aurora"]) {
            (self.clusters.delete(name, &dp).await).expect("delete a DBCluster");
        }
        (self.globals.delete("coffee-global", &dp).await).expect("delete the GlobalCluster");
        for name in secondaries.iter().chain(&["coffee-aurora"]) {
            common::wait_object_gone(&self.clusters, name).await;
        }
        common::wait_object_gone(&self.globals, "coffee-global").await;
    }
}

/// The GlobalCluster once it satisfies `check` (90 s at most); on a timeout, the panic shows what
/// its Synced condition said last.
async fn until(
    globals: &Api<GlobalCluster>,
    what: &str,
    check: impl Fn(&GlobalCluster) -> bool,
) -> GlobalCluster {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    let mut last = None;
    while tokio::time::Instant::now() < deadline {
        if let Ok(g) = globals.get("coffee-global").await {
            if check(&g) {
                return g;
            }
            let now = Some((synced(&g), g.status.and_then(|s| s.role_change)));
            if now != last {
                eprintln!("{what}: Synced and roleChange now {now:?}");
            }
            last = now;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("timed out after 90s waiting for {what}; Synced and roleChange last: {last:?}")
}

/// failoverTo `name`, approved by silence only after 60 s (the floor CEL holds it to).
fn failover_to(name: &str) -> serde_json::Value {
    json!({"spec": {"switchoverTo": null, "failoverTo": {"name": name, "allowDataLoss": true,
                                                          "failoverAfter": "60s"}}})
}

#[tokio::test]
async fn a_throttled_primary_region_never_approves_a_failover_and_one_resetting_every_connection_does_once()
 {
    const PRIMARY: &str = "ap-southeast-2";
    let b = bed("gdbfo", &[PRIMARY, "ap-northeast-1"]).await;
    let gid = b.gid.clone();
    // Below the floor: refused at apply.
    let short = json!({"spec": {"failoverTo": {"name": "coffee-aurora-eu",
        "allowDataLoss": true, "failoverAfter": "59s"}}});
    let refused = (b.globals)
        .patch(
            "coffee-global",
            &PatchParams::default(),
            &Patch::Merge(&short),
        )
        .await
        .expect_err("failoverAfter under 60s");
    assert!(refused.to_string().contains("at least 60s"), "{refused}");

    b.patch(failover_to("coffee-aurora-eu")).await;
    wait_object(&b.globals, "coffee-global", "awaiting approval", |g| {
        synced(g).0 == "FailoverAwaitingApproval"
    })
    .await;

    // 65 s of throttling in the primary's region (its breaker open throughout, longer than
    // failoverAfter): never approved, nothing sent.
    outage(PRIMARY, "throttle", 65, "");
    let (g, passes) = b
        .no_failover_for(65, |reason, message| {
            assert_ne!(reason, "SwitchingOver", "{message}")
        })
        .await;
    assert!(passes >= 6, "the operator decided again ({passes} reads)");
    assert!(
        synced(&g).1.contains("it throttled its last call"),
        "it says what it heard: {}",
        synced(&g).1
    );

    // Every connection to it reset before an answer (a network outage, no HTTP answer at all)
    // for longer than failoverAfter: sent once, in the target's region, its approval recorded
    // with the evidence. Before, a broken connection was read as a request never sent.
    outage(PRIMARY, "reset", 80, "");
    let approved = wait_object(&b.globals, "coffee-global", "the failover approved", |g| {
        (g.status.as_ref().and_then(|s| s.role_change.as_ref()))
            .is_some_and(|r| r.approved_by.is_some())
    })
    .await;
    let change = (approved.status.and_then(|s| s.role_change)).expect("recorded");
    let evidence = change.approved_by.expect("its approval");
    let silent = format!("the writer's region {PRIMARY} answered no call for ");
    assert!(evidence.starts_with(&silent), "{evidence}");
    assert!(evidence.contains("the last with NoResponse"), "{evidence}");
    assert!(
        evidence.contains("the target's region ap-northeast-1 answered"),
        "{evidence}"
    );
    common::wait_for("RDS has the failover", Duration::from_secs(30), || async {
        (common::calls(&gid, "FailoverGlobalCluster") >= 1).then_some(())
    })
    .await;
    let once = || async { common::calls(&gid, "FailoverGlobalCluster") == 1 };
    common::holds_over_passes(
        &b.operator,
        ("GlobalCluster", "coffee-global"),
        "sent once",
        once,
    )
    .await;

    outage_over(PRIMARY).await;
    b.delete_all(&["coffee-aurora-eu"]).await;
}

/// The writer moved to another region by a switchover; the GlobalCluster's own region then goes
/// silent for longer than failoverAfter while the writer's answers: nothing is approved, and the
/// status says the writer's region answers. (Before, the GlobalCluster's own region's silence
/// approved a data-loss failover while the writer answered throughout.)
#[tokio::test]
async fn after_a_switchover_the_old_home_regions_silence_approves_no_failover() {
    const HOME: &str = "us-west-1";
    const WRITER: &str = "sa-east-1";
    let b = bed("gdbhome", &[HOME, WRITER, "ca-central-1"]).await;
    let moved = b.secondaries[0].clone();
    b.patch(json!({"spec": {"switchoverTo": {"name": "coffee-aurora-eu"}}}))
        .await;
    wait_object(
        &b.globals,
        "coffee-global",
        "the writer in sa-east-1",
        |g| {
            writer(g).as_deref() == Some(moved.as_str())
                && (g.status.as_ref().and_then(|s| s.role_change.as_ref()))
                    .is_some_and(|r| r.completed)
        },
    )
    .await;

    b.patch(failover_to("coffee-aurora-ca")).await;
    wait_object(&b.globals, "coffee-global", "awaiting approval", |g| {
        synced(g).0 == "FailoverAwaitingApproval"
    })
    .await;
    // The old home region resets every connection for 75 s (past failoverAfter): the operator
    // keeps deciding (it reads the global database in the target's region each pass) and sends
    // nothing.
    outage(HOME, "reset", 75, "");
    let (g, passes) = b
        .no_failover_for(75, |reason, message| {
            assert_eq!(reason, "FailoverAwaitingApproval", "{message}")
        })
        .await;
    assert!(passes >= 10, "the operator decided again ({passes} reads)");
    let message = synced(&g).1;
    assert!(
        message.contains(&format!("the writer's region {WRITER} answers")),
        "{message}"
    );
    assert_eq!(writer(&g).as_deref(), Some(moved.as_str()), "not moved");

    outage_over(HOME).await;
    b.delete_all(&["coffee-aurora-eu", "coffee-aurora-ca"])
        .await;
}

/// An approved failover whose FailoverGlobalCluster is answered with a 503 in the target's region
/// (the likely answer in a regional event) is not recorded as sent: it is decided again from a
/// fresh read and sent again; the second is taken by RDS but its answer lost with its connection,
/// and the next pass finds it done from what RDS shows: taken once. (Before, the plan's record of
/// it was written on the failure, and every later pass reported it "sent" and never sent it.)
#[tokio::test]
async fn a_failover_whose_send_fails_is_sent_again_until_rds_takes_it_once() {
    const TARGET: &str = "eu-west-3";
    let b = bed("gdbsend", &["eu-north-1", TARGET]).await;
    let (gid, target) = (b.gid.clone(), b.secondaries[0].clone());
    b.patch(failover_to("coffee-aurora-eu")).await;
    wait_object(&b.globals, "coffee-global", "awaiting approval", |g| {
        synced(g).0 == "FailoverAwaitingApproval"
    })
    .await;
    // Its first send answered with a 503 (not taken), its second served and its answer lost with
    // its connection (taken, though the operator cannot know it): one failover in the end.
    outage(TARGET, "unavailable,closed", 20, "FailoverGlobalCluster");
    b.patch(json!({"metadata": {"annotations": {FAILOVER_ANNOTATION: "coffee-aurora-eu"}}}))
        .await;
    let done = until(&b.globals, "the target the writer", |g| {
        writer(g).as_deref() == Some(target.as_str())
    })
    .await;
    let change = (done.status.and_then(|s| s.role_change)).expect("recorded once done");
    assert!(change.completed, "{change:?}");
    // A send failed (its Event says so), and RDS took one: the one whose answer was lost.
    let notes = common::event_notes(&b.client, &b.ns, "coffee-global").await;
    assert!(
        notes.contains("FailoverGlobalCluster failed: ServiceUnavailable"),
        "{notes}"
    );
    let once = || async { common::calls(&gid, "FailoverGlobalCluster") == 1 };
    common::holds_over_passes(
        &b.operator,
        ("GlobalCluster", "coffee-global"),
        "taken once",
        once,
    )
    .await;

    outage_over(TARGET).await;
    b.delete_all(&["coffee-aurora-eu"]).await;
}
