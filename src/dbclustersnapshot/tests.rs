//! This kind's own table tests: the shared plan (table-tested through DBSnapshot) speaks of a
//! cluster here, calls the cluster's RDS calls and writes this kind's status fields.

use crate::context::Grants;
use crate::managed::named::fixtures::{self, owner_tags};
use crate::snapshot::plan::{Own, Step};
use crate::snapshot::{Extra, Source};

use super::{ClusterSnapshotSource, DBClusterSnapshot, DBClusterSnapshotSpec};

/// The DBClusterSnapshot shop/orders-before of the DBCluster orders, never taken.
fn facts(source: Source) -> crate::snapshot::plan::Facts<DBClusterSnapshot> {
    let spec = DBClusterSnapshotSpec {
        db_cluster_snapshot_identifier: Some("Orders-Before".into()),
        source: Some(ClusterSnapshotSource {
            name: Some("orders".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut snapshot = DBClusterSnapshot::new("orders", spec);
    snapshot.metadata.generation = Some(1);
    let extra = Extra {
        source,
        ..Default::default()
    };
    fixtures::facts(snapshot, extra)
}

fn cluster(status: &str, tags: std::collections::BTreeMap<String, String>) -> Source {
    Source::Found {
        identifier: "orders-db".into(),
        status: status.into(),
        tags,
        instance_tags: None,
        grants: Grants::default(),
    }
}

fn shop_cluster() -> std::collections::BTreeMap<String, String> {
    [
        (crate::crd::OWNER_TAG.to_owned(), "uid-cluster".to_owned()),
        (
            crate::crd::OWNER_NAME_TAG.to_owned(),
            "shop/orders".to_owned(),
        ),
    ]
    .into()
}

#[test]
fn a_snapshot_of_an_available_cluster_of_the_namespace_is_taken_once_and_reported_as_the_clusters()
{
    let plan = crate::snapshot::steps::plan(&facts(cluster("available", shop_cluster())));
    let Some(Step::Own(Own::Create {
        name,
        instance,
        tags,
    })) = plan.steps.first()
    else {
        panic!("a create first: {:?}", plan.steps)
    };
    assert_eq!(
        (name.as_str(), instance.as_str()),
        ("orders-before", "orders-db"),
        "the RDS name in lower case, of the cluster"
    );
    let mut ours = owner_tags();
    ours.insert(crate::crd::OWNER_NAME_TAG.into(), "shop/orders".into());
    assert_eq!(tags, &ours, "the ownership tags, from the first moment");
    let status = plan.status.expect("a status");
    assert_eq!(
        (status.fields.db_cluster_snapshot_identifier.as_deref()),
        Some("orders-before")
    );
    assert_eq!(
        status.fields.db_cluster_identifier.as_deref(),
        Some("orders-db")
    );
    assert_eq!(status.fields.report.state.as_deref(), Some("creating"));
}

#[test]
fn another_namespaces_cluster_is_refused_in_the_clusters_words_with_no_call() {
    let mut theirs = shop_cluster();
    theirs.insert(crate::crd::OWNER_NAME_TAG.into(), "other/orders".into());
    let plan = crate::snapshot::steps::plan(&facts(cluster("available", theirs)));
    assert!(
        !(plan.steps.iter()).any(|s| matches!(s, Step::Own(_))),
        "no call: {:?}",
        plan.steps
    );
    let status = plan.status.expect("a status");
    assert_eq!(status.synced.reason, "SourceNotOwned");
    assert!(
        status.synced.message.contains("RDS DB cluster orders-db"),
        "{}",
        status.synced.message
    );
}
