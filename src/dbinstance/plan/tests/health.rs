//! Health in status: CloudWatch's figures as the health poll read them, and the warnings they and
//! RDS's answers give (storage headroom, the server certificate), each an advisory, and a Warning
//! Event when it is new.

use super::*;
use crate::rds_state::ObservedHealth;

fn figures(free_gib: f64) -> ObservedHealth {
    ObservedHealth {
        replica_lag_seconds: None,
        free_storage_bytes: Some(free_gib * (1u64 << 30) as f64),
        cpu_percent: Some(4.2),
        connections: Some(2.0),
    }
}

/// status.health as the plan writes it.
fn shown(p: &Plan) -> crate::database::health::HealthStatus {
    let status = &p.status.as_ref().unwrap().fields;
    status.common.health.clone().unwrap()
}

fn advisories(p: &Plan) -> Vec<String> {
    p.status.as_ref().unwrap().fields.advisories.clone()
}

fn warnings(p: &Plan) -> Vec<String> {
    (p.events.iter())
        .filter(|e| e.type_ == EventType::Warning)
        .map(|e| e.reason.clone())
        .collect()
}

/// (free GiB of 20, maxAllocatedStorage, certificate valid till, advisory recorded before) ->
/// the advisories' reasons and the Warning Events: a warning goes out once, when it is new.
#[test]
fn low_storage_headroom_and_an_expiring_certificate_are_advised_and_told_once() {
    type Row = (
        f64,
        Option<i32>,
        &'static str,
        Option<&'static str>,
        Vec<&'static str>,
        Vec<&'static str>,
    );
    let rows: Vec<Row> = vec![
        (10.0, None, "2061-05-21T00:00:00Z", None, vec![], vec![]),
        (
            1.0,
            None,
            "2061-05-21T00:00:00Z",
            None,
            vec!["StorageHeadroomLow"],
            vec!["StorageHeadroomLow"],
        ),
        (1.0, Some(100), "2061-05-21T00:00:00Z", None, vec![], vec![]),
        (
            1.0,
            None,
            "2061-05-21T00:00:00Z",
            Some("StorageHeadroomLow: storage headroom is 6%"),
            vec!["StorageHeadroomLow"],
            vec![],
        ),
        (
            10.0,
            None,
            "2026-12-10T00:00:00Z",
            None,
            vec!["CertificateExpiring"],
            vec!["CertificateExpiring"],
        ),
        (
            10.0,
            None,
            "2026-12-10T00:00:00Z",
            Some("CertificateExpiring: the server certificate"),
            vec!["CertificateExpiring"],
            vec![],
        ),
    ];
    for (free, max, till, before, advised, told) in rows {
        let mut f = synced().rds_shows(|o| {
            o.allocated_storage = Some(20);
            o.max_allocated_storage = max;
            o.certificate_valid_till = Some(till.into());
            o.ca_certificate_identifier = Some("rds-ca-rsa2048-g1".into());
        });
        f.health = Some(figures(free));
        if let Some(before) = before {
            f.db.status.as_mut().unwrap().advisories = vec![before.into()];
        }
        let p = plan(&f);
        let reasons: Vec<String> = (advisories(&p).iter())
            .map(|a| a.split(':').next().unwrap().to_owned())
            .collect();
        assert_eq!(reasons, advised, "{free} {max:?} {till} {before:?}");
        assert_eq!(warnings(&p), told, "{free} {max:?} {till} {before:?}");
        let health = shown(&p);
        assert_eq!((health.cpu_percent, health.connections), (Some(4), Some(2)));
    }
}

/// No figures (before the first health poll, after a failed one): no health in status, and no
/// storage warning guessed.
#[test]
fn without_figures_status_shows_no_health_and_warns_of_nothing() {
    let p = plan(&synced());
    assert_eq!(p.status.as_ref().unwrap().fields.common.health, None);
    assert_eq!(advisories(&p), Vec::<String>::new());
}

/// A replica's lag is shown as CloudWatch gives it, rounded to the second.
#[test]
fn a_replicas_lag_is_shown_in_whole_seconds() {
    let mut f = synced();
    f.health = Some(ObservedHealth {
        replica_lag_seconds: Some(41.6),
        ..Default::default()
    });
    let p = plan(&f);
    let health = shown(&p);
    assert_eq!(health.replica_lag_seconds, Some(42));
}

mod alarms {
    use super::*;
    use crate::database::alarms::{AlarmChanges, AlarmsSpec, desired};
    use crate::rds_state::ObservedAlarm;

    fn alarmed(listed: Option<Vec<ObservedAlarm>>) -> Facts {
        let mut f = synced().rds_shows(|o| o.allocated_storage = Some(20));
        f.db.spec.alarms = Some(AlarmsSpec {
            topic_arn: Some("arn:aws:sns:us-east-1:123456789012:db".into()),
            ..Default::default()
        });
        f.alarms = listed;
        f
    }

    fn wanted() -> Vec<crate::rds_state::AlarmConfig> {
        desired(
            "coffee",
            alarmed(None).db.spec.alarms.as_ref().unwrap(),
            Some(20),
            false,
        )
    }

    fn held(state: &str) -> Vec<ObservedAlarm> {
        (wanted().into_iter())
            .map(|config| ObservedAlarm {
                config,
                state: state.into(),
                reason: Some("Threshold Crossed".into()),
            })
            .collect()
    }

    fn alarm_steps(p: &Plan) -> Vec<AlarmChanges> {
        (p.steps.iter())
            .filter_map(|s| match s {
                Step::Alarms { changes, tags } => {
                    assert_eq!(
                        tags.get(OWNER_TAG).map(String::as_str),
                        Some(UID),
                        "tagged as ours"
                    );
                    Some(changes.clone())
                }
                _ => None,
            })
            .collect()
    }

    /// Nothing is put before the observer's first listing; then every alarm missing is put, and
    /// status shows it with no data yet; once CloudWatch holds them as wanted, no call.
    #[test]
    fn the_alarms_the_spec_asks_for_are_put_once_listed_and_then_left_alone() {
        assert_eq!(alarm_steps(&plan(&alarmed(None))), vec![]);
        let first = plan(&alarmed(Some(vec![])));
        assert_eq!(alarm_steps(&first)[0].put, wanted());
        let shown = &first.status.as_ref().unwrap().fields.common.alarms;
        assert_eq!(shown.len(), 3);
        assert!(
            shown.iter().all(|a| a.state == "INSUFFICIENT_DATA"),
            "{shown:?}"
        );
        let kept = plan(&alarmed(Some(held("OK"))));
        assert_eq!(alarm_steps(&kept), vec![]);
        let removed = with(alarmed(Some(held("OK"))), |f| f.db.spec.alarms = None);
        assert_eq!(
            alarm_steps(&plan(&removed))[0].delete.len(),
            3,
            "alarms left out are deleted"
        );
    }

    /// An alarm going to ALARM is a Warning Event once; back to OK, a Normal one.
    #[test]
    fn an_alarm_firing_is_a_warning_event_once_and_its_state_is_in_status() {
        let firing = plan(&alarmed(Some(held("ALARM"))));
        let fired: Vec<&str> = (firing.events.iter())
            .filter(|e| e.reason == "AlarmFiring")
            .map(|e| e.reason.as_str())
            .collect();
        assert_eq!(fired.len(), 3);
        let shown = firing.status.as_ref().unwrap().fields.common.alarms.clone();
        let again = with(alarmed(Some(held("ALARM"))), |f| {
            f.db.status.as_mut().unwrap().common.alarms = shown.clone()
        });
        assert!(
            plan(&again)
                .events
                .iter()
                .all(|e| e.reason != "AlarmFiring")
        );
        let resolved = with(alarmed(Some(held("OK"))), |f| {
            f.db.status.as_mut().unwrap().common.alarms = shown.clone()
        });
        assert!(
            plan(&resolved)
                .events
                .iter()
                .any(|e| e.reason == "AlarmResolved")
        );
    }

    /// Deleting the DBInstance deletes the alarms CloudWatch lists for it, before the finalizer
    /// goes.
    #[test]
    fn deleting_the_dbinstance_deletes_its_alarms_before_letting_it_go() {
        let mut f = deleting(DeletionPolicy::Delete, None);
        f.alarms = Some(held("OK"));
        let p = plan(&f);
        let names: Vec<String> = wanted().into_iter().map(|a| a.name).collect();
        let at = |wanted: &Step| p.steps.iter().position(|s| s == wanted);
        let delete = Step::Alarms {
            changes: AlarmChanges {
                put: vec![],
                delete: names,
            },
            tags: Default::default(),
        };
        assert!(
            at(&delete).unwrap() < at(&Step::RemoveFinalizer).unwrap(),
            "{:?}",
            p.steps
        );
    }
}

/// maintenancePolicy Immediate on a replica with maxLagSeconds: the pending action waits while
/// the replica is further behind (an advisory says why, with the figure), and is applied at once
/// when it has caught up; without maxLagSeconds nothing waits.
#[test]
fn immediate_maintenance_of_a_replica_waits_while_it_lags() {
    use crate::maintenance::{MaintenancePolicy, PendingAction};
    let rows: [(Option<i32>, Option<f64>, bool); 5] = [
        (None, Some(900.0), true),
        (Some(30), Some(5.0), true),
        (Some(30), Some(45.0), false),
        (Some(30), None, false),
        (Some(30), Some(-1.0), false),
    ];
    for (max, lag, applied) in rows {
        let mut f = super::replicas::synced_replica();
        f.db.spec.maintenance.maintenance_policy = MaintenancePolicy::Immediate;
        f.db.spec.upgrade.max_lag_seconds = max;
        f.maintenance = Some(vec![PendingAction {
            action: "system-update".into(),
            ..Default::default()
        }]);
        f.health = Some(ObservedHealth {
            replica_lag_seconds: lag,
            ..Default::default()
        });
        let p = plan(&f);
        let sent = p
            .steps
            .iter()
            .any(|s| matches!(s, Step::ApplyMaintenance(_)));
        assert_eq!(sent, applied, "{max:?} {lag:?}");
        let waiting = advisories(&p)
            .iter()
            .any(|a| a.starts_with("MaintenanceWaitingForLag: "));
        assert_eq!(waiting, !applied, "{max:?} {lag:?}: {:?}", advisories(&p));
    }
}
