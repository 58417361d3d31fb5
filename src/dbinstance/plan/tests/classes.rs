//! The class a create asks for, checked against what RDS offers (plan/create.rs).

use super::*;

/// A create is checked against whether RDS offers the class for the engine (and version) in the
/// location (DescribeOrderableDBInstanceOptions): a class it does not offer is InvalidSpec naming
/// the field, with no CreateDBInstance and no retry until the spec changes; not known (RDS lists
/// nothing for the engine, the read failed) or not read leaves it to CreateDBInstance.
#[test]
fn a_class_rds_does_not_offer_is_refused_before_any_create() {
    let offered = |answer: Option<bool>| {
        with(facts(), |f| {
            f.db.spec.db_instance_class = "db.t3.nonexistent".into();
            f.class_offered = answer;
        })
    };
    let cases = vec![
        (
            "offered",
            offered(Some(true)),
            vec!["CreateInstance"],
            "Synced",
        ),
        ("not offered", offered(Some(false)), vec![], "InvalidSpec"),
        ("not known", offered(None), vec!["CreateInstance"], "Synced"),
    ];
    for (row, f, steps, reason) in cases {
        let p = plan(&f);
        let names: Vec<&str> = p.steps.iter().map(Step::name).collect();
        assert_eq!(names, steps, "{row}");
        let synced = &p.status.as_ref().unwrap().synced;
        assert_eq!(synced.reason, reason, "{row}: {}", synced.message);
        if reason == "InvalidSpec" {
            assert!(
                synced
                    .message
                    .contains("dbInstanceClass db.t3.nonexistent is not offered for mysql"),
                "{}",
                synced.message
            );
            assert_eq!(
                p.requeue,
                Requeue::AwaitChange,
                "{row}: not tried again until the spec changes"
            );
        }
    }
}

/// What is asked: only where a create may be planned; the spec's version only for a plain create
/// and only a full one (a restore or a replica takes its source's; a major version or none is
/// RDS's to resolve, so the engine alone is asked about).
#[test]
fn the_class_is_asked_about_with_the_version_only_a_plain_create_uses() {
    let version = |engine: &str, v: Option<&str>, change: fn(&mut DBInstance)| {
        let mut db = facts().db;
        db.spec.engine = engine.into();
        db.spec.engine_version = v.map(str::to_owned);
        change(&mut db);
        class_read(&db, None).map(|c| c.version)
    };
    let none: fn(&mut DBInstance) = |_| {};
    let restore: fn(&mut DBInstance) = |db| {
        db.spec.restore_from = Some(crate::dbinstance::RestoreFrom {
            db_snapshot_identifier: Some("snap".into()),
            ..Default::default()
        })
    };
    let replica: fn(&mut DBInstance) = |db| {
        db.spec.replica_of = Some(crate::dbinstance::ReplicaOf {
            name: Some("main".into()),
            ..Default::default()
        })
    };
    for (row, got, want) in [
        (
            "mysql full",
            version("mysql", Some("8.0.42"), none),
            Some("8.0.42"),
        ),
        ("mysql major", version("mysql", Some("8.0"), none), None),
        (
            "mariadb major",
            version("mariadb", Some("10.11"), none),
            None,
        ),
        (
            "postgres full",
            version("postgres", Some("16.4"), none),
            Some("16.4"),
        ),
        (
            "postgres major",
            version("postgres", Some("16"), none),
            None,
        ),
        ("no version", version("mysql", None, none), None),
        ("a restore", version("mysql", Some("8.0.42"), restore), None),
        ("a replica", version("mysql", Some("8.0.42"), replica), None),
    ] {
        assert_eq!(got, Some(want.map(str::to_owned)), "{row}");
    }
    // RDS has the instance: nothing is asked.
    assert_eq!(class_read(&facts().db, Some(&ours())), None);
}
