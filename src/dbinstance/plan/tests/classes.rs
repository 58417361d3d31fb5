//! The class a create asks for, checked against what RDS offers (plan/create.rs).

use super::*;

/// A create is checked against the classes RDS offers for the engine and version in the location
/// (DescribeOrderableDBInstanceOptions): a class it does not offer is InvalidSpec naming the field,
/// with no CreateDBInstance and no retry until the spec changes; an answer that lists nothing (an
/// engine or version RDS does not have) or no answer leaves it to CreateDBInstance.
#[test]
fn a_class_rds_does_not_offer_is_refused_before_any_create() {
    let offered = |classes: Option<&[&str]>| {
        with(facts(), |f| {
            f.offered_classes = classes.map(|c| c.iter().map(|s| s.to_string()).collect());
        })
    };
    let offers: &[&str] = &["db.t3.micro", "db.t3.small", "db.m5.large"];
    let cases = vec![
        (
            "offered",
            offered(Some(offers)),
            vec!["CreateInstance"],
            "Synced",
        ),
        (
            "not offered",
            with(offered(Some(offers)), |f| {
                f.db.spec.db_instance_class = "db.t3.nonexistent".into();
            }),
            vec![],
            "InvalidSpec",
        ),
        (
            "RDS lists none",
            with(offered(Some(&[])), |f| {
                f.db.spec.db_instance_class = "db.t3.nonexistent".into();
            }),
            vec!["CreateInstance"],
            "Synced",
        ),
        (
            "not read",
            with(offered(None), |f| {
                f.db.spec.db_instance_class = "db.t3.nonexistent".into();
            }),
            vec!["CreateInstance"],
            "Synced",
        ),
    ];
    for (row, f, steps, reason) in cases {
        let p = plan(&f);
        let names: Vec<&str> = p.steps.iter().map(Step::name).collect();
        assert_eq!(names, steps, "{row}");
        let synced = &p.status.as_ref().unwrap().synced;
        assert_eq!(synced.reason, reason, "{row}: {}", synced.message);
        if reason == "InvalidSpec" {
            assert!(
                synced.message.contains("dbInstanceClass db.t3.nonexistent"),
                "{}",
                synced.message
            );
            assert!(synced.message.contains("db.t3.micro"), "{}", synced.message);
            assert_eq!(
                p.requeue,
                Requeue::AwaitChange,
                "{row}: not tried again until the spec changes"
            );
        }
    }
    // Asked for only where a create may be planned, with a full version.
    let mut db = facts().db;
    db.spec.engine_version = Some("8.0.42".into());
    assert_eq!(
        reads(&db, None).classes,
        Some(("mysql".into(), "8.0.42".into()))
    );
    assert_eq!(
        reads(&db, Some(&ours())).classes,
        None,
        "RDS has the instance"
    );
    let mut major = db.clone();
    major.spec.engine_version = Some("8.0".into());
    assert_eq!(
        reads(&major, None).classes,
        None,
        "a major version is RDS's to resolve"
    );
}
