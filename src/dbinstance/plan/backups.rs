//! Cross-region automated backup replication (spec.automatedBackupReplication), for our instance
//! once it is available: started in the destination region when RDS lists none there, stopped
//! when the spec drops it or moves it to another region, but only the one this DBInstance started
//! (status.automatedBackupReplication); one started outside the operator is left alone.

use kube::runtime::events::EventType;

use crate::dbinstance::{BackupReplicationStatus, DBInstanceStatus};
use crate::rds_state::ObservedInstance;

use super::types::{Facts, InstanceStep, Plan, Step};

/// The region of a replicated backups' ARN (arn:aws:rds:REGION:ACCOUNT:auto-backup:ab-...).
fn region_of(arn: &str) -> Option<&str> {
    arn.split(':').nth(3)
}

/// The replicated backups' ARN RDS lists in `region`.
fn listed<'a>(observed: &'a ObservedInstance, region: &str) -> Option<&'a String> {
    (observed.backup_replications.iter()).find(|arn| region_of(arn) == Some(region))
}

/// The steps that bring the replication to the spec, added to `plan`; what status then reports
/// (`fields.automated_backup_replication`); what changed, in words.
pub(super) fn plan(
    f: &Facts,
    plan: &mut Plan,
    observed: &ObservedInstance,
    fields: &mut DBInstanceStatus,
) -> Vec<String> {
    if observed.status != "available" {
        return Vec::new();
    }
    let previous = (f.db.status.as_ref()).and_then(|s| s.automated_backup_replication.clone());
    let wanted = f.db.spec.automated_backup_replication.as_ref();
    let (identifier, source) = (f.db.identifier(), observed.arn.clone().unwrap_or_default());
    let mut changed = Vec::new();
    // The one this DBInstance started, no longer wanted there (and still listed): stopped.
    let moved = |p: &&BackupReplicationStatus| wanted.is_none_or(|w| w.region != p.region);
    let stop =
        (previous.as_ref().filter(moved)).filter(|old| listed(observed, &old.region).is_some());
    if let Some(old) = stop {
        plan.step(Step::Own(InstanceStep::StopBackupReplication {
            identifier: identifier.clone(),
            source: source.clone(),
            region: old.region.clone(),
        }));
        changed.push(format!(
            "automatedBackupReplication: stop in {}",
            old.region
        ));
    }
    fields.automated_backup_replication = wanted.map(|w| BackupReplicationStatus {
        region: w.region.clone(),
        automated_backups_arn: listed(observed, &w.region).cloned(),
    });
    // RDS replicates automated backups only of an instance that keeps them (it refuses with
    // InvalidDBInstanceState, a code that otherwise means busy): while RDS shows retention 0
    // (the spec's drift being put back), nothing is started.
    let backups = observed.backup_retention_period != Some(0);
    if let Some(w) = wanted.filter(|w| backups && listed(observed, &w.region).is_none()) {
        plan.step(Step::Own(InstanceStep::StartBackupReplication {
            identifier,
            source,
            replication: w.clone(),
        }));
        changed.push(format!("automatedBackupReplication: start in {}", w.region));
    }
    if !changed.is_empty() {
        let note = format!("sent to RDS: {}", changed.join("; "));
        plan.event(EventType::Normal, "BackupReplication", "Update", note);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbinstance::BackupReplication;
    use crate::dbinstance::plan::tests::{facts, ours};
    use crate::managed::plan::Requeue;

    const WEST: &str = "arn:aws:rds:us-west-2:123456789012:auto-backup:ab-1";
    const EU: &str = "arn:aws:rds:eu-west-1:123456789012:auto-backup:ab-2";

    /// The steps and the status for: the spec's region, the one status recorded, the ARNs RDS lists.
    fn run(
        wanted: Option<&str>,
        recorded: Option<&str>,
        listed: &[&str],
    ) -> (Vec<Step>, Option<BackupReplicationStatus>) {
        let mut f = facts();
        f.db.spec.automated_backup_replication = wanted.map(|region| BackupReplication {
            region: region.into(),
            retention_period: Some(3),
            kms_key_id: None,
        });
        let status = f.db.status.get_or_insert_with(Default::default);
        status.automated_backup_replication = recorded.map(|region| BackupReplicationStatus {
            region: region.into(),
            automated_backups_arn: None,
        });
        let mut observed = ours();
        observed.backup_replications = listed.iter().map(|a| a.to_string()).collect();
        let mut plan = Plan::new(Requeue::AwaitChange);
        let mut fields = DBInstanceStatus::default();
        super::plan(&f, &mut plan, &observed, &mut fields);
        (plan.steps, fields.automated_backup_replication)
    }

    fn started(steps: &[Step]) -> Vec<String> {
        (steps.iter())
            .filter_map(|s| match s {
                Step::Own(InstanceStep::StartBackupReplication { replication, .. }) => {
                    Some(replication.region.clone())
                }
                _ => None,
            })
            .collect()
    }

    fn stopped(steps: &[Step]) -> Vec<String> {
        (steps.iter())
            .filter_map(|s| match s {
                Step::Own(InstanceStep::StopBackupReplication { region, .. }) => {
                    Some(region.clone())
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_record_is_kept_by_every_status_the_sync_writes() {
        // Carried by the sync's fields, so a replication this DBInstance started is never
        // forgotten, and is stopped once the spec drops it (a blue/green deployment under way,
        // which returns before this rule, is tested in tests/blue_green.rs).
        let recorded = BackupReplicationStatus {
            region: "us-west-2".into(),
            automated_backups_arn: Some(WEST.into()),
        };
        let mut f = crate::dbinstance::plan::tests::synced();
        f.db.spec.automated_backup_replication = Some(BackupReplication {
            region: "us-west-2".into(),
            retention_period: None,
            kms_key_id: None,
        });
        (f.db.status.as_mut().expect("a status")).automated_backup_replication =
            Some(recorded.clone());
        (f.observed.as_mut().expect("observed")).backup_replications = vec![WEST.into()];
        let plan = crate::dbinstance::plan::plan(&f);
        let fields = plan.status.expect("a status").fields;
        assert_eq!(fields.automated_backup_replication, Some(recorded));
        // While RDS is busy with the instance, nothing is started or stopped, and the record stays.
        (f.observed.as_mut().expect("observed")).status = "modifying".into();
        f.db.spec.automated_backup_replication = None;
        let plan = crate::dbinstance::plan::plan(&f);
        assert!(
            !plan
                .steps
                .iter()
                .any(|s| matches!(s, Step::Own(InstanceStep::StopBackupReplication { .. })))
        );
        let fields = plan.status.expect("a status").fields;
        assert!(fields.automated_backup_replication.is_some());
    }

    #[test]
    fn a_replication_is_started_once_and_stopped_only_when_this_dbinstance_started_it() {
        // Wanted, none yet: started, and reported without its ARN until RDS lists it.
        let (steps, status) = run(Some("us-west-2"), None, &[]);
        assert_eq!(started(&steps), vec!["us-west-2"]);
        assert_eq!(status.map(|s| s.automated_backups_arn), Some(None));
        // Listed: nothing to do; its ARN reported.
        let (steps, status) = run(Some("us-west-2"), Some("us-west-2"), &[WEST]);
        assert!(steps.is_empty(), "{steps:?}");
        assert_eq!(
            status.and_then(|s| s.automated_backups_arn).as_deref(),
            Some(WEST)
        );
        // Removed from the spec: the one it started is stopped, and status forgets it.
        let (steps, status) = run(None, Some("us-west-2"), &[WEST]);
        assert_eq!(stopped(&steps), vec!["us-west-2"]);
        assert!(started(&steps).is_empty() && status.is_none());
        // Moved to another region: the old one stopped, the new one started.
        let (steps, _) = run(Some("eu-west-1"), Some("us-west-2"), &[WEST]);
        assert_eq!(
            (stopped(&steps), started(&steps)),
            (vec!["us-west-2".to_owned()], vec!["eu-west-1".to_owned()])
        );
        // One started outside the operator (never recorded): left alone, whatever the spec.
        let (steps, status) = run(None, None, &[EU]);
        assert!(steps.is_empty() && status.is_none(), "{steps:?}");
        let (steps, _) = run(Some("us-west-2"), None, &[EU]);
        assert_eq!(
            (stopped(&steps), started(&steps)),
            (vec![], vec!["us-west-2".to_owned()])
        );
        // Recorded, but RDS lists none any more: nothing to stop.
        let (steps, _) = run(None, Some("us-west-2"), &[]);
        assert!(steps.is_empty(), "{steps:?}");
    }
}
