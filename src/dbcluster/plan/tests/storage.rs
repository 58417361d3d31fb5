//! Aurora I/O-Optimized's 30 days (plan/storage.rs), a rule a row. now is 2026-12-01T00:00:00Z.

use super::*;
use crate::database::choices::ClusterStorageType;
use crate::managed::plan::Requeue;

fn switching(to: ClusterStorageType, have: &str, since: Option<&str>) -> Facts {
    with(synced(), |f| {
        f.cluster.spec.storage_type = Some(to);
        f.observed.as_mut().unwrap().storage_type = Some(have.into());
        f.cluster.status.as_mut().unwrap().io_optimized_since = since.map(str::to_owned);
    })
}

fn since(p: &Plan) -> Option<String> {
    p.status
        .as_ref()
        .and_then(|s| s.fields.io_optimized_since.clone())
}

#[test]
fn a_first_switch_to_io_optimized_is_sent_and_recorded() {
    let p = plan(&switching(ClusterStorageType::AuroraIopt1, "aurora", None));
    let m = modification(&p).expect("a ModifyDBCluster");
    assert_eq!(m.storage_type.as_deref(), Some("aurora-iopt1"));
    assert_eq!(since(&p).as_deref(), Some("2026-12-01T00:00:00Z"));
}

#[test]
fn a_second_switch_within_30_days_is_refused_with_rdss_reason_and_nothing_sent() {
    let f = switching(
        ClusterStorageType::AuroraIopt1,
        "aurora",
        Some("2026-11-20T00:00:00Z"),
    );
    let p = plan(&f);
    assert!(modification(&p).is_none(), "no call: {:?}", names(&p));
    assert_eq!(synced_reason(&p), "StorageSwitchTooSoon");
    let message = &p.status.as_ref().unwrap().synced.message;
    assert!(
        message.contains("once every 30 days") && message.contains("2026-12-20T00:00:00Z"),
        "{message}"
    );
    assert!(
        matches!(p.requeue, Requeue::After(d) if d <= PollIntervals::default().settled),
        "{:?}",
        p.requeue
    );
}

#[test]
fn a_switch_30_days_after_the_last_is_sent() {
    let f = switching(
        ClusterStorageType::AuroraIopt1,
        "aurora",
        Some("2026-10-31T00:00:00Z"),
    );
    let p = plan(&f);
    assert!(modification(&p).is_some_and(|m| m.storage_type.is_some()));
    assert_eq!(since(&p).as_deref(), Some("2026-12-01T00:00:00Z"));
}

#[test]
fn back_to_standard_is_sent_at_any_time_and_the_record_kept() {
    let f = switching(
        ClusterStorageType::Aurora,
        "aurora-iopt1",
        Some("2026-11-30T00:00:00Z"),
    );
    let p = plan(&f);
    let m = modification(&p).expect("a ModifyDBCluster");
    assert_eq!(m.storage_type.as_deref(), Some("aurora"));
    assert_eq!(since(&p).as_deref(), Some("2026-11-30T00:00:00Z"));
}
