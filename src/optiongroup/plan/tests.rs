//! The OptionGroup plan's rules, one row each.

use std::collections::BTreeMap;

use super::*;
use crate::managed::named::fixtures::{self, deleting, owner_tags, with};
use crate::optiongroup::OptionGroupSpec;

fn audit(events: &str) -> OptionSpec {
    OptionSpec {
        name: "MARIADB_AUDIT_PLUGIN".into(),
        settings: [("SERVER_AUDIT_EVENTS".to_owned(), events.to_owned())].into(),
        ..Default::default()
    }
}

fn facts() -> Facts {
    let spec = OptionGroupSpec {
        engine_name: "mysql".into(),
        major_engine_version: "8.0".into(),
        description: "Coffee Manage audit".into(),
        options: vec![audit("CONNECT,QUERY")],
        apply_immediately: true,
        ..Default::default()
    };
    fixtures::facts(OptionGroup::new("coffee", spec), ())
}

/// RDS's group, ours, with these options (name, SERVER_AUDIT_EVENTS) and RDS's default of another
/// setting beside it.
fn ours(options: &[(&str, &str)]) -> ObservedOptionGroup {
    let options = (options.iter())
        .map(|(name, events)| {
            let settings = [
                ("SERVER_AUDIT_EVENTS".to_owned(), events.to_string()),
                ("SERVER_AUDIT_QUERY_LOG_LIMIT".to_owned(), "1024".to_owned()),
            ];
            let o = ObservedOption {
                settings: settings.into(),
                ..Default::default()
            };
            (name.to_string(), o)
        })
        .collect();
    ObservedOptionGroup {
        name: "coffee".into(),
        arn: Some("arn:aws:rds:us-east-1:123456789012:og:coffee".into()),
        engine_name: "mysql".into(),
        major_engine_version: "8.0".into(),
        options,
        tags: owner_tags(),
    }
}

fn applied(names: &[&str]) -> Option<OptionGroupStatus> {
    Some(OptionGroupStatus {
        applied_options: names.iter().map(|n| n.to_string()).collect(),
        ..Default::default()
    })
}

/// The steps' names (a Modify with what it includes and removes) and the Synced reason.
fn outcome(p: &Plan) -> (Vec<String>, String) {
    let names = (p.steps.iter())
        .map(|s| match s {
            Step::AddFinalizer => "AddFinalizer".to_owned(),
            Step::Own(Own::Create { .. }) => "Create".to_owned(),
            Step::Own(Own::Modify {
                include, remove, ..
            }) => {
                let names: Vec<&str> = include.iter().map(|o| o.name.as_str()).collect();
                format!("Modify +{} -{}", names.join(","), remove.join(","))
            }
            Step::AddTags { .. } => "AddTags".to_owned(),
            Step::RemoveTags { .. } => "RemoveTags".to_owned(),
            Step::Delete { .. } => "Delete".to_owned(),
            Step::RemoveFinalizer => "RemoveFinalizer".to_owned(),
        })
        .collect();
    let reason = (p.status.as_ref()).map(|s| s.synced.reason.clone());
    (names, reason.unwrap_or_default())
}

#[test]
fn rules() {
    const AUDIT: &str = "MARIADB_AUDIT_PLUGIN";
    let table: Vec<(&str, Facts, Vec<&str>, &str)> = vec![
        (
            "absent: created, then its options included",
            facts(),
            vec!["Create", "Modify +MARIADB_AUDIT_PLUGIN -"],
            "Updating",
        ),
        (
            "in sync: nothing sent (a setting the spec leaves out keeps RDS's value)",
            with(facts(), |f| {
                f.observed = Some(ours(&[(AUDIT, "CONNECT,QUERY")]))
            }),
            vec![],
            "Synced",
        ),
        (
            "a setting changed outside the operator: the option is included again",
            with(facts(), |f| f.observed = Some(ours(&[(AUDIT, "CONNECT")]))),
            vec!["Modify +MARIADB_AUDIT_PLUGIN -"],
            "Updating",
        ),
        (
            "an option that left the spec is removed",
            with(facts(), |f| {
                f.object.spec.options.clear();
                f.object.status = applied(&[AUDIT]);
                f.observed = Some(ours(&[(AUDIT, "CONNECT,QUERY")]));
            }),
            vec!["Modify + -MARIADB_AUDIT_PLUGIN"],
            "Updating",
        ),
        (
            "an option someone else added, never set by the operator, is left",
            with(facts(), |f| {
                f.object.status = applied(&[AUDIT]);
                f.observed = Some(ours(&[(AUDIT, "CONNECT,QUERY"), ("MEMCACHED", "")]));
            }),
            vec![],
            "Synced",
        ),
        (
            "one removed already is not removed again",
            with(facts(), |f| {
                f.object.spec.options.clear();
                f.object.status = applied(&[AUDIT]);
                f.observed = Some(ours(&[]));
            }),
            vec![],
            "Synced",
        ),
        (
            "a port the spec names differs: included",
            with(facts(), |f| {
                f.object.spec.options[0].port = Some(11211);
                f.observed = Some(ours(&[(AUDIT, "CONNECT,QUERY")]));
            }),
            vec!["Modify +MARIADB_AUDIT_PLUGIN -"],
            "Updating",
        ),
        (
            "security groups compare as sets",
            with(facts(), |f| {
                f.object.spec.options[0].vpc_security_group_ids =
                    vec!["sg-2".into(), "sg-1".into()];
                let mut o = ours(&[(AUDIT, "CONNECT,QUERY")]);
                (o.options.get_mut(AUDIT).unwrap()).vpc_security_group_ids =
                    vec!["sg-1".into(), "sg-2".into()];
                f.observed = Some(o);
            }),
            vec![],
            "Synced",
        ),
        (
            "someone else's group of that name is never touched",
            with(facts(), |f| {
                let mut o = ours(&[]);
                o.tags.clear();
                f.observed = Some(o);
            }),
            vec![],
            "NameInUse",
        ),
        (
            "deleting while a DBInstance refers to it waits, no call",
            deleting(with(facts(), |f| {
                f.observed = Some(ours(&[]));
                f.referrers = vec!["DBInstance db".into()];
            })),
            vec![],
            "InUse",
        ),
        (
            "deleting ours once nothing refers to it deletes it",
            deleting(with(facts(), |f| f.observed = Some(ours(&[])))),
            vec!["Delete", "RemoveFinalizer"],
            "",
        ),
        (
            "deleting someone else's lets go without a call",
            deleting(with(facts(), |f| {
                let mut o = ours(&[]);
                o.tags = BTreeMap::new();
                f.observed = Some(o);
            })),
            vec!["RemoveFinalizer"],
            "",
        ),
    ];
    for (name, facts, steps, reason) in table {
        let (got, got_reason) = outcome(&plan(&facts));
        assert_eq!(got, steps, "{name}");
        assert_eq!(got_reason, reason, "{name}");
    }
}

#[test]
fn the_modify_carries_the_spec_option_whole_and_the_apply_policy() {
    let f = with(facts(), |f| {
        f.object.spec.apply_immediately = false;
        f.observed = Some(ours(&[]));
    });
    let p = plan(&f);
    let Some(Step::Own(Own::Modify {
        include,
        apply_immediately,
        ..
    })) = p.steps.first()
    else {
        panic!("{:?}", p.steps)
    };
    assert_eq!(include, &vec![audit("CONNECT,QUERY")]);
    assert!(!apply_immediately);
    let status = p.status.expect("status");
    assert!(status.ready.ok, "the group exists: Ready while it updates");
    assert_eq!(status.fields.applied_options, vec!["MARIADB_AUDIT_PLUGIN"]);
}
