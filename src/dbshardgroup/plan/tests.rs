//! The DBShardGroup plan, a rule a row.

use super::*;
use crate::crd::LocalRef;
use crate::dbshardgroup::{Cluster, DBShardGroupSpec};
use crate::managed::named::fixtures::{
    self, deleting, owner_tags, step_names as steps, synced_reason as synced, with,
};

fn facts() -> Facts {
    let spec = DBShardGroupSpec {
        db_cluster_ref: LocalRef {
            name: "limitless".into(),
        },
        max_acu: 768.0,
        min_acu: Some(16.0),
        compute_redundancy: Some(0),
        ..Default::default()
    };
    let mut s = DBShardGroup::new("coffee", spec);
    s.metadata.generation = Some(1);
    let cluster = Cluster {
        identifier: Some("coffee-limitless".into()),
        unresolved: None,
    };
    fixtures::facts(s, cluster)
}

fn in_rds(status: &str) -> ObservedShardGroup {
    ObservedShardGroup {
        name: "coffee".into(),
        arn: Some("arn:aws:rds:us-east-1:123456789012:shard-group:coffee".into()),
        cluster: "coffee-limitless".into(),
        max_acu: Some(768.0),
        min_acu: Some(16.0),
        compute_redundancy: Some(0),
        status: status.into(),
        endpoint: Some("coffee-limitless.limitless-abc.us-east-1.rds.amazonaws.com".into()),
        tags: owner_tags(),
        ..Default::default()
    }
}

fn existing(f: Facts) -> Facts {
    with(f, |f| f.observed = Some(in_rds("available")))
}

#[test]
fn rules() {
    let rows: Vec<(&str, Facts, Vec<&str>, &str)> = vec![
        (
            "the DBCluster not Ready yet: wait, nothing sent",
            with(facts(), |f| {
                f.extra.identifier = None;
                f.extra.unresolved = Some("DBCluster limitless is not Ready yet".into())
            }),
            vec![],
            "ReferencesUnresolved",
        ),
        (
            "none in RDS: one create",
            facts(),
            vec!["Create"],
            "Updating",
        ),
        ("in sync: nothing", existing(facts()), vec![], "Synced"),
        (
            "more capacity and a standby: one modify with both",
            with(existing(facts()), |f| {
                f.object.spec.max_acu = 1024.0;
                f.object.spec.compute_redundancy = Some(1);
            }),
            vec!["Modify"],
            "Updating",
        ),
        (
            "minACU and computeRedundancy left out: RDS's are kept",
            with(existing(facts()), |f| {
                f.object.spec.min_acu = None;
                f.object.spec.compute_redundancy = None;
            }),
            vec![],
            "Synced",
        ),
        (
            "RDS is creating it: a change waits",
            with(facts(), |f| {
                f.object.spec.max_acu = 1024.0;
                f.observed = Some(in_rds("creating"));
            }),
            vec![],
            "Busy",
        ),
        (
            "RDS is rebooting it: a change waits",
            with(facts(), |f| {
                f.object.spec.max_acu = 1024.0;
                f.observed = Some(in_rds("rebooting"));
            }),
            vec![],
            "Busy",
        ),
        (
            "a shard group of the identifier that is not ours: never changed",
            with(facts(), |f| {
                let mut theirs = in_rds("available");
                theirs.tags = Default::default();
                f.observed = Some(theirs);
            }),
            vec![],
            "NameInUse",
        ),
        (
            "deleted: the group kinds' deletion",
            deleting(with(existing(facts()), |f| f.extra = Cluster::default())),
            vec!["Delete", "RemoveFinalizer"],
            "",
        ),
    ];
    for (name, f, want, reason) in rows {
        let p = plan(&f);
        assert_eq!(steps::<DBShardGroup>(&p), want, "{name}");
        if !reason.is_empty() {
            assert_eq!(synced::<DBShardGroup>(&p), reason, "{name}");
        }
    }
}

#[test]
fn the_create_carries_the_cluster_capacity_and_ownership_tags_and_status_reports_the_endpoint() {
    let p = plan(&facts());
    let Some(Step::Own(Own::Create(c))) = p.steps.first() else {
        panic!("a create: {:?}", p.steps)
    };
    assert_eq!(
        (c.cluster.as_str(), c.max_acu, c.min_acu),
        ("coffee-limitless", 768.0, Some(16.0))
    );
    assert!(c.tags.contains_key(crate::crd::OWNER_TAG));
    let p = plan(&existing(facts()));
    let status = p.status.expect("status");
    assert!(status.ready.ok);
    let endpoint = status.fields.endpoint.as_deref();
    assert_eq!(
        endpoint,
        Some("coffee-limitless.limitless-abc.us-east-1.rds.amazonaws.com")
    );
    let p = plan(&with(facts(), |f| f.observed = Some(in_rds("creating"))));
    assert!(
        !p.status.expect("status").ready.ok,
        "not Ready while RDS creates it"
    );
}

/// Ready by RDS's word on this shard group, never by the absence of one (issue 76): not made
/// yet, made and still creating, its cluster not resolved, or RDS reporting it anything but
/// available is not Ready.
#[test]
fn ready_only_when_rds_reports_the_shard_group_available() {
    let rows: Vec<(&str, Facts, bool)> = vec![
        (
            "none in RDS yet: the create goes, not Ready",
            facts(),
            false,
        ),
        (
            "its DBCluster not resolved, none in RDS",
            with(facts(), |f| {
                f.extra.identifier = None;
                f.extra.unresolved = Some("DBCluster limitless is not Ready yet".into())
            }),
            false,
        ),
        (
            "creating",
            with(facts(), |f| f.observed = Some(in_rds("creating"))),
            false,
        ),
        (
            "modifying",
            with(facts(), |f| f.observed = Some(in_rds("modifying"))),
            false,
        ),
        ("available", existing(facts()), true),
    ];
    for (name, f, ready) in rows {
        let p = plan(&f);
        assert_eq!(p.status.expect("a status").ready.ok, ready, "{name}");
    }
}
