//! The GlobalCluster plan's table tests: the facts in, the steps and conditions out.

use super::*;
use crate::crd::LocalRef;
use crate::globalcluster::{GlobalClusterSpec, GlobalDeletionPolicy, GlobalMember};
use crate::managed::named::fixtures::{self, deleting, owner_tags, with};

/// The GlobalCluster shop/coffee, made of the DBCluster coffee, never made.
fn facts(primary: Primary) -> Facts {
    let spec = GlobalClusterSpec {
        source_db_cluster_ref: Some(LocalRef {
            name: "coffee".into(),
        }),
        ..Default::default()
    };
    let mut g = GlobalCluster::new("coffee", spec);
    g.metadata.generation = Some(1);
    let reads = crate::globalcluster::Reads {
        primary,
        ..Default::default()
    };
    fixtures::facts(g, reads)
}

fn found(status: &str) -> Primary {
    Primary::Found {
        arn: "arn:aws:rds:us-east-1:123456789012:cluster:coffee-db".into(),
        status: status.into(),
    }
}

fn member(id: &str, region: &str, role: &str) -> GlobalMember {
    GlobalMember {
        db_cluster_identifier: id.into(),
        region: region.into(),
        role: role.into(),
        ..Default::default()
    }
}

/// RDS's global database of the name, this object's, with these members.
fn observed(status: &str, members: Vec<GlobalMember>) -> ObservedGlobalCluster {
    ObservedGlobalCluster {
        identifier: "coffee".into(),
        arn: Some("arn:aws:rds::123456789012:global-cluster:coffee".into()),
        status: status.into(),
        engine: Some("aurora-mysql".into()),
        engine_version: Some("8.0.mysql_aurora.3.08.0".into()),
        deletion_protection: Some(false),
        members,
        tags: owner_tags(),
        ..Default::default()
    }
}

fn existing(members: Vec<GlobalMember>) -> Facts {
    with(facts(Primary::NotRead), |f| {
        f.observed = Some(observed("available", members))
    })
}

fn own(plan: &Plan) -> Vec<&Own> {
    (plan.steps.iter())
        .filter_map(|s| match s {
            Step::Own(own) => Some(own),
            _ => None,
        })
        .collect()
}

fn synced(plan: &Plan) -> String {
    plan.status
        .as_ref()
        .expect("a status")
        .synced
        .reason
        .clone()
}

#[test]
fn the_global_database_is_made_once_of_an_available_primary_of_the_namespace() {
    let cases: Vec<(&str, Facts, bool, &str)> = vec![
        (
            "the primary is available",
            facts(found("available")),
            true,
            "Creating",
        ),
        (
            "the primary DBCluster is not Ready",
            facts(Primary::Unresolved("DBCluster coffee is not Ready".into())),
            false,
            "ReferencesUnresolved",
        ),
        (
            "RDS is busy with the primary",
            facts(found("modifying")),
            false,
            "SourceNotAvailable",
        ),
        (
            "made once already (status has its ARN) and gone: not made again",
            with(facts(found("available")), |f| {
                f.object.status = Some(GlobalClusterStatus {
                    arn: Some("arn:aws:rds::123456789012:global-cluster:coffee".into()),
                    ..Default::default()
                })
            }),
            false,
            "NotFound",
        ),
        (
            "it exists and is this object's: not made again",
            existing(vec![member("coffee-db", "us-east-1", "writer")]),
            false,
            "Synced",
        ),
    ];
    for (case, f, creates, reason) in cases {
        let p = plan(&f);
        let made = own(&p).iter().any(|s| matches!(s, Own::Create { .. }));
        assert_eq!(made, creates, "{case}: {:?}", p.steps);
        assert_eq!(synced(&p), reason, "{case}");
    }
    let p = plan(&facts(found("available")));
    let Some(Own::Create {
        source_arn,
        engine,
        tags,
        ..
    }) = own(&p).first().copied()
    else {
        panic!("a create")
    };
    assert_eq!(
        source_arn.as_deref(),
        Some("arn:aws:rds:us-east-1:123456789012:cluster:coffee-db"),
        "the primary by ARN"
    );
    assert_eq!(engine, &None, "the primary's engine, not the spec's");
    assert_eq!(tags, &owner_tags(), "tagged from its first moment");
}

#[test]
fn an_empty_global_database_takes_the_specs_engine() {
    let f = with(facts(Primary::NotRead), |f| {
        f.object.spec.source_db_cluster_ref = None;
        f.object.spec.engine = Some(crate::database::choices::ClusterEngine::AuroraPostgresql);
        f.object.spec.engine_version = Some("16.4".into());
    });
    let p = plan(&f);
    let Some(Own::Create {
        source_arn,
        engine,
        engine_version,
        ..
    }) = own(&p).first().copied()
    else {
        panic!("a create: {:?}", p.steps)
    };
    assert_eq!(source_arn, &None);
    assert_eq!(engine.as_deref(), Some("aurora-postgresql"));
    assert_eq!(engine_version.as_deref(), Some("16.4"));
}

#[test]
fn another_objects_global_database_of_the_name_is_left_alone() {
    let f = with(existing(vec![]), |f| {
        f.observed.as_mut().expect("observed").tags = Default::default()
    });
    let p = plan(&f);
    assert!(own(&p).is_empty());
    assert_eq!(synced(&p), "NameInUse");
}

#[test]
fn deletion_protection_and_the_engine_version_are_kept_in_one_modification() {
    type Case = (
        &'static str,
        Option<bool>,
        Option<&'static str>,
        Option<Own>,
    );
    let cases: Vec<Case> = vec![
        (
            "as the spec says",
            Some(false),
            Some("8.0.mysql_aurora.3.08.0"),
            None,
        ),
        (
            "a shorter version RDS's starts with",
            None,
            Some("8.0.mysql_aurora.3.08"),
            None,
        ),
        (
            "protection asked",
            Some(true),
            None,
            Some(Own::Modify {
                name: "coffee".into(),
                deletion_protection: Some(true),
                engine_version: None,
                allow_major_version_upgrade: false,
            }),
        ),
        (
            "a newer version",
            None,
            Some("8.0.mysql_aurora.3.09.0"),
            Some(Own::Modify {
                name: "coffee".into(),
                deletion_protection: None,
                engine_version: Some("8.0.mysql_aurora.3.09.0".into()),
                allow_major_version_upgrade: false,
            }),
        ),
    ];
    for (case, protection, version, want) in cases {
        let f = with(existing(vec![]), |f| {
            f.object.spec.deletion_protection = protection;
            f.object.spec.engine_version = version.map(str::to_owned);
        });
        let p = plan(&f);
        assert_eq!(own(&p).first().copied(), want.as_ref(), "{case}");
    }
    // Nothing is sent while RDS is busy with it.
    let busy = with(existing(vec![]), |f| {
        f.object.spec.deletion_protection = Some(true);
        f.observed.as_mut().expect("observed").status = "modifying".into();
    });
    assert!(own(&plan(&busy)).is_empty());
}

#[test]
fn the_status_names_the_writer_and_each_member_with_its_role_and_region() {
    let members = vec![
        member("coffee-db", "us-east-1", "writer"),
        member("coffee-eu", "eu-west-1", "reader"),
    ];
    let p = plan(&existing(members.clone()));
    let status = p.status.expect("a status");
    assert_eq!(status.fields.writer.as_deref(), Some("coffee-db"));
    assert_eq!(status.fields.members, members);
    assert!(status.ready.ok);
}

#[test]
fn a_deletion_waits_while_member_clusters_are_left_with_no_call() {
    let cases: Vec<(&str, Facts, Vec<Step>)> = vec![
        (
            "a member left: waits",
            deleting(existing(vec![member("coffee-db", "us-east-1", "writer")])),
            vec![],
        ),
        (
            "no member: deleted",
            deleting(existing(vec![])),
            vec![
                Step::Delete {
                    name: "coffee".into(),
                },
                Step::RemoveFinalizer,
            ],
        ),
        (
            "no member, Retain: kept, tagged retained",
            with(deleting(existing(vec![])), |f| {
                f.object.spec.deletion_policy = Some(GlobalDeletionPolicy::Retain)
            }),
            vec![
                Step::AddTags {
                    arn: "arn:aws:rds::123456789012:global-cluster:coffee".into(),
                    tags: [(
                        crate::crd::RETAINED_TAG.to_owned(),
                        fixtures::facts(
                            GlobalCluster::new("x", Default::default()),
                            Default::default(),
                        )
                        .now,
                    )]
                    .into(),
                },
                Step::RemoveFinalizer,
            ],
        ),
    ];
    for (case, f, want) in cases {
        let p = plan(&f);
        assert_eq!(p.steps, want, "{case}");
    }
    let p = plan(&deleting(existing(vec![member(
        "coffee-db",
        "us-east-1",
        "writer",
    )])));
    assert_eq!(synced(&p), "InUse");
    assert!(
        (p.status.expect("a status").synced.message).contains("coffee-db (us-east-1)"),
        "names what is left"
    );
}

mod role;
