//! The EventSubscription plan, a rule a row.

use super::*;
use crate::crd::LocalRef;
use crate::eventsubscription::{EventSubscriptionSpec, SourceType, Sources};
use crate::managed::named::fixtures::{self, deleting, owner_tags, with};

const TOPIC: &str = "arn:aws:sns:us-east-1:123456789012:rds-events";

fn facts() -> Facts {
    let spec = EventSubscriptionSpec {
        sns_topic_arn: TOPIC.into(),
        source_type: SourceType::DbInstance,
        source_refs: vec![LocalRef { name: "db".into() }],
        event_categories: vec!["availability".into()],
        ..Default::default()
    };
    let mut s = EventSubscription::new("coffee", spec);
    s.metadata.generation = Some(1);
    let sources = Sources {
        ids: vec!["coffee-db".into()],
        unresolved: None,
    };
    fixtures::facts(s, sources)
}

fn in_rds(status: &str) -> ObservedSubscription {
    ObservedSubscription {
        name: "coffee".into(),
        arn: Some("arn:aws:rds:us-east-1:123456789012:es:coffee".into()),
        topic: TOPIC.into(),
        source_type: "db-instance".into(),
        source_ids: vec!["coffee-db".into()],
        categories: vec!["availability".into()],
        enabled: true,
        status: status.into(),
        tags: owner_tags(),
    }
}

fn existing(f: Facts) -> Facts {
    with(f, |f| f.observed = Some(in_rds("active")))
}

fn steps(p: &Plan) -> Vec<String> {
    (p.steps.iter())
        .map(|s| match s {
            Step::Own(Own::Create(_)) => "Create".to_owned(),
            Step::Own(Own::Modify { .. }) => "Modify".to_owned(),
            Step::Own(Own::AddSource { id, .. }) => format!("Add {id}"),
            Step::Own(Own::RemoveSource { id, .. }) => format!("Remove {id}"),
            other => format!("{other:?}")
                .split([' ', '{', '('])
                .next()
                .unwrap()
                .to_owned(),
        })
        .collect()
}

fn synced(p: &Plan) -> String {
    p.status
        .as_ref()
        .map(|s| s.synced.reason.clone())
        .unwrap_or_default()
}

#[test]
fn rules() {
    let rows: Vec<(&str, Facts, Vec<&str>, &str)> = vec![
        (
            "a source not Ready yet: wait, nothing sent",
            with(facts(), |f| {
                f.extra.unresolved = Some("DBInstance db is not Ready yet".into())
            }),
            vec![],
            "ReferencesUnresolved",
        ),
        (
            "none in RDS: one create with the sources",
            facts(),
            vec!["Create"],
            "Updating",
        ),
        ("in sync: nothing", existing(facts()), vec![], "Synced"),
        (
            "another topic and categories: one modify with both",
            with(existing(facts()), |f| {
                f.object.spec.sns_topic_arn = format!("{TOPIC}-2");
                f.object.spec.event_categories = vec!["backup".into()];
            }),
            vec!["Modify"],
            "Updating",
        ),
        (
            "categories differing only in case: nothing",
            with(existing(facts()), |f| {
                f.object.spec.event_categories = vec!["Availability".into()]
            }),
            vec![],
            "Synced",
        ),
        (
            "disabled in the spec: one modify",
            with(existing(facts()), |f| f.object.spec.enabled = Some(false)),
            vec!["Modify"],
            "Updating",
        ),
        (
            "a source added and one gone from the spec: one add, one remove",
            with(existing(facts()), |f| {
                f.extra.ids = vec!["coffee-db-2".into()];
            }),
            vec!["Add coffee-db-2", "Remove coffee-db"],
            "Updating",
        ),
        (
            "RDS cannot find the topic: reported, nothing sent",
            with(facts(), |f| f.observed = Some(in_rds("topic-not-exist"))),
            vec![],
            "TopicNotFound",
        ),
        (
            "a subscription of the name that is not ours: never changed",
            with(facts(), |f| {
                let mut theirs = in_rds("active");
                theirs.tags = Default::default();
                f.observed = Some(theirs);
            }),
            vec![],
            "NameInUse",
        ),
        (
            "deleted: the group kinds' deletion",
            deleting(existing(facts())),
            vec!["Delete", "RemoveFinalizer"],
            "",
        ),
    ];
    for (name, f, want, reason) in rows {
        let p = plan(&f);
        assert_eq!(steps(&p), want, "{name}");
        if !reason.is_empty() {
            assert_eq!(synced(&p), reason, "{name}");
        }
    }
}

#[test]
fn the_create_carries_the_sources_categories_enabled_and_ownership_tags() {
    let p = plan(&facts());
    let Some(Step::Own(Own::Create(c))) = p.steps.first() else {
        panic!("a create: {:?}", p.steps)
    };
    assert_eq!(c.source_ids, vec!["coffee-db".to_owned()]);
    assert_eq!((c.source_type.as_str(), c.enabled), ("db-instance", true));
    assert_eq!(c.categories, vec!["availability".to_owned()]);
    assert!(c.tags.contains_key(crate::crd::OWNER_TAG));
}
