//! Table tests of the plan: what the spec alone decides: refusals before any call, trust boundaries, password hashes.

use super::*;

#[test]
fn refusals_before_any_call() {
    let cross_namespace = with(facts(), |f| {
        f.db.metadata.finalizers = None;
        f.db.spec
            .password
            .master_user_password
            .as_mut()
            .unwrap()
            .namespace = Some("elsewhere".into());
    });
    let invalid = "masterUserPassword refers to a Secret in namespace \"elsewhere\"; only the DBInstance's own namespace \"shop\" is allowed";
    let no_secret = with(facts(), |f| {
        f.password =
            PasswordFacts::Referenced(Err("Secret shop/coffee-db-password not found".into()));
    });
    let no_secret_message = "Secret shop/coffee-db-password not found";
    check(vec![
        (
            "an invalid spec is refused until it changes, before the finalizer",
            cross_namespace,
            Plan {
                refusal: Some("InvalidSpec"),
                ..plan_of(
                    Requeue::AwaitChange,
                    vec![],
                    failed(None, "InvalidSpec", invalid),
                    vec![event(Warning, "InvalidSpec", "Reconcile", invalid, 0)],
                )
            },
        ),
        (
            "a missing password Secret backs off, nothing is created",
            no_secret,
            Plan {
                refusal: Some("PasswordSecret"),
                ..plan_of(
                    Requeue::Backoff,
                    vec![],
                    failed(None, "PasswordSecretUnavailable", no_secret_message),
                    vec![event(
                        Warning,
                        "PasswordSecretUnavailable",
                        "Reconcile",
                        no_secret_message,
                        0,
                    )],
                )
            },
        ),
    ]);
    assert_eq!(
        Look::None,
        look(&with(facts(), |f| f.db.spec.allocated_storage = None).db)
    );
    // Never reported, or edited since the last report: the shared snapshot if it has the
    // instance now, without waiting for a new leader's first poll; reported at this generation:
    // the shared snapshot, once loaded.
    assert_eq!(look(&facts().db), Look::SharedNow);
    let reported = |generation: i64| {
        with(facts(), move |f| {
            let status = f.db.status.get_or_insert_default();
            status.reported.observed_generation = Some(generation);
        })
        .db
    };
    assert_eq!(look(&reported(1)), Look::Shared);
    assert_eq!(look(&with_generation(reported(1), 2)), Look::SharedNow);
    assert_eq!(
        look(&deleting(DeletionPolicy::Delete, None).db),
        Look::Direct
    );
}

#[test]
fn password_hash_is_salted_and_hides_the_password() {
    let h = spec::password_hash(&key(), UID, "hunter2");
    assert_eq!(h.len(), 64);
    assert!(!h.contains("hunter2"));
    assert_ne!(h, spec::password_hash(&key(), "other-uid", "hunter2"));
}

#[test]
fn trust_boundaries() {
    let wants_secret = |name: &str| {
        let name = name.to_owned();
        move |f: &mut Facts| {
            f.db.spec.connection.connection_secret = Some(ConnectionSecretSpec {
                name: name.clone(),
                extra_keys: BTreeMap::new(),
            });
        }
    };
    // Another DBInstance of the namespace uses coffee-db-password as its password Secret.
    let mut victim = db();
    victim.metadata.name = Some("victim".into());
    victim.metadata.uid = Some("victim-uid".into());
    let takeover = with(synced(), |f| {
        wants_secret("coffee-db-password")(f);
        f.db.spec
            .password
            .master_user_password
            .as_mut()
            .unwrap()
            .name = "mine".into();
        f.peers = vec![victim.clone(), f.db.clone()];
    });
    let takeover_message = "connectionSecret.name \"coffee-db-password\" is the master password Secret of DBInstance victim; choose another name";
    // A Secret of that name exists and is someone else's (no controller reference of ours).
    let not_ours = with(synced(), |f| {
        wants_secret("coffee-db")(f);
        let mut theirs = connection_secret("someone-else", "x");
        theirs.metadata.owner_references = None;
        f.connection_secret = Some(theirs);
    });
    let not_ours_message = "a Secret named coffee-db exists and is not this DBInstance's; the operator does not write to it: \
             choose another connectionSecret.name, or delete that Secret";
    // Owned, but not as controller: not ours to write either.
    let owned_not_controlled = with(not_ours.clone(), |f| {
        let mut s = connection_secret(UID, "x");
        s.metadata.owner_references.as_mut().unwrap()[0].controller = None;
        f.connection_secret = Some(s);
    });
    let generated_not_ours = with(synced(), |f| {
        f.db.spec.password.master_user_password = None;
        f.password = PasswordFacts::Generated {
            existing: None,
            secret_exists: true,
            controlled: false,
            owner_referenced: false,
            candidate: pw("Gen3rated"),
        };
    });
    let generated_message = "a Secret named coffee-master-password exists and is not this DBInstance's; the operator neither uses nor \
             overwrites it: delete or rename it, or set masterUserPassword";
    let refused_password = with(facts(), |f| {
        f.password = PasswordFacts::Referenced(Ok(pw("Sup3r-Secret\n")));
    });
    let newline = "the master password ends with a line break (a Secret made with --from-file from a \
                    file with a trailing newline?); remove it";
    check(vec![
        (
            "a connection Secret that is another DBInstance's password Secret is refused",
            takeover.clone(),
            Plan {
                refusal: Some("InvalidSpec"),
                ..refused(
                    &takeover,
                    Requeue::AwaitChange,
                    "InvalidSpec",
                    takeover_message,
                )
            },
        ),
        (
            "a Secret the DBInstance does not control is never written",
            not_ours.clone(),
            Plan {
                refusal: Some("SecretConflict"),
                ..refused(
                    &not_ours,
                    SETTLED,
                    "ConnectionSecretConflict",
                    not_ours_message,
                )
            },
        ),
        (
            "owned without the controller flag is not controlled",
            owned_not_controlled.clone(),
            Plan {
                refusal: Some("SecretConflict"),
                ..refused(
                    &owned_not_controlled,
                    SETTLED,
                    "ConnectionSecretConflict",
                    not_ours_message,
                )
            },
        ),
        (
            "a generated-password Secret that is not ours is neither used nor overwritten",
            generated_not_ours.clone(),
            Plan {
                refusal: Some("SecretConflict"),
                ..refused(
                    &generated_not_ours,
                    SETTLED,
                    "PasswordSecretConflict",
                    generated_message,
                )
            },
        ),
        (
            "a password RDS would refuse is refused before any call",
            refused_password.clone(),
            Plan {
                refusal: Some("InvalidSpec"),
                ..refused(
                    &refused_password,
                    Requeue::AwaitChange,
                    "InvalidSpec",
                    newline,
                )
            },
        ),
    ]);
}

#[test]
fn the_password_hash_needs_the_operators_key() {
    let h = spec::password_hash(&key(), UID, "Sup3r-Secret");
    assert_eq!(h.len(), 64);
    assert_ne!(
        h,
        spec::legacy_password_hash(UID, "Sup3r-Secret"),
        "not the guessable one"
    );
    assert_ne!(
        h,
        spec::password_hash(&Sensitive::new("other key"), UID, "Sup3r-Secret")
    );
    assert_ne!(h, spec::password_hash(&key(), "other-uid", "Sup3r-Secret"));
    // A status from before the keyed hash, of the same password: replaced, no rotation.
    let legacy = with(synced(), |f| {
        f.db.status
            .as_mut()
            .unwrap()
            .common
            .master_user_password_hash = Some(spec::legacy_password_hash(UID, "Sup3r-Secret"));
    });
    let plan = plan(&legacy);
    assert!(plan.steps.is_empty(), "{:?}", plan.steps);
    assert_eq!(
        plan.status.unwrap().fields.common.master_user_password_hash,
        Some(h)
    );
}

#[test]
fn allocated_storage_may_be_left_to_a_replicas_source_or_a_restores_snapshot() {
    let without = |change: fn(&mut Facts)| {
        let f = with(facts(), |f| {
            f.db.spec.allocated_storage = None;
            change(f)
        });
        spec::validate(&f.db)
    };
    assert_eq!(
        without(|_| {}),
        Err("allocatedStorage is required for engine mysql".into()),
        "a new instance names its storage"
    );
    let restoring = without(|f| {
        f.db.spec.restore_from = Some(crate::dbinstance::RestoreFrom {
            db_snapshot_identifier: Some("coffee-snap".into()),
            ..Default::default()
        })
    });
    assert_eq!(restoring, Ok(()), "a restore takes its snapshot's");
}

fn with_generation(mut db: DBInstance, generation: i64) -> DBInstance {
    db.metadata.generation = Some(generation);
    db
}
