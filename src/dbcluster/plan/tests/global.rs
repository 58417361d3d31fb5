//! A secondary cluster of a global database, and a member's detachment: a row each.

use super::*;
use crate::dbcluster::plan::global::GLOBAL_PASSWORD;
use crate::globalcluster::GlobalMember;

fn resolved() -> Global {
    Global {
        identifier: "coffee-global".into(),
        endpoint: Some("coffee-global.global-x.global.rds.amazonaws.com".into()),
        primary_region: Some("us-east-1".into()),
        master_username: Some("admin".into()),
        database_name: Some("COFFEE".into()),
    }
}

/// A DBCluster of eu-west-1 naming the GlobalCluster, none observed yet: the password read is the
/// primary's Secret.
fn secondary() -> Facts {
    with(facts(), |f| {
        let spec = &mut f.cluster.spec;
        spec.global_cluster_ref = Some(crate::crd::LocalRef {
            name: "coffee-global".into(),
        });
        spec.master_username = None;
        spec.database_name = None;
        f.global = Some(Ok(resolved()));
        f.password = PasswordFacts::Referenced(Ok(Sensitive::new("the-primary-password")));
        f.placement.region = "eu-west-1".into();
    })
}

/// The secondary, made, available in the global database.
fn made() -> Facts {
    with(secondary(), |f| {
        f.cluster.status = Some(DBClusterStatus {
            common: DatabaseStatus {
                arn: ours().arn,
                owned: Some(true),
                master_user_password_hash: Some(GLOBAL_PASSWORD.into()),
                ..Default::default()
            },
            secondary_of: Some("coffee-global".into()),
            reported: crate::crd::Reported {
                observed_generation: Some(1),
                ..Default::default()
            },
            ..Default::default()
        });
        f.observed = Some(ObservedCluster {
            global_cluster: Some("coffee-global".into()),
            master_username: None,
            database_name: None,
            ..ours()
        });
        f.observed_directly = false;
    })
}

fn member(identifier: &str, role: &str) -> GlobalMember {
    GlobalMember {
        db_cluster_identifier: identifier.into(),
        region: "us-east-1".into(),
        role: role.into(),
        ..Default::default()
    }
}

#[test]
fn a_secondary_is_created_in_its_global_database_with_no_master_user_password_or_database() {
    let p = plan(&secondary());
    let Some(Step::Own(ClusterStep::Create {
        spec,
        password,
        global,
        ..
    })) = p.steps.first()
    else {
        panic!("expected CreateDBCluster, got {:?}", p.steps);
    };
    assert_eq!(global.as_deref(), Some("coffee-global"));
    assert!(password.is_none(), "a secondary sends no password");
    assert!(spec.master_username.is_none() && spec.database_name.is_none());
    // No password Secret is generated for it: its password is the primary's.
    assert_eq!(names(&p), ["Create"]);
    let note = &p.events[0].note;
    assert!(
        note.contains("no master user, password or database name is sent"),
        "{note}"
    );
    let fields = &p.status.as_ref().unwrap().fields;
    assert_eq!(fields.secondary_of.as_deref(), Some("coffee-global"));
    assert_eq!(
        fields.common.master_user_password_hash.as_deref(),
        Some(GLOBAL_PASSWORD)
    );
}

#[test]
fn a_secondary_waits_for_its_global_cluster_and_is_never_made_in_the_primarys_region() {
    let cases: [(&str, Facts, &str); 3] = [
        (
            "the GlobalCluster is not Ready",
            with(secondary(), |f| {
                f.global = Some(Err("GlobalCluster coffee-global is not Ready yet".into()))
            }),
            "ReferencesUnresolved",
        ),
        (
            "the primary is in this region",
            with(secondary(), |f| f.placement.region = "us-east-1".into()),
            "SameRegionAsPrimary",
        ),
        (
            "gone outside the operator: made again as a secondary, never from a snapshot",
            with(made(), |f| {
                f.observed = None;
                f.observed_directly = true;
                f.absent_for = Some(Duration::from_secs(30));
                f.identity = Some(AwsIdentity {
                    account: "123456789012".into(),
                    region: "us-east-1".into(),
                    caller_arn: String::new(),
                });
                f.snapshots = vec![snapshot("own", 9, UID)];
            }),
            "Synced",
        ),
    ];
    for (case, f, reason) in cases {
        let p = plan(&f);
        assert_eq!(synced_reason(&p), reason, "{case}");
        let created = (p.steps.iter()).find_map(|s| match s {
            Step::Own(ClusterStep::Create {
                global, password, ..
            }) => Some((global.clone(), password.is_none())),
            _ => None,
        });
        let expected = (reason == "Synced").then(|| (Some("coffee-global".to_owned()), true));
        assert_eq!(created, expected, "{case}: {:?}", names(&p));
        assert!(!names(&p).contains(&"Restore"), "{case}");
    }
}

#[test]
fn a_secondary_never_rotates_the_primarys_password_and_its_secret_names_the_global_writer() {
    let f = with(made(), |f| {
        f.cluster.spec.connection.connection_secret = Some(ConnectionSecretSpec {
            name: "coffee-eu-db".into(),
            extra_keys: Default::default(),
        });
    });
    let p = plan(&f);
    assert_eq!(names(&p), ["WriteConnectionSecret"]);
    let Some(Step::Secret(SecretStep::WriteConnection { data, .. })) = p.steps.first() else {
        unreachable!()
    };
    let value = |k: &str| data.get(k).map(|v| v.expose().to_owned());
    assert_eq!(value("host"), resolved().endpoint);
    assert_eq!(value("readerHost"), ours().reader_endpoint);
    assert_eq!(value("username").as_deref(), Some("admin"));
    assert_eq!(value("password").as_deref(), Some("the-primary-password"));
    assert_eq!(value("dbname").as_deref(), Some("COFFEE"));
    let fields = &p.status.as_ref().unwrap().fields;
    assert_eq!(
        fields.common.master_user_password_hash.as_deref(),
        Some(GLOBAL_PASSWORD)
    );
}

#[test]
fn removing_the_reference_detaches_a_secondary_once_and_never_a_primary() {
    let removed = with(made(), |f| {
        f.cluster.spec.global_cluster_ref = None;
        f.global = None;
        f.cluster.metadata.generation = Some(2);
    });
    let cases: [(&str, Facts, Vec<&str>); 4] = [
        ("reference removed", removed.clone(), vec!["Detach"]),
        (
            "reference removed, RDS busy with it",
            with(removed.clone(), |f| {
                f.observed.as_mut().unwrap().status = "modifying".into()
            }),
            vec![],
        ),
        (
            "a primary made by its GlobalCluster (never a secondary here)",
            with(removed.clone(), |f| {
                let hash = instance_spec::password_hash(&f.hash_key, UID, "the-primary-password");
                let status = f.cluster.status.as_mut().unwrap();
                status.secondary_of = None;
                status.common.master_user_password_hash = Some(hash);
            }),
            vec![],
        ),
        (
            "detached: the spec's own password is sent once",
            with(removed, |f| {
                f.observed.as_mut().unwrap().global_cluster = None;
                f.password = PasswordFacts::Generated {
                    existing: Some(Sensitive::new("own-password")),
                    secret_exists: true,
                    controlled: true,
                    owner_referenced: true,
                    candidate: Sensitive::new("unused"),
                };
            }),
            vec!["Modify"],
        ),
    ];
    for (case, f, steps) in cases {
        let p = plan(&f);
        assert_eq!(names(&p), steps, "{case}");
        if let Some(Step::Own(ClusterStep::Detach { global, arn, .. })) = p.steps.first() {
            assert_eq!(global, "coffee-global");
            assert_eq!(Some(arn.clone()), ours().arn);
        }
        if let Some(Step::Modify { password, .. }) = p.steps.first() {
            assert_eq!(password.as_ref().map(|p| p.expose()), Some("own-password"));
            let fields = &p.status.as_ref().unwrap().fields;
            assert_eq!(fields.secondary_of, None, "{case}");
        }
    }
}

#[test]
fn a_member_is_detached_before_its_deletion_and_a_primary_with_secondaries_waits() {
    let member_of = |members: Option<Vec<GlobalMember>>| {
        deleting(with(made(), |f| {
            f.global = None;
            f.global_members = members;
        }))
    };
    let cases: [(&str, Facts, Vec<&str>, &str); 4] = [
        (
            "a secondary",
            member_of(Some(vec![
                member("coffee-us", "writer"),
                member("coffee", "reader"),
            ])),
            vec!["Detach"],
            "Deleting",
        ),
        (
            "the primary, with a secondary left",
            member_of(Some(vec![
                member("coffee", "writer"),
                member("coffee-eu", "reader"),
            ])),
            vec![],
            "InUse",
        ),
        (
            "the primary, the last member",
            member_of(Some(vec![member("coffee", "writer")])),
            vec!["Detach"],
            "Deleting",
        ),
        (
            "detached: deleted",
            with(member_of(None), |f| {
                f.observed.as_mut().unwrap().global_cluster = None
            }),
            vec!["Delete"],
            "Deleting",
        ),
    ];
    for (case, f, steps, reason) in cases {
        let p = plan(&f);
        assert_eq!(names(&p), steps, "{case}");
        assert_eq!(synced_reason(&p), reason, "{case}");
    }
}

#[test]
fn every_member_s_secret_writes_through_the_global_writer_endpoint_which_follows_the_primary() {
    let global = "coffee-global.global-x.global.rds.amazonaws.com";
    let cases: [(&str, Facts, &str); 3] = [
        (
            "a standalone cluster: its own writer",
            synced(),
            "coffee.cluster-x",
        ),
        (
            "the primary of a global database",
            with(synced(), |f| {
                f.observed.as_mut().unwrap().global_cluster = Some("coffee-global".into());
                f.global_endpoint = Some(global.into());
            }),
            global,
        ),
        (
            "a secondary",
            with(made(), |f| f.global_endpoint = Some(global.into())),
            global,
        ),
    ];
    for (case, f, host) in cases {
        let f = with(f, |f| {
            f.cluster.spec.connection.connection_secret = Some(ConnectionSecretSpec {
                name: "coffee-db".into(),
                extra_keys: Default::default(),
            });
        });
        let p = plan(&f);
        let written = (p.steps.iter()).find_map(|s| match s {
            Step::Secret(SecretStep::WriteConnection { data, .. }) => {
                data.get("host").map(|v| v.expose().to_owned())
            }
            _ => None,
        });
        let written = written.unwrap_or_else(|| panic!("{case}: no Secret in {:?}", names(&p)));
        assert!(written.starts_with(host), "{case}: {written}");
    }
}
