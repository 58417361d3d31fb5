//! Table tests of the plan: deletion policies and their defaults.

use super::*;

/// The plan that deletes the instance coffee (after `final_snapshot`, keeping the automated
/// backups), with its Event.
fn deleted(final_snapshot: Option<&str>, note: &str) -> Plan {
    let step = Step::Own(InstanceStep::DeleteInstance {
        identifier: "coffee".into(),
        final_snapshot: final_snapshot.map(str::to_owned),
        delete_automated_backups: false,
    });
    let events = vec![event(Normal, "Deleting", "Delete", note, 1)];
    plan_of(BUSY, vec![step], None, events)
}

#[test]
fn deletion_policies() {
    let protected = {
        let mut o = ours();
        o.deletion_protection = Some(true);
        o
    };
    let protected_message = "RDS instance coffee has deletion protection on; set spec.deletionProtection to false \
                 (or turn it off in AWS) to let the deletion proceed";
    let theirs = {
        let mut o = ours();
        o.tags.insert(OWNER_TAG.into(), "another-uid".into());
        o
    };
    let in_progress = {
        let mut o = ours();
        o.status = "deleting".into();
        o
    };
    let waiting = deleting(DeletionPolicy::Delete, Some(in_progress.clone()));
    let mut waiting_fields = observed_status("coffee", &in_progress);
    waiting_fields.common.master_user_password_hash =
        Some(spec::password_hash(&key(), UID, "Sup3r-Secret"));
    // Changed openly in issue 77: the Secret that carries the DBInstance's ownerReference is left
    // to the garbage collector (was a DeleteSecret step): no step but the finalizer's.
    let released = |reason: &str, note: &str| Plan {
        ext: InstanceReport {
            gauge: Gauge::Remove,
            ..Default::default()
        },
        ..plan_of(
            Requeue::AwaitChange,
            vec![Step::RemoveFinalizer],
            None,
            vec![event(Normal, reason, "Delete", note, 0)],
        )
    };
    let let_go = with(deleting(DeletionPolicy::Delete, None), |f| {
        f.db.metadata.finalizers = None
    });
    let protected_facts = deleting(DeletionPolicy::Snapshot, Some(protected));
    check(vec![
        (
            "Delete deletes without a final snapshot",
            deleting(DeletionPolicy::Delete, Some(ours())),
            deleted(None, "deleting RDS instance coffee"),
        ),
        (
            "Snapshot deletes after a final snapshot named after the uid",
            deleting(DeletionPolicy::Snapshot, Some(ours())),
            deleted(
                Some(FINAL),
                &format!("deleting RDS instance coffee after final snapshot {FINAL}"),
            ),
        ),
        (
            "Retain keeps the instance, marked as let go, and our Secrets, without owner",
            deleting(DeletionPolicy::Retain, Some(ours())),
            Plan {
                ext: InstanceReport {
                    gauge: Gauge::Remove,
                    ..Default::default()
                },
                ..plan_of(
                    Requeue::AwaitChange,
                    vec![
                        Step::AddTags {
                            identifier: "coffee".into(),
                            arn: ARN.into(),
                            tags: [(crate::dbinstance::RETAINED_TAG.to_owned(), NOW.to_owned())]
                                .into(),
                        },
                        Step::OrphanSecret {
                            name: "coffee-db".into(),
                        },
                        Step::RemoveFinalizer,
                    ],
                    None,
                    vec![event(
                        Normal,
                        "Retained",
                        "Delete",
                        "deletionPolicy is Retain: RDS instance coffee is left running",
                        2,
                    )],
                )
            },
        ),
        (
            "a gone instance lets the DBInstance go, with our Secrets",
            deleting(DeletionPolicy::Delete, None),
            released("Deleted", "RDS instance coffee is gone"),
        ),
        (
            "a foreign instance is left alone",
            deleting(DeletionPolicy::Delete, Some(theirs)),
            released(
                "Released",
                "RDS instance coffee is not managed by this DBInstance and was left alone",
            ),
        ),
        (
            "RDS deleting: wait",
            waiting,
            plan_of(
                BUSY,
                vec![],
                observed(
                    waiting_fields,
                    true,
                    "Deleting",
                    "RDS instance coffee is being deleted",
                ),
                vec![],
            ),
        ),
        (
            "deletion protection holds the deletion, reported once",
            protected_facts.clone(),
            plan_of(
                SETTLED,
                vec![],
                failed(
                    protected_facts.db.status.as_ref(),
                    "DeletionProtected",
                    protected_message,
                ),
                vec![event(
                    Warning,
                    "DeletionProtected",
                    "Reconcile",
                    protected_message,
                    0,
                )],
            ),
        ),
        (
            "without our finalizer there is nothing left to do",
            let_go,
            Plan::new(Requeue::AwaitChange),
        ),
    ]);
}

#[test]
fn deletion_defaults_keep_a_snapshot_and_the_backups() {
    let default_policy = with(deleting(DeletionPolicy::default(), Some(ours())), |_| {});
    let named = with(deleting(DeletionPolicy::Snapshot, Some(ours())), |f| {
        f.db.spec.deletion.final_db_snapshot_identifier = Some("coffee-before-migration".into());
        f.db.spec.delete_automated_backups = Some(true);
    });
    let cached = with(deleting(DeletionPolicy::Delete, Some(ours())), |f| {
        f.observed_directly = false;
    });
    let delete = |snapshot: &str, backups: bool| {
        Step::Own(InstanceStep::DeleteInstance {
            identifier: "coffee".into(),
            final_snapshot: Some(snapshot.into()),
            delete_automated_backups: backups,
        })
    };
    assert_eq!(plan(&default_policy).steps, vec![delete(FINAL, false)]);
    assert_eq!(
        plan(&named).steps,
        vec![delete("coffee-before-migration", true)]
    );
    assert_eq!(
        plan(&cached),
        Plan::new(BUSY),
        "never delete on the shared poll's knowledge"
    );
}

/// The operator deletes no Secret (issue 77: it holds no delete on Secrets). Released, one that
/// carries the DBInstance's ownerReference is left to the garbage collector; one marked ours by
/// annotation alone is given the ownerReference first; retained, each loses it.
#[test]
fn released_secrets_go_by_the_garbage_collector_never_by_a_delete() {
    let annotated = |f: &mut Facts| {
        f.release_candidates[0].metadata.owner_references = None;
        f.release_candidates[0].metadata.annotations = Some(
            [(
                crate::crd::SECRET_OWNER_ANNOTATION.to_owned(),
                UID.to_owned(),
            )]
            .into(),
        );
    };
    let steps = |f: &Facts| -> Vec<&'static str> { plan(f).steps.iter().map(Step::name).collect() };
    let gone = deleting(DeletionPolicy::Delete, None);
    assert_eq!(steps(&gone), ["RemoveFinalizer"]);
    let p = plan(&with(gone, annotated));
    assert_eq!(
        p.steps[0],
        Step::Secret(SecretStep::SetOwner {
            name: "coffee-db".into(),
            owner_reference: true,
        })
    );
    assert_eq!(p.steps.len(), 2);
    let kept = with(deleting(DeletionPolicy::Retain, Some(ours())), annotated);
    assert_eq!(steps(&kept), ["AddTags", "OrphanSecret", "RemoveFinalizer"]);
}
