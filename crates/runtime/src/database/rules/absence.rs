//! What a database kind does when RDS no longer has its database (deleted or renamed outside the
//! operator, or the operator pointed at another account or region), written once. Nothing is
//! created on doubt: the absence is confirmed by direct reads a while apart, only in the account
//! and region the database was in; then, once none of its own snapshots is still being taken, the
//! newest is restored, and an empty one is created only when the spec opts in. A kind whose data
//! lives elsewhere (a replica, a secondary of a global database) is made again instead.

use std::time::Duration;

use super::Noun;
use crate::database::choices::{DriftPolicy, OutOfBandDeletionPolicy};
use crate::database::snapshots::{being_taken, newest, same_account_and_region, waiting_for};
use crate::rds_state::{AwsIdentity, SnapshotInfo};

/// What the rule reads of the object and of RDS.
pub struct Gone<'a> {
    pub noun: Noun,
    pub identifier: &'a str,
    pub drift_policy: DriftPolicy,
    pub out_of_band: OutOfBandDeletionPolicy,
    /// The absence was seen by a direct read, for this long.
    pub observed_directly: bool,
    pub absent_for: Option<Duration>,
    /// How long it must have been absent (the busy interval; longer after a rename).
    pub confirm_for: Duration,
    /// The ARN status recorded, and who the operator is now.
    pub arn: &'a str,
    pub identity: Option<&'a AwsIdentity>,
    /// The kind makes it again from where its data lives, not from a snapshot.
    pub remade: bool,
}

/// What to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Absence {
    /// Nothing sent: report `reason`, looked at again at the busy interval, or the drift interval
    /// when only a person can move it on.
    Refuse {
        reason: &'static str,
        message: String,
        busy: bool,
    },
    /// Made again from where its data lives (the kind's own creation).
    Remake,
    /// Restored from its newest own snapshot.
    Restore { snapshot: String, note: String },
    /// Created empty in its place (outOfBandDeletionPolicy RestoreOrCreateEmpty).
    CreateEmpty,
    /// No snapshot of its own and no opt-in: nothing is created (the kind says so).
    Nothing,
}

impl Absence {
    /// When to look again: at the busy interval while something moves (a confirmation, a snapshot
    /// being taken, a creation or restore under way), else at the drift interval, as only a
    /// person can move it on.
    pub fn after(&self, busy: Duration, drift: Duration) -> Duration {
        match self {
            Absence::Refuse { busy: false, .. } | Absence::Nothing => drift,
            _ => busy,
        }
    }
}

/// The rule, over the object's own snapshots (only those count: an identifier another team used
/// before has that team's snapshots).
pub fn decide(g: &Gone, own: &[&SnapshotInfo]) -> Absence {
    let (word, identifier) = (g.noun.word, g.identifier);
    let refuse = |reason, message, busy| Absence::Refuse {
        reason,
        message,
        busy,
    };
    if g.drift_policy == DriftPolicy::Report {
        let message = format!(
            "RDS {word} {identifier} was deleted outside the operator; driftPolicy is Report, so \
             it is not recreated"
        );
        return refuse("DeletedOutOfBand", message, false);
    }
    if !g.observed_directly || g.absent_for.is_none_or(|d| d < g.confirm_for) {
        let message = format!(
            "RDS has no {word} {identifier}; confirming with another direct read before acting"
        );
        return refuse("ConfirmingAbsence", message, true);
    }
    if let Err(message) = same_account_and_region(word, g.arn, g.identity) {
        return refuse("AccountOrRegionMismatch", message, false);
    }
    if g.remade {
        return Absence::Remake;
    }
    if let Some(taken) = being_taken(own.iter().copied()) {
        let message = waiting_for(word, identifier, taken);
        return refuse("SnapshotInProgress", message, true);
    }
    if let Some(snapshot) = newest(own.iter().copied()) {
        let note = format!(
            "RDS {word} {identifier} was deleted outside the operator; restoring it from its \
             newest snapshot {} ({}, created {})",
            snapshot.identifier, snapshot.kind, snapshot.created
        );
        let snapshot = snapshot.identifier.clone();
        return Absence::Restore { snapshot, note };
    }
    match g.out_of_band {
        OutOfBandDeletionPolicy::RestoreOrCreateEmpty => Absence::CreateEmpty,
        _ => Absence::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::rules::CLUSTER;

    const ARN: &str = "arn:aws:rds:us-east-1:123456789012:cluster:coffee";

    /// The operator, in the account and region the cluster was in.
    static ME: std::sync::LazyLock<AwsIdentity> = std::sync::LazyLock::new(|| AwsIdentity {
        account: "123456789012".into(),
        region: "us-east-1".into(),
        caller_arn: String::new(),
    });
    /// The operator pointed at another region.
    static ELSEWHERE: std::sync::LazyLock<AwsIdentity> = std::sync::LazyLock::new(|| AwsIdentity {
        region: "eu-west-1".into(),
        ..ME.clone()
    });

    fn gone() -> Gone<'static> {
        Gone {
            noun: CLUSTER,
            identifier: "coffee",
            drift_policy: DriftPolicy::Correct,
            out_of_band: OutOfBandDeletionPolicy::Restore,
            observed_directly: true,
            absent_for: Some(Duration::from_secs(10)),
            confirm_for: Duration::from_secs(5),
            arn: ARN,
            identity: Some(&ME),
            remade: false,
        }
    }

    fn snapshot(id: &str, status: &str, epoch: i64) -> SnapshotInfo {
        SnapshotInfo {
            identifier: id.into(),
            status: status.into(),
            kind: "manual".into(),
            created_epoch: epoch,
            ..Default::default()
        }
    }

    fn reason(a: &Absence) -> &str {
        match a {
            Absence::Refuse { reason, .. } => reason,
            Absence::Remake => "Remake",
            Absence::Restore { .. } => "Restore",
            Absence::CreateEmpty => "CreateEmpty",
            Absence::Nothing => "Nothing",
        }
    }

    /// Each rule in its order: the first that holds decides, and nothing is created on doubt.
    #[test]
    fn nothing_is_created_on_doubt_and_the_newest_own_snapshot_is_restored() {
        let (old, new) = (
            snapshot("old", "available", 1),
            snapshot("new", "available", 2),
        );
        let taking = snapshot("taking", "creating", 3);
        let with = |change: fn(&mut Gone)| {
            let mut g = gone();
            change(&mut g);
            g
        };
        let rows: Vec<(&str, Gone, Vec<&SnapshotInfo>, &str)> = vec![
            (
                "driftPolicy Report only reports",
                with(|g| g.drift_policy = DriftPolicy::Report),
                vec![&new],
                "DeletedOutOfBand",
            ),
            (
                "seen absent only through the listing",
                with(|g| g.observed_directly = false),
                vec![&new],
                "ConfirmingAbsence",
            ),
            (
                "absent for less than the confirmation interval",
                with(|g| g.absent_for = Some(Duration::from_secs(1))),
                vec![&new],
                "ConfirmingAbsence",
            ),
            (
                "the operator now works in another region",
                with(|g| g.identity = Some(&ELSEWHERE)),
                vec![&new],
                "AccountOrRegionMismatch",
            ),
            (
                "the operator's account is unknown",
                with(|g| g.identity = None),
                vec![&new],
                "AccountOrRegionMismatch",
            ),
            (
                "a replica or a secondary is made again",
                with(|g| g.remade = true),
                vec![],
                "Remake",
            ),
            (
                "a snapshot still being taken is waited for",
                gone(),
                vec![&new, &taking],
                "SnapshotInProgress",
            ),
            (
                "the newest own snapshot",
                gone(),
                vec![&old, &new],
                "Restore",
            ),
            (
                "no snapshot, and the spec opts in",
                with(|g| g.out_of_band = OutOfBandDeletionPolicy::RestoreOrCreateEmpty),
                vec![],
                "CreateEmpty",
            ),
            ("no snapshot, no opt-in: nothing", gone(), vec![], "Nothing"),
        ];
        for (name, g, own, want) in rows {
            let got = decide(&g, &own);
            assert_eq!(reason(&got), want, "{name}: {got:?}");
        }
        let restored = decide(&gone(), &[&old, &new]);
        assert!(
            matches!(&restored, Absence::Restore { snapshot, .. } if snapshot == "new"),
            "{restored:?}"
        );
    }
}
