//! A leader takeover with work queued: the standby takes the Lease of a frozen leader and acts on
//! a pending edit in its first pass, whatever else it has to do (deletions of other instances),
//! and without waiting for its first poll of RDS (a drift interval of 60 s, the default).

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

use crate::common::{
    self, Operator, TIMEOUT, dbinstance, is_ready, setup, unique, wait_dbi, wait_for,
};

const LEASE: Duration = Duration::from_secs(4);

async fn holder(leases: &Api<Lease>) -> Option<String> {
    let lease = leases.get_opt("rds-operator-leader").await.ok()??;
    lease.spec?.holder_identity
}

#[tokio::test]
async fn a_new_leader_applies_a_pending_edit_within_a_lease_and_a_pass_while_deleting_others() {
    let (client, ns, api, _) = setup("leader").await;
    let args: Vec<String> = [
        "--namespace",
        &ns,
        "--leader-elect",
        "--leader-election-namespace",
        &ns,
        "--leader-election-lease-duration",
        "4s",
        "--busy-poll-interval",
        "1s",
        "--drift-interval",
        "60s",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    let first = Operator::spawn(&args, common::kubeconfig(), &[]);
    let leases: Api<Lease> = Api::namespaced(client.clone(), &ns);
    wait_for("the first replica to lead", TIMEOUT, || async {
        (holder(&leases).await? == first.name).then_some(())
    })
    .await;
    let second = Operator::spawn(&args, common::kubeconfig(), &[]);

    // The instance to edit, and three others to delete.
    let ids: Vec<String> = (0..4).map(|_| unique("lead")).collect();
    for (i, id) in ids.iter().enumerate() {
        let db = dbinstance(&format!("db-{i}"), id, json!({"deletionPolicy": "Delete"}));
        api.create(&PostParams::default(), &db)
            .await
            .expect("create");
    }
    for i in 0..4 {
        wait_dbi(&api, &format!("db-{i}"), "Ready", TIMEOUT, is_ready).await;
    }

    // The leader freezes; meanwhile three instances are deleted and one edited.
    first.signal("-STOP");
    let frozen = Instant::now();
    for i in 1..4 {
        (api.delete(&format!("db-{i}"), &DeleteParams::default())
            .await)
            .expect("delete");
    }
    common::patch_spec(&api, "db-0", json!({"dbInstanceClass": "db.t3.small"})).await;
    wait_for("the standby to lead", TIMEOUT, || async {
        (holder(&leases).await? == second.name).then_some(())
    })
    .await;
    let led = frozen.elapsed();
    common::wait_class(&common::rds().await, &ids[0], "db.t3.small").await;
    let applied = frozen.elapsed();
    eprintln!(
        "the standby led {:.1} s after the freeze; the edit reached RDS {:.1} s after it",
        led.as_secs_f64(),
        applied.as_secs_f64()
    );
    // The lease (4 s) runs out, the standby takes it (its retry period), and one pass: never
    // the first poll's wait (up to a drift interval, 60 s) or a trigger watch's backoff (30 s).
    assert!(
        applied < LEASE + Duration::from_secs(12),
        "the edit reached RDS {applied:?} after the freeze"
    );
    for i in 1..4 {
        common::wait_gone(&api, &format!("db-{i}"), TIMEOUT).await;
    }
    first.signal("-CONT");
    drop(first);
    (api.delete("db-0", &DeleteParams::default()).await).expect("delete");
    common::wait_gone(&api, "db-0", TIMEOUT).await;
}
