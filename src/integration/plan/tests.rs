//! The Integration plan, a rule a row.

use super::*;
use crate::crd::LocalRef;
use crate::integration::{IntegrationSpec, Source};
use crate::managed::named::fixtures::{
    self, deleting, owner_tags, step_names as steps, synced_reason as synced, with,
};

const SOURCE: &str = "arn:aws:rds:us-east-1:123456789012:cluster:coffee-aurora";
const TARGET: &str = "arn:aws:redshift-serverless:us-east-1:123456789012:namespace/6f1b2c3d";
const THEIRS: &str = "arn:aws:redshift-serverless:us-east-1:999999999999:namespace/6f1b2c3d";

fn facts() -> Facts {
    let spec = IntegrationSpec {
        db_cluster_ref: LocalRef {
            name: "aurora".into(),
        },
        target_arn: TARGET.into(),
        data_filter: Some("include: COFFEE.*".into()),
        ..Default::default()
    };
    let mut i = Integration::new("coffee", spec);
    i.metadata.generation = Some(1);
    let source = Source {
        arn: Some(SOURCE.into()),
        unresolved: None,
        accounts: vec!["123456789012".into()],
    };
    fixtures::facts(i, source)
}

fn in_rds(status: &str) -> ObservedIntegration {
    ObservedIntegration {
        name: "coffee".into(),
        arn: Some("arn:aws:rds:us-east-1:123456789012:integration:5b9f3d79".into()),
        source_arn: SOURCE.into(),
        target_arn: TARGET.into(),
        data_filter: Some("include: COFFEE.*".into()),
        status: status.into(),
        tags: owner_tags(),
        ..Default::default()
    }
}

fn existing(f: Facts) -> Facts {
    with(f, |f| f.observed = Some(in_rds("active")))
}

#[test]
fn rules() {
    let rows: Vec<(&str, Facts, Vec<&str>, &str)> = vec![
        (
            "the DBCluster not Ready yet: wait, nothing sent",
            with(facts(), |f| {
                f.extra.arn = None;
                f.extra.unresolved = Some("DBCluster aurora is not Ready yet".into())
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
            "a target in an account the namespace is not granted: refused, nothing sent",
            with(facts(), |f| f.object.spec.target_arn = THEIRS.into()),
            vec![],
            "TargetNotGranted",
        ),
        (
            "that account granted (an AWSAccount of the namespace, or --grant-share-to): created",
            with(facts(), |f| {
                f.object.spec.target_arn = THEIRS.into();
                f.extra.accounts.push("999999999999".into());
            }),
            vec!["Create"],
            "Updating",
        ),
        (
            "--grant-share-to '*': created",
            with(facts(), |f| {
                f.object.spec.target_arn = THEIRS.into();
                f.extra.accounts.push("*".into());
            }),
            vec!["Create"],
            "Updating",
        ),
        (
            "another data filter: one modify",
            with(existing(facts()), |f| {
                f.object.spec.data_filter = Some("include: COFFEE.suppliers".into())
            }),
            vec!["Modify"],
            "Updating",
        ),
        (
            "no data filter in the spec: RDS's is kept",
            with(existing(facts()), |f| f.object.spec.data_filter = None),
            vec![],
            "Synced",
        ),
        (
            "a description added: one modify",
            with(existing(facts()), |f| {
                f.object.spec.description = Some("suppliers".into())
            }),
            vec!["Modify"],
            "Updating",
        ),
        (
            "RDS is creating it: a change waits",
            with(facts(), |f| {
                f.object.spec.description = Some("suppliers".into());
                f.observed = Some(in_rds("creating"));
            }),
            vec![],
            "Busy",
        ),
        (
            "RDS reports it failed: reported with its errors, nothing sent",
            with(facts(), |f| {
                let mut failed = in_rds("failed");
                failed.errors = vec!["InternalError: the target is gone".into()];
                f.observed = Some(failed);
            }),
            vec![],
            "IntegrationFailed",
        ),
        (
            "an integration of the name that is not ours: never changed",
            with(facts(), |f| {
                let mut theirs = in_rds("active");
                theirs.tags = Default::default();
                f.observed = Some(theirs);
            }),
            vec![],
            "NameInUse",
        ),
        (
            "deleted: the group kinds' deletion, whatever its target",
            deleting(with(existing(facts()), |f| {
                f.object.spec.target_arn = THEIRS.into();
                f.extra = Source::default();
            })),
            vec!["Delete", "RemoveFinalizer"],
            "",
        ),
    ];
    for (name, f, want, reason) in rows {
        let p = plan(&f);
        assert_eq!(steps::<Integration>(&p), want, "{name}");
        if !reason.is_empty() {
            assert_eq!(synced::<Integration>(&p), reason, "{name}");
        }
    }
}

#[test]
fn the_create_carries_the_source_target_filter_and_ownership_tags() {
    let p = plan(&facts());
    let Some(Step::Own(Own::Create(c))) = p.steps.first() else {
        panic!("a create: {:?}", p.steps)
    };
    assert_eq!(
        (c.source_arn.as_str(), c.target_arn.as_str()),
        (SOURCE, TARGET)
    );
    assert_eq!(c.data_filter.as_deref(), Some("include: COFFEE.*"));
    assert_eq!(c.name, "coffee");
    assert!(c.tags.contains_key(crate::crd::OWNER_TAG));
    let refused = plan(&with(facts(), |f| f.object.spec.target_arn = THEIRS.into()));
    let message = refused.status.expect("status").synced.message;
    assert!(message.contains("999999999999"), "{message}");
    assert_eq!(refused.requeue, Requeue::After(facts().drift_interval));
    assert!(
        refused
            .events
            .iter()
            .any(|e| e.reason == "TargetNotGranted")
    );
}

#[test]
fn ready_while_it_replicates_and_not_while_it_is_made_or_failed() {
    for (status, ready) in [
        ("creating", false),
        ("active", true),
        ("modifying", true),
        ("syncing", true),
        ("needs_attention", false),
        ("failed", false),
    ] {
        let p = plan(&with(facts(), |f| f.observed = Some(in_rds(status))));
        assert_eq!(p.status.expect("status").ready.ok, ready, "{status}");
    }
}

/// Ready by RDS's word on this integration, never by the absence of one (issue 76): none in
/// RDS yet (the create goes), or its DBCluster not resolved, is not Ready.
#[test]
fn not_ready_before_rds_lists_the_integration() {
    let p = plan(&facts());
    assert_eq!(steps::<Integration>(&p), vec!["Create".to_string()]);
    assert!(!p.status.expect("a status").ready.ok, "just created");
    let unresolved = with(facts(), |f| {
        f.extra.arn = None;
        f.extra.unresolved = Some("DBCluster coffee is not Ready yet".into());
    });
    let p = plan(&unresolved);
    assert!(
        steps::<Integration>(&p).is_empty(),
        "{:?}",
        steps::<Integration>(&p)
    );
    assert!(!p.status.expect("a status").ready.ok, "unresolved");
}
