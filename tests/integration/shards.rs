//! Scale out by account (`--shards`): the (account, region) pairs spread over shards, a Lease
//! each; every replica leads a share at once; a frozen replica's shards move to the others within
//! a lease duration, and once thawed it acts on nothing it no longer leads.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, PostParams};
use rds_operator::shards::shard_of;
use serde_json::json;

use crate::common::{
    self, Operator, TIMEOUT, dbinstance, is_ready, operator_metric, setup, unique, wait_dbi,
    wait_for,
};

const REGIONS: [&str; 4] = ["us-east-1", "eu-west-1", "eu-central-1", "ap-south-1"];
const SHARDS: usize = 4;

/// The operator's calls of `operation` in the operator's own account in `region`.
fn calls_in(operator: &Operator, operation: &str, region: &str) -> f64 {
    operator_metric(
        operator,
        &format!(
            "rds_operator_rds_api_calls_total{{operation=\"{operation}\",outcome=\"ok\",account=\"123456789012\",region=\"{region}\"}}"
        ),
    )
}

/// Shard -> holder, as the Leases say.
async fn holders(leases: &Api<Lease>) -> BTreeMap<usize, String> {
    let mut held = BTreeMap::new();
    for k in 0..SHARDS {
        let lease = leases
            .get_opt(&format!("rds-operator-leader-shard-{k}"))
            .await;
        if let Some(holder) = lease.ok().flatten().and_then(|l| l.spec?.holder_identity) {
            held.insert(k, holder);
        }
    }
    held
}

/// Waits until every shard is led, two by each replica.
async fn two_each(leases: &Api<Lease>, names: &BTreeSet<String>, what: &str) {
    wait_for(what, TIMEOUT, || async {
        let held = holders(leases).await;
        let per: Vec<usize> = (names.iter())
            .map(|n| held.values().filter(|h| *h == n).count())
            .collect();
        (held.len() == SHARDS && per == [2, 2]).then_some(())
    })
    .await;
}

#[tokio::test]
async fn replicas_share_the_pairs_and_a_frozen_replica_acts_on_nothing_it_lost() {
    let (client, ns, api, _) = setup("shards").await;
    let args: Vec<String> = [
        "--namespace",
        &ns,
        "--leader-elect",
        "--leader-election-namespace",
        &ns,
        "--leader-election-lease-duration",
        "4s",
        "--shards",
        "4",
        "--busy-poll-interval",
        "1s",
        "--drift-interval",
        "5s",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    let first = Operator::spawn(&args, common::kubeconfig(), &[]);
    let second = Operator::spawn(&args, common::kubeconfig(), &[]);
    let leases: Api<Lease> = Api::namespaced(client.clone(), &ns);
    // Every shard is led, and both replicas lead a share: two each.
    let names = BTreeSet::from([first.name.clone(), second.name.clone()]);
    two_each(&leases, &names, "two shards each").await;

    // An instance in each region of the operator's account: four pairs.
    let ids: Vec<String> = REGIONS.iter().map(|_| unique("sharded")).collect();
    for (i, region) in REGIONS.iter().enumerate() {
        let db = dbinstance(&format!("db-{i}"), &ids[i], json!({"region": region}));
        api.create(&PostParams::default(), &db)
            .await
            .expect("create");
    }
    for i in 0..REGIONS.len() {
        wait_dbi(&api, &format!("db-{i}"), "Ready", TIMEOUT, is_ready).await;
    }
    // Each pair was made by the replica leading its shard, and only by it.
    let held = holders(&leases).await;
    let by_name = |name: &str| if name == first.name { &first } else { &second };
    for region in REGIONS {
        let shard = shard_of(&format!("own/{region}"), SHARDS);
        let leader = by_name(&held[&shard]);
        let other = if leader.name == first.name {
            &second
        } else {
            &first
        };
        assert_eq!(
            calls_in(leader, "CreateDBInstance", region),
            1.0,
            "{region}: its shard's leader created it"
        );
        assert_eq!(
            calls_in(other, "CreateDBInstance", region),
            0.0,
            "{region}: the other did not"
        );
    }

    // The first replica freezes: its shards move to the second within a lease duration (4 s)
    // and a round (about 1.3 s), and the second acts on them.
    let frozen_shards: Vec<usize> = (held.iter())
        .filter(|(_, h)| **h == first.name)
        .map(|(k, _)| *k)
        .collect();
    let modifies_before: f64 = REGIONS
        .iter()
        .map(|r| calls_in(&first, "ModifyDBInstance", r))
        .sum();
    first.signal("-STOP");
    let frozen_at = std::time::Instant::now();
    wait_for(
        "the second to lead every shard",
        Duration::from_secs(20),
        || async {
            let held = holders(&leases).await;
            (held.len() == SHARDS && held.values().all(|h| *h == second.name)).then_some(())
        },
    )
    .await;
    let moved = frozen_at.elapsed();
    let moved_regions: Vec<(usize, &str)> = (REGIONS.iter().enumerate())
        .filter(|(_, r)| frozen_shards.contains(&shard_of(&format!("own/{r}"), SHARDS)))
        .map(|(i, r)| (i, *r))
        .collect();
    for (i, _) in &moved_regions {
        common::patch_spec(
            &api,
            &format!("db-{i}"),
            json!({"dbInstanceClass": "db.t3.small"}),
        )
        .await;
    }
    for (i, region) in &moved_regions {
        common::wait_class(
            &common::rds_of_region(region).await,
            &ids[*i],
            "db.t3.small",
        )
        .await;
    }
    eprintln!(
        "the frozen replica's shards {frozen_shards:?} moved after {:.1} s",
        moved.as_secs_f64()
    );

    // Thawed, the first replica acts on nothing it no longer leads: its own clock says its
    // renewals are past the deadline. Each instance was modified once, by the second.
    // Over three of its own listings after the thaw: it was alive, and sent nothing.
    first.signal("-CONT");
    let all = |op: &str| -> f64 { REGIONS.iter().map(|r| calls_in(&first, op, r)).sum() };
    let listings = common::listings(&first);
    let unsent = || async { all("ModifyDBInstance") == modifies_before };
    let what = "the thawed replica sent no ModifyDBInstance";
    let counted = (listings, "listings of the thawed replica");
    common::holds_while(counted, Duration::ZERO, what, unsent).await;
    for (i, _) in &moved_regions {
        assert_eq!(
            common::calls(&ids[*i], "ModifyDBInstance"),
            1,
            "{}",
            first.logs()
        );
    }
    // It rejoins: two shards each again.
    two_each(&leases, &names, "two shards each again").await;
    for i in 0..REGIONS.len() {
        common::delete_and_wait(&api, &format!("db-{i}")).await;
    }
}
