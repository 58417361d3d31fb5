//! The schedule's table tests: ticks, the name per tick, retention, deletion.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::context::Grants;
use crate::dbsnapshot::{DBSnapshot, DBSnapshotSpec, SnapshotSource};
use crate::managed::plan::Requeue;
use crate::snapshot::plan::{Own, Step};
use crate::snapshot::schedule::{parse, tick_name};
use crate::snapshot::{
    Extra, ObservedSnapshot, SnapshotDeletionPolicy, SnapshotOptions, SnapshotSchedule, Source,
};

type Facts = crate::snapshot::plan::Facts<DBSnapshot>;
type Plan = crate::snapshot::plan::Plan<DBSnapshot>;
use crate::managed::named::fixtures::{self, deleting, owner_tags, with};

/// The DBSnapshot shop/coffee ("nightly" in RDS) of the DBInstance coffee, every day at 03:00,
/// keeping 2, made on 2026-12-01 at 12:00, reconciled at `now`, the source's snapshots `series`.
fn facts(now: &str, series: Vec<ObservedSnapshot>) -> Facts {
    let spec = DBSnapshotSpec {
        db_snapshot_identifier: Some("nightly".into()),
        source: Some(SnapshotSource {
            name: Some("coffee".into()),
            ..Default::default()
        }),
        options: SnapshotOptions {
            schedule: Some(SnapshotSchedule {
                cron: "0 3 * * *".into(),
                keep: 2,
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut snapshot = DBSnapshot::new("coffee", spec);
    snapshot.metadata.generation = Some(1);
    let made: k8s_openapi::jiff::Timestamp = "2026-12-01T12:00:00Z".parse().expect("a time");
    snapshot.metadata.creation_timestamp = Some(Time(made));
    let source = Source::Found {
        identifier: "coffee-db".into(),
        status: "available".into(),
        tags: [
            (crate::crd::OWNER_TAG.to_owned(), "uid-db".to_owned()),
            (
                crate::crd::OWNER_NAME_TAG.to_owned(),
                "shop/coffee".to_owned(),
            ),
        ]
        .into(),
        instance_tags: None,
        grants: Grants::default(),
    };
    let mut f = fixtures::facts(
        snapshot,
        Extra {
            source,
            series: Some(series),
            ..Default::default()
        },
    );
    f.now = now.into();
    f
}

/// This module's plan, of the facts' schedule.
fn plan(f: &Facts) -> Plan {
    let schedule = f.object.spec.options.schedule.clone().expect("a schedule");
    crate::snapshot::schedule::plan(f, &schedule)
}

fn snap(name: &str, status: &str, tags: BTreeMap<String, String>) -> ObservedSnapshot {
    ObservedSnapshot {
        name: name.into(),
        arn: Some(format!(
            "arn:aws:rds:us-east-1:123456789012:snapshot:{name}"
        )),
        instance: "coffee-db".into(),
        kind: "manual".into(),
        status: status.into(),
        tags,
        ..Default::default()
    }
}

fn ours(name: &str, status: &str) -> ObservedSnapshot {
    snap(name, status, owner_tags())
}

fn created(plan: &Plan) -> Vec<String> {
    (plan.steps.iter())
        .filter_map(|s| match s {
            Step::Own(Own::Create { name, .. }) => Some(name.clone()),
            _ => None,
        })
        .collect()
}

fn deleted(plan: &Plan) -> Vec<String> {
    (plan.steps.iter())
        .filter_map(|s| match s {
            Step::Delete { name } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_tick_is_taken_once_named_after_it_and_only_the_last_after_a_gap() {
    let cases: Vec<(&str, &str, Vec<ObservedSnapshot>, Vec<&str>)> = vec![
        (
            "before the first tick since the object was made",
            "2026-12-02T02:59:00Z",
            vec![],
            vec![],
        ),
        (
            "the first tick",
            "2026-12-02T03:00:30Z",
            vec![],
            vec!["nightly-20261202030000"],
        ),
        (
            "taken already (a crash after the create finds it by its name)",
            "2026-12-02T03:00:30Z",
            vec![ours("nightly-20261202030000", "available")],
            vec![],
        ),
        (
            "three ticks missed while the operator was down: the last one, once",
            "2026-12-05T04:00:00Z",
            vec![ours("nightly-20261202030000", "available")],
            vec!["nightly-20261205030000"],
        ),
        (
            "the previous one still being taken: none now",
            "2026-12-03T03:00:30Z",
            vec![ours("nightly-20261202030000", "creating")],
            vec![],
        ),
        (
            "a time the read step could not give: no tick is known, none taken",
            "not a time",
            vec![],
            vec![],
        ),
    ];
    for (case, now, series, want) in cases {
        let p = plan(&facts(now, series));
        assert_eq!(created(&p), want, "{case}");
        assert!(deleted(&p).is_empty(), "{case}: {:?}", p.steps);
    }
}

#[test]
fn the_keep_newest_available_are_kept_and_only_this_objects_older_ones_deleted() {
    let by_hand = snap("nightly-20261201000000", "available", BTreeMap::new());
    let another = snap(
        "nightly-20261130030000",
        "available",
        [(crate::crd::OWNER_TAG.to_owned(), "uid-9".to_owned())].into(),
    );
    let series = vec![
        ours("nightly-20261202030000", "available"),
        ours("nightly-20261203030000", "available"),
        ours("nightly-20261204030000", "available"),
        by_hand,
        another,
    ];
    // At the fourth tick: one more is taken; of the three available, the oldest goes now, and
    // the next oldest once the new one is available.
    let p = plan(&facts("2026-12-05T03:00:10Z", series.clone()));
    assert_eq!(created(&p), vec!["nightly-20261205030000"]);
    assert_eq!(deleted(&p), vec!["nightly-20261202030000"]);
    let status = p.status.as_ref().expect("a status");
    let schedule = status
        .fields
        .report
        .schedule
        .clone()
        .expect("schedule status");
    assert_eq!(
        schedule.kept,
        vec![
            "nightly-20261205030000",
            "nightly-20261204030000",
            "nightly-20261203030000"
        ]
    );
    assert_eq!(schedule.next_tick.as_deref(), Some("2026-12-06T03:00:00Z"));
    assert_eq!(schedule.last_tick.as_deref(), Some("2026-12-05T03:00:00Z"));
    assert_eq!(
        status.fields.db_snapshot_identifier.as_deref(),
        Some("nightly-20261204030000"),
        "the newest available one is what a dbSnapshotRef restores"
    );
    assert!(status.ready.ok && status.synced.ok);
    assert_eq!(
        p.requeue,
        Requeue::After(Duration::from_secs(5)),
        "one is being taken"
    );
    // Between ticks, nothing to take: it looks again at the next tick, or after a drift interval.
    let settled = vec![
        ours("nightly-20261205030000", "available"),
        ours("nightly-20261204030000", "available"),
    ];
    let p = plan(&facts("2026-12-05T03:00:10Z", settled.clone()));
    assert!(p.steps.is_empty(), "{:?}", p.steps);
    assert_eq!(p.requeue, Requeue::After(Duration::from_secs(60)));
    let p = plan(&facts("2026-12-06T02:59:30Z", settled));
    assert_eq!(p.requeue, Requeue::After(Duration::from_secs(31)));
}

#[test]
fn a_schedule_that_cannot_take_a_snapshot_says_why_and_deletes_nothing_more() {
    let series = vec![ours("nightly-20261202030000", "available")];
    let gone = with(facts("2026-12-03T03:00:10Z", series.clone()), |f| {
        f.extra.source = Source::NotFound("coffee-db".into())
    });
    let p = plan(&gone);
    assert!(p.steps.is_empty(), "{:?}", p.steps);
    let status = p.status.expect("a status");
    assert_eq!(status.synced.reason, "SourceNotFound");
    assert!(
        status.ready.ok,
        "the snapshot kept is still there to restore"
    );
    let bad = with(facts("2026-12-03T03:00:10Z", series), |f| {
        f.object
            .spec
            .options
            .schedule
            .as_mut()
            .expect("a schedule")
            .cron = "every night".into()
    });
    let p = plan(&bad);
    assert!(p.steps.is_empty());
    assert_eq!(p.status.expect("a status").synced.reason, "InvalidSchedule");
    assert_eq!(p.requeue, Requeue::AwaitChange);
}

#[test]
fn deleting_a_schedule_keeps_its_snapshots_unless_its_policy_says_delete() {
    let series = vec![
        ours("nightly-20261202030000", "available"),
        ours("nightly-20261203030000", "available"),
        snap("nightly-20261201000000", "available", BTreeMap::new()),
    ];
    let f = deleting(facts("2026-12-03T04:00:00Z", series));
    let p = plan(&f);
    assert_eq!(p.steps, vec![Step::RemoveFinalizer], "Retain by default");
    let delete = with(f, |f| {
        f.object.spec.options.deletion_policy = Some(SnapshotDeletionPolicy::Delete)
    });
    let p = plan(&delete);
    assert_eq!(
        deleted(&p),
        vec!["nightly-20261203030000", "nightly-20261202030000"],
        "its own, never the one made by hand"
    );
    assert_eq!(p.steps.last(), Some(&Step::RemoveFinalizer));
    let busy = with(delete, |f| {
        let series = f.extra.series.as_mut().expect("read");
        series.push(ours("nightly-20261203040000", "creating"));
    });
    let p = plan(&busy);
    assert!(
        !p.steps.contains(&Step::RemoveFinalizer),
        "waits for the one being taken"
    );
}

#[test]
fn seconds_may_be_given_and_a_name_carries_the_tick_to_the_second() {
    let cron = parse("*/10 * * * * *").expect("six fields");
    let now = chrono::DateTime::parse_from_rfc3339("2026-12-02T03:00:25Z")
        .unwrap()
        .to_utc();
    let tick = cron.find_previous_occurrence(&now, true).unwrap();
    assert_eq!(tick_name("nightly", &tick), "nightly-20261202030020");
    assert!(parse("0 3 * *").is_err());
}

/// The schedule's two kept snapshots, the newer shared with `newer` and the older with `older`,
/// sharedWith `wanted`, the namespace granted AWSAccount 222222222222.
fn sharing(newer: &[&str], older: &[&str], wanted: &[&str]) -> Facts {
    let series = vec![
        ours("nightly-20261204030000", "available"),
        ours("nightly-20261203030000", "available"),
    ];
    let mut f = facts("2026-12-04T12:00:00Z", series);
    let list = |a: &[&str]| a.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    f.object.spec.options.shared_with = list(wanted);
    f.extra.shares = Some(crate::snapshot::Shares {
        current: [
            ("nightly-20261204030000".to_owned(), list(newer)),
            ("nightly-20261203030000".to_owned(), list(older)),
        ]
        .into(),
        accounts: vec!["222222222222".into()],
        grants: Grants::default(),
    });
    f
}

fn shared(plan: &Plan) -> Vec<(String, Vec<String>, Vec<String>)> {
    (plan.steps.iter())
        .filter_map(|s| match s {
            Step::Own(Own::Share { name, add, remove }) => {
                Some((name.clone(), add.clone(), remove.clone()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_schedules_kept_snapshots_are_each_shared_as_sharedwith_says_and_only_with_granted_accounts() {
    let granted = "222222222222";
    // One kept snapshot not shared yet: one change, for it alone.
    let p = plan(&sharing(&[granted], &[], &[granted]));
    assert_eq!(
        shared(&p),
        vec![(
            "nightly-20261203030000".to_owned(),
            vec![granted.to_owned()],
            vec![]
        )]
    );
    let status = p.status.expect("a status");
    assert_eq!(status.synced.reason, "Scheduled");
    assert_eq!(status.fields.report.shared_with, vec![granted]);
    // All shared as asked: nothing to send.
    let p = plan(&sharing(&[granted], &[granted], &[granted]));
    assert!(shared(&p).is_empty());
    // sharedWith emptied: each kept snapshot's share is taken back.
    let p = plan(&sharing(&[granted], &[granted], &[]));
    assert_eq!(shared(&p).len(), 2, "{:?}", p.steps);
    // An account nobody granted: nothing shared, none taken back, ShareNotGranted.
    let p = plan(&sharing(&[granted], &[], &["999999999999"]));
    assert!(shared(&p).is_empty(), "{:?}", p.steps);
    let status = p.status.expect("a status");
    assert_eq!(status.synced.reason, "ShareNotGranted");
    assert!(status.synced.message.contains("999999999999"));
}
