//! Table tests of the plan: adoption, observe-only, ACK annotations, pause and dry run.

use super::*;

#[test]
fn a_paused_dbinstance_makes_no_call_and_says_so() {
    let pause = |f: &mut Facts| {
        f.db.metadata.annotations = Some(
            [(
                crate::dbinstance::PAUSED_ANNOTATION.to_owned(),
                "true".to_owned(),
            )]
            .into(),
        );
    };
    // Drift, a rotation and a deletion all wait.
    let drifted = with(synced(), |f| {
        pause(f);
        let mut o = ours();
        o.db_instance_class = Some("db.t3.large".into());
        f.observed = Some(o);
        f.password = PasswordFacts::Referenced(Ok(pw("Rotated-2026")));
    });
    let deleting = with(deleting(DeletionPolicy::Delete, Some(ours())), pause);
    for f in [&drifted, &deleting] {
        let plan = plan(f);
        assert!(plan.steps.is_empty(), "{:?}", plan.steps);
        assert_eq!(plan.requeue, Requeue::AwaitChange);
        let status = plan.status.unwrap();
        assert_eq!(status.synced.reason, "ReconcilePaused");
        assert_eq!(plan.events.len(), 1);
    }
    assert_eq!(look(&drifted.db), Look::None);
    assert_eq!(look(&deleting.db), Look::None);
    assert_eq!(reads(&drifted.db, None).password, PasswordRead::None);
    // "false" is not paused.
    let not = with(synced(), |f| {
        f.db.metadata.annotations = Some(
            [(
                crate::dbinstance::PAUSED_ANNOTATION.to_owned(),
                "false".to_owned(),
            )]
            .into(),
        );
    });
    assert_eq!(plan(&not).status.unwrap().synced.reason, "Synced");
}

#[test]
fn adoption_rules() {
    use crate::dbinstance::AdoptionPolicy::{Adopt, AdoptOrCreate};
    let after_adoption = with(synced(), |f| {
        f.observed = Some({
            let mut o = stack_instance();
            o.tags.extend(ours().tags);
            o
        });
        let status = f.db.status.as_mut().unwrap();
        status.common.adopted_generation = Some(1);
        status.common.master_user_password_hash = None;
    });
    let confirmed = with(after_adoption.clone(), |f| {
        f.db.metadata.generation = Some(2)
    });
    check_outlines(vec![
        (
            "without the opt-in an untagged instance is refused",
            with(facts(), |f| f.observed = Some(stack_instance())),
            vec![],
            "IdentifierInUse",
        ),
        (
            "Adopt adds the ownership tags and nothing else",
            adopting(Adopt),
            vec!["AddTags"],
            "Adopted",
        ),
        (
            "ACK's adoption-policy annotation says the same",
            annotated(
                with(facts(), |f| {
                    f.observed = Some(stack_instance());
                    f.observed_directly = true;
                }),
                crate::dbinstance::ACK_ADOPTION_POLICY,
                "adopt",
            ),
            vec!["AddTags"],
            "Adopted",
        ),
        (
            "an unknown ACK adoption policy is refused",
            annotated(facts(), crate::dbinstance::ACK_ADOPTION_POLICY, "take"),
            vec![],
            "InvalidSpec",
        ),
        (
            "the annotation contradicting the spec is refused",
            annotated(
                adopting(AdoptOrCreate),
                crate::dbinstance::ACK_ADOPTION_POLICY,
                "adopt",
            ),
            vec![],
            "InvalidSpec",
        ),
        (
            "Adopt with nothing to adopt creates nothing",
            with(adopting(Adopt), |f| f.observed = None),
            vec![],
            "NothingToAdopt",
        ),
        (
            "AdoptOrCreate with nothing to adopt creates",
            with(adopting(AdoptOrCreate), |f| f.observed = None),
            vec!["CreateInstance"],
            "Synced",
        ),
        (
            "a generated password cannot be known: no adoption",
            with(adopting(Adopt), |f| {
                f.db.spec.password.master_user_password = None;
                f.password = no_generated_secret("Gen3rated");
            }),
            vec![],
            "PasswordUnknown",
        ),
        (
            "the password Secret must be there before adopting",
            with(adopting(Adopt), |f| {
                f.password =
                    PasswordFacts::Referenced(Err("Secret coffee-db-password not found".into()))
            }),
            vec![],
            "PasswordSecretUnavailable",
        ),
        (
            "an instance of another namespace's DBInstance is never adopted",
            claimed_by("other/coffee", Some(false)),
            vec![],
            "IdentifierInUse",
        ),
        (
            "an instance of a DBInstance of this namespace that exists is never adopted",
            claimed_by("shop/tea", Some(true)),
            vec![],
            "IdentifierInUse",
        ),
        (
            "nor when whether it exists is unknown",
            claimed_by("shop/tea", None),
            vec![],
            "IdentifierInUse",
        ),
        (
            "one of a DBInstance of this namespace that is gone is adopted when asked",
            claimed_by("shop/tea", Some(false)),
            vec!["AddTags"],
            "Adopted",
        ),
        (
            "a retained instance of this name is adopted again without asking, and unmarked",
            with(facts(), |f| {
                f.observed = Some(retained());
                f.observed_directly = true;
                f.owner_alive = Some(false);
            }),
            vec!["AddTags", "RemoveTags"],
            "Adopted",
        ),
        (
            "an unreleased instance of this name waits for the opt-in",
            with(facts(), |f| {
                let mut o = retained();
                o.tags.remove(crate::dbinstance::RETAINED_TAG);
                f.observed = Some(o);
                f.owner_alive = Some(false);
            }),
            vec![],
            "IdentifierInUse",
        ),
        (
            "differences of an adopted instance are reported, not sent",
            after_adoption,
            vec![],
            "AdoptedWithDifferences",
        ),
        (
            "a crash after create (no adoption tag): what differs is put right, not held",
            facts().rds_shows(|o| o.db_instance_class = Some("db.t3.small".into())),
            vec!["ModifyInstance"],
            "Updating",
        ),
        (
            "a crash between the adopting call and the status write: still held",
            with(facts(), |f| {
                let mut o = stack_instance();
                o.tags.extend(ours().tags);
                o.tags
                    .insert(crate::dbinstance::ADOPTED_TAG.into(), NOW.into());
                f.observed = Some(o);
            }),
            vec![],
            "AdoptedWithDifferences",
        ),
        (
            "once the spec changes they are put right",
            confirmed,
            vec!["ModifyInstance"],
            "Updating",
        ),
    ]);
    // The adoption step carries exactly the ownership tags, and status remembers the generation.
    let p = plan(&adopting(Adopt));
    assert_eq!(
        p.steps,
        vec![Step::AddTags {
            identifier: "coffee".into(),
            arn: ARN.into(),
            tags: [
                (OWNER_TAG.to_owned(), UID.to_owned()),
                (OWNER_NAME_TAG.to_owned(), "shop/coffee".to_owned()),
                (crate::dbinstance::ADOPTED_TAG.to_owned(), NOW.to_owned()),
            ]
            .into(),
        }]
    );
    let status = p.status.unwrap();
    assert_eq!(status.fields.common.adopted_generation, Some(1));
    assert_eq!(
        status.fields.common.master_user_password_hash, None,
        "the password is taken, never sent"
    );
    assert_eq!(p.events[0].reason, "Adopted");
    // The refusal of a retained but unreleased instance says how to take it over.
    let unreleased = with(facts(), |f| {
        let mut o = retained();
        o.tags.remove(crate::dbinstance::RETAINED_TAG);
        f.observed = Some(o);
        f.owner_alive = Some(false);
    });
    let message = plan(&unreleased).status.unwrap().synced.message;
    assert!(
        message.contains("set spec.adoptionPolicy: Adopt"),
        "{message}"
    );
}

#[test]
fn observe_only_rules() {
    use crate::dbinstance::ManagementPolicy::ObserveOnly;
    let observing = |observed: Option<ObservedInstance>| {
        with(synced(), |f| {
            f.db.spec.policies.management_policy = ObserveOnly;
            f.observed = observed;
        })
    };
    let mut tagged_elsewhere = stack_instance();
    tagged_elsewhere
        .tags
        .insert(OWNER_TAG.into(), "theirs".into());
    tagged_elsewhere
        .tags
        .insert(OWNER_NAME_TAG.into(), "other/coffee".into());
    let mut matching = stack_instance();
    matching.db_instance_class = Some("db.t3.micro".into());
    let with_secret = with(observing(Some(matching.clone())), |f| {
        f.db.spec.connection.connection_secret = Some(ConnectionSecretSpec {
            name: "coffee-db".into(),
            extra_keys: BTreeMap::new(),
        });
    });
    let rotated = with(observing(Some(matching)), |f| {
        f.password = PasswordFacts::Referenced(Ok(pw("N3w-Secret")));
    });
    check_outlines(vec![
        (
            "an absent instance is never created",
            observing(None),
            vec![],
            "NotFound",
        ),
        (
            "differences are reported, never sent, tags included",
            observing(Some(stack_instance())),
            vec![],
            "Observed",
        ),
        (
            "another namespace's instance is not observed",
            observing(Some(tagged_elsewhere)),
            vec![],
            "IdentifierInUse",
        ),
        (
            "the connection Secret is written from the referenced password",
            with_secret,
            vec!["WriteConnectionSecret"],
            "Synced",
        ),
        (
            "a changed password is never sent",
            rotated,
            vec![],
            "Synced",
        ),
        (
            "deleting it never deletes the instance, even our own",
            with(deleting(DeletionPolicy::Delete, Some(ours())), |f| {
                f.db.spec.policies.management_policy = ObserveOnly
            }),
            vec!["RemoveFinalizer"],
            "",
        ),
    ]);
}

#[test]
fn ack_deletion_policy_annotation() {
    let retain = annotated(
        deleting(DeletionPolicy::Snapshot, Some(ours())),
        crate::dbinstance::ACK_DELETION_POLICY,
        "retain",
    );
    let delete = annotated(
        deleting(DeletionPolicy::Snapshot, Some(ours())),
        crate::dbinstance::ACK_DELETION_POLICY,
        "delete",
    );
    check_outlines(vec![
        (
            "retain keeps the instance whatever the spec says",
            retain,
            vec!["AddTags", "OrphanSecret", "RemoveFinalizer"],
            "",
        ),
        (
            "delete deletes, after the final snapshot the spec asks for",
            delete.clone(),
            vec!["DeleteInstance"],
            "",
        ),
        (
            "an unknown value is refused",
            annotated(facts(), crate::dbinstance::ACK_DELETION_POLICY, "keep"),
            vec![],
            "InvalidSpec",
        ),
        (
            "delete contradicting spec Retain is refused",
            annotated(
                with(facts(), |f| {
                    f.db.spec.deletion.deletion_policy = DeletionPolicy::Retain
                }),
                crate::dbinstance::ACK_DELETION_POLICY,
                "delete",
            ),
            vec![],
            "InvalidSpec",
        ),
    ]);
    assert!(
        matches!(&plan(&delete).steps[0], Step::Own(InstanceStep::DeleteInstance { final_snapshot: Some(s), .. }) if s == FINAL)
    );
}

#[test]
fn dry_run_rules() {
    let dry = |f: Facts| annotated(f, crate::dbinstance::DRY_RUN_ANNOTATION, "true");
    let class_change = dry(synced().edited(|spec| spec.db_instance_class = "db.t3.large".into()));
    let p = plan(&class_change);
    assert!(p.steps.is_empty(), "no step is carried out: {:?}", p.steps);
    let status = p.status.clone().unwrap();
    assert!(
        status.held,
        "observedGeneration stays, so the edit is still one once acted on"
    );
    assert_eq!(status.synced.reason, "DryRun");
    let steps = status.fields.common.dry_run.clone().unwrap().steps;
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].action, "ModifyDBInstance");
    assert_eq!(steps[0].disruption, "Outage");
    assert_eq!(
        steps[0].fields,
        vec![FieldDrift {
            field: "dbInstanceClass".into(),
            observed: "db.t3.micro".into(),
            desired: "db.t3.large".into()
        }]
    );
    assert_eq!(
        p.events
            .iter()
            .map(|e| e.reason.as_str())
            .collect::<Vec<_>>(),
        vec!["DryRun"]
    );
    // The same plan again publishes no Event.
    let again = with(class_change.clone(), |f| {
        f.db.status = Some(status.fields.clone())
    });
    assert!(plan(&again).events.is_empty());
    // On a Multi-AZ instance the class change is a failover; a parameter group waits for a reboot.
    let multi_az = with(class_change.clone(), |f| {
        f.observed.as_mut().unwrap().multi_az = Some(true);
        f.db.spec.multi_az = Some(true);
    });
    let fields = plan(&multi_az).status.unwrap().fields;
    let steps = fields.common.dry_run.unwrap().steps;
    assert_eq!(steps[0].disruption, "Failover");
    let group = dry(with(synced(), |f| {
        f.db.spec.db_parameter_group_name = Some("coffee-params".into())
    }));
    let fields = plan(&group).status.unwrap().fields;
    let steps = fields.common.dry_run.unwrap().steps;
    assert_eq!(steps[0].disruption, "Reboot");
    // A new DBInstance in dry run creates nothing; only the finalizer is added.
    let new = dry(with(facts(), |f| f.db.metadata.finalizers = None));
    let p = plan(&new);
    assert_eq!(p.steps, vec![Step::AddFinalizer]);
    let steps = p.status.unwrap().fields.common.dry_run.unwrap().steps;
    assert_eq!(
        (steps[0].action.as_str(), steps[0].disruption.as_str()),
        ("CreateDBInstance", "NewInstance")
    );
    // Deletion in dry run deletes nothing and keeps the DBInstance.
    let p = plan(&dry(deleting(DeletionPolicy::Delete, Some(ours()))));
    assert!(p.steps.is_empty());
    let steps = p.status.unwrap().fields.common.dry_run.unwrap().steps;
    assert_eq!(
        (steps[0].action.as_str(), steps[0].disruption.as_str()),
        ("DeleteDBInstance", "Deletion")
    );
    // An adoption in dry run shows the tags it adds and the differences it would put right later.
    let p = plan(&dry(adopting(crate::dbinstance::AdoptionPolicy::Adopt)));
    assert!(p.steps.is_empty());
    let steps = p.status.unwrap().fields.common.dry_run.unwrap().steps;
    assert_eq!(
        steps.iter().map(|s| s.action.as_str()).collect::<Vec<_>>(),
        vec!["AddTagsToResource", "ModifyDBInstance"]
    );
    assert_eq!(steps[1].fields[0].field, "dbInstanceClass");
    assert_eq!(steps[1].disruption, "Outage");
    // In sync: nothing to do, the usual report with an empty dry run.
    let p = plan(&dry(synced()));
    assert_eq!(p.status.unwrap().synced.reason, "Synced");
}

#[test]
fn a_pause_keeps_the_observed_generation() {
    let paused = annotated(
        with(synced(), |f| f.db.metadata.generation = Some(2)),
        crate::dbinstance::PAUSED_ANNOTATION,
        "true",
    );
    assert!(plan(&paused).status.unwrap().held);
}

#[test]
fn disruption_follows_rds_downtime_notes() {
    use super::dry_run::{Disruption, disruption_of};
    use crate::dbinstance::drift::Diff;
    let d = |field: &'static str, observed: &str, desired: &str| Diff {
        field,
        observed: observed.into(),
        desired: desired.into(),
    };
    let table = [
        (
            d("dbInstanceClass", "db.t3.micro", "db.t3.large"),
            false,
            Disruption::Outage,
        ),
        (
            d("dbInstanceClass", "db.t3.micro", "db.t3.large"),
            true,
            Disruption::Failover,
        ),
        (
            d("engineVersion", "8.0.41", "8.0.42"),
            false,
            Disruption::Outage,
        ),
        (d("allocatedStorage", "20", "30"), false, Disruption::None),
        (
            d("backupRetentionPeriod", "0", "7"),
            false,
            Disruption::Outage,
        ),
        (
            d("backupRetentionPeriod", "7", "0"),
            false,
            Disruption::Outage,
        ),
        (
            d("backupRetentionPeriod", "1", "7"),
            false,
            Disruption::None,
        ),
        (
            d("storageType", "standard", "gp3"),
            false,
            Disruption::Outage,
        ),
        (d("storageType", "gp2", "gp3"), false, Disruption::None),
        (
            d("dbParameterGroupName", "default.mysql8.0", "coffee"),
            false,
            Disruption::Reboot,
        ),
        (d("multiAZ", "false", "true"), false, Disruption::None),
        (d("port", "3306", "3307"), false, Disruption::Outage),
        (
            d("deletionProtection", "false", "true"),
            false,
            Disruption::None,
        ),
    ];
    for (diff, multi_az, expected) in table {
        assert_eq!(
            disruption_of(&diff, multi_az),
            expected,
            "{diff:?} multiAZ {multi_az}"
        );
    }
}
