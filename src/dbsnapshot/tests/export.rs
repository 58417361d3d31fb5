//! spec.exportTo (`snapshot/export.rs`), a rule a row: sent once the snapshot is available, never
//! twice (a task RDS lists is reported, one recorded as sent is not sent again), its progress and
//! its failure reported, a new destination a new export; written as a role of the namespace only.

use super::plan::{ARN, Facts, facts, plan, reason, snapshot, taken};
use crate::managed::named::fixtures::{UID, owner_tags, with};
use crate::snapshot::export::{ExportStatus, ExportTo, ObservedExport, task_identifier};
use crate::snapshot::plan::{Own, Step};
use crate::snapshot::{SnapshotReport, Source};

fn to(bucket: &str) -> ExportTo {
    ExportTo {
        bucket: bucket.into(),
        prefix: Some("coffee".into()),
        kms_key_id: "arn:aws:kms:us-east-1:123456789012:key/k".into(),
        // The namespace's own role (managed::roles): the fixture's namespace is shop.
        iam_role: "arn:aws:iam::123456789012:role/rds-operator/shop/export".into(),
        export_only: vec![],
    }
}

/// A snapshot of this object in RDS (in `state`), exportTo set, the export task as read (None:
/// not read), and what the status recorded of it.
fn exporting(
    state: &str,
    read: Option<Option<ObservedExport>>,
    recorded: Option<ExportStatus>,
) -> Facts {
    with(taken(facts(Source::NotRead)), |f| {
        f.object.spec.options.export_to = Some(to("exports"));
        f.observed = Some(snapshot(state, owner_tags()).into());
        f.extra.export = read;
        let status = f.object.status.as_mut().unwrap();
        status.report = SnapshotReport {
            arn: Some(ARN.into()),
            export: recorded,
            ..Default::default()
        };
    })
}

fn id() -> String {
    task_identifier(UID, &to("exports"))
}

fn task(status: &str, cause: Option<&str>) -> ObservedExport {
    ObservedExport {
        identifier: id(),
        status: status.into(),
        percent_progress: Some(if status == "COMPLETE" { 100 } else { 30 }),
        failure_cause: cause.map(str::to_owned),
        ..Default::default()
    }
}

fn sent(id: &str) -> ExportStatus {
    ExportStatus {
        task_identifier: id.into(),
        status: Some("STARTING".into()),
        started_at: Some("2026-01-01T00:00:00Z".into()),
        ..Default::default()
    }
}

fn starts(p: &super::plan::Plan) -> usize {
    (p.steps.iter())
        .filter(|s| matches!(s, Step::Own(Own::Export(_))))
        .count()
}

fn export(p: &super::plan::Plan) -> Option<ExportStatus> {
    let s = p.status.as_ref()?;
    s.fields.report.export.clone()
}

#[test]
fn an_export_is_sent_once_and_reported() {
    // (name, facts, StartExportTask sent, Synced reason, status.export's state)
    let rows: Vec<(&str, Facts, usize, &str, Option<&str>)> = vec![
        (
            "the snapshot is still being taken: nothing sent",
            exporting("creating", None, None),
            0,
            "Synced",
            None,
        ),
        (
            "available, RDS has no task, none recorded: one StartExportTask",
            exporting("available", Some(None), None),
            1,
            "Synced",
            Some("STARTING"),
        ),
        (
            "sent before a crash that left no record: RDS's task is reported, none sent",
            exporting("available", Some(Some(task("IN_PROGRESS", None))), None),
            0,
            "Synced",
            Some("IN_PROGRESS"),
        ),
        (
            "recorded as sent, RDS no longer lists it: reported, never sent again",
            exporting("available", Some(None), Some(sent(&id()))),
            0,
            "ExportLost",
            Some("STARTING"),
        ),
        (
            "complete",
            exporting(
                "available",
                Some(Some(task("COMPLETE", None))),
                Some(sent(&id())),
            ),
            0,
            "Synced",
            Some("COMPLETE"),
        ),
        (
            "failed: RDS's cause reported, not retried",
            exporting(
                "available",
                Some(Some(task("FAILED", Some("the bucket is gone")))),
                Some(sent(&id())),
            ),
            0,
            "ExportFailed",
            Some("FAILED"),
        ),
        (
            "done and recorded, not read again: still reported",
            exporting(
                "available",
                None,
                Some(ExportStatus {
                    status: Some("FAILED".into()),
                    ..sent(&id())
                }),
            ),
            0,
            "ExportFailed",
            Some("FAILED"),
        ),
        (
            "a new destination: a new export, whatever the old one did",
            exporting(
                "available",
                Some(None),
                Some(ExportStatus {
                    status: Some("FAILED".into()),
                    ..sent("ex-old-destination")
                }),
            ),
            1,
            "Synced",
            Some("STARTING"),
        ),
        (
            "a role that is not the namespace's: refused, nothing sent",
            with(exporting("available", Some(None), None), |f| {
                let to = f.object.spec.options.export_to.as_mut().unwrap();
                to.iam_role = "arn:aws:iam::123456789012:role/export".into();
            }),
            0,
            "RoleNotGranted",
            None,
        ),
        (
            "that role, where the operator's --grant-roles lists the namespace: sent",
            with(exporting("available", Some(None), None), |f| {
                let to = f.object.spec.options.export_to.as_mut().unwrap();
                to.iam_role = "arn:aws:iam::123456789012:role/export".into();
                f.extra.role_grants = vec!["shop".into()];
            }),
            1,
            "Synced",
            Some("STARTING"),
        ),
    ];
    for (name, f, sends, synced, state) in rows {
        let p = plan(&f);
        assert_eq!(starts(&p), sends, "{name}: {:?}", p.steps);
        assert_eq!(reason(&p).3, synced, "{name}");
        let recorded = export(&p);
        assert_eq!(
            recorded.as_ref().and_then(|e| e.status.as_deref()),
            state,
            "{name}: {recorded:?}"
        );
    }
}

#[test]
fn the_export_is_sent_with_the_snapshots_arn_and_a_task_identifier_of_the_object_and_destination() {
    let p = plan(&exporting("available", Some(None), None));
    let Some(Step::Own(Own::Export(start))) = p.steps.first() else {
        panic!("an export: {:?}", p.steps)
    };
    assert_eq!(
        (start.source_arn.as_str(), start.bucket.as_str()),
        (ARN, "exports")
    );
    assert_eq!(start.identifier, id());
    assert!(start.identifier.starts_with(&format!("ex-{UID}-")));
    assert!(start.identifier.len() <= 60);
    assert_ne!(
        id(),
        task_identifier(UID, &to("elsewhere")),
        "one per destination"
    );
    let recorded = export(&p).unwrap();
    assert_eq!(
        recorded.location.as_deref(),
        Some(format!("s3://exports/coffee/{}", id()).as_str())
    );
    assert!(recorded.started_at.is_some(), "recorded as sent");
}

/// A StartExportTask that failed to send (a 503, a reset) leaves no record: the status the
/// skeleton writes keeps the previous export (none), so the next pass sends it again instead of
/// reporting it lost for ever.
#[test]
fn an_export_whose_start_failed_is_not_recorded_and_is_sent_again() {
    let f = exporting("available", Some(None), None);
    let first = plan(&f);
    assert_eq!((starts(&first), export(&first).is_some()), (1, true));
    let (status, _) = crate::managed::named::failed::<crate::dbsnapshot::DBSnapshot>(
        f.object.status.as_ref(),
        first.status.as_ref(),
        Some(1),
        "ServiceUnavailable",
        "StartExportTask: ServiceUnavailable: Service unavailable",
        "2026-01-01T00:00:00Z",
    );
    assert_eq!(status.report.export, None, "not recorded as started");
    let again = with(f, |f| f.object.status = Some(status));
    let second = plan(&again);
    assert_eq!(starts(&second), 1, "sent again");
    assert_eq!(reason(&second).3, "Synced");
}
