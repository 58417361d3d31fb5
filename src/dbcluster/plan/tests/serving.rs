//! Ready over a list (issue 76): a cluster with members is Ready only once one serves; RDS's
//! `available` alone is the cluster's, not its endpoints'. A rule a row.

use super::*;
use crate::dbcluster::plan::serving::NO_WRITER;
use crate::managed::plan::Requeue;

/// The cluster Ready at the last pass.
fn was_ready(f: &mut Facts) {
    let status = f.cluster.status.as_mut().expect("a status");
    status.reported.conditions = vec![crate::database::parts::Condition {
        type_: "Ready".into(),
        status: "True".into(),
        reason: "Available".into(),
        message: "the cluster is available".into(),
        observed_generation: Some(1),
        last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
    }];
}

fn ready(p: &Plan) -> (bool, &str) {
    let ready = &p.status.as_ref().expect("a status").ready;
    (ready.ok, ready.reason.as_str())
}

/// `synced()` with RDS listing `members` and the shared poll having seen `states`, and the
/// DBInstances of the namespace declaring `declared` members.
fn members(members: Vec<ObservedMember>, states: &[(&str, &str)], declared: &[&str]) -> Facts {
    with(synced(), |f| {
        f.observed.as_mut().unwrap().members = members;
        f.member_states = (states.iter())
            .map(|(id, state)| (id.to_string(), state.to_string()))
            .collect();
        f.declared_members = declared.iter().map(|d| d.to_string()).collect();
    })
}

#[test]
fn a_cluster_with_members_is_ready_only_once_one_serves() {
    let writer = || member("coffee-1", true, "in-sync");
    let reader = || member("coffee-2", false, "in-sync");
    let rows: Vec<(&str, Facts, (bool, &str))> = vec![
        (
            "no instance in RDS, none declared: available is all it can be (a snapshot's, a \
             clone's, a primary's to be)",
            members(vec![], &[], &[]),
            (true, "Available"),
        ),
        (
            "no instance in RDS yet, a DBInstance declares one: not Ready (the endpoint takes \
             no connection); the member still joins it",
            members(vec![], &[], &["coffee-1"]),
            (false, NO_WRITER),
        ),
        (
            "the declared writer listed but still creating",
            members(vec![writer()], &[("coffee-1", "creating")], &["coffee-1"]),
            (false, NO_WRITER),
        ),
        (
            "the declared writer listed, not polled yet: not taken on trust",
            members(vec![writer()], &[], &["coffee-1"]),
            (false, NO_WRITER),
        ),
        (
            "the writer available",
            members(vec![writer()], &[("coffee-1", "available")], &["coffee-1"]),
            (true, "Available"),
        ),
        (
            "only a reader available, the writer rebooting: the cluster endpoint takes no write",
            members(
                vec![writer(), reader()],
                &[("coffee-1", "rebooting"), ("coffee-2", "available")],
                &["coffee-1", "coffee-2"],
            ),
            (false, NO_WRITER),
        ),
        (
            "a writer the namespace does not manage (made in the console), listed available",
            members(vec![writer()], &[("coffee-1", "available")], &[]),
            (true, "Available"),
        ),
        (
            "the writer modifying or backing up still serves",
            members(vec![writer()], &[("coffee-1", "backing-up")], &["coffee-1"]),
            (true, "Available"),
        ),
        (
            "the writer configuring its log exports still serves",
            members(
                vec![writer()],
                &[("coffee-1", "configuring-log-exports")],
                &["coffee-1"],
            ),
            (true, "Available"),
        ),
        (
            "the writer missing from the last listing (just changed), the cluster Ready: as it was",
            with(members(vec![writer()], &[], &["coffee-1"]), was_ready),
            (true, "Available"),
        ),
        (
            "the writer rebooting, the cluster Ready: no longer",
            with(
                members(vec![writer()], &[("coffee-1", "rebooting")], &["coffee-1"]),
                was_ready,
            ),
            (false, NO_WRITER),
        ),
        (
            "a global database's primary, its writer rebooting, a reader available: the writer \
             is what its endpoint needs",
            with(
                members(
                    vec![writer(), reader()],
                    &[("coffee-1", "rebooting"), ("coffee-2", "available")],
                    &["coffee-1", "coffee-2"],
                ),
                |f| f.observed.as_mut().unwrap().global_cluster = Some("coffee-global".into()),
            ),
            (false, NO_WRITER),
        ),
        (
            "a secondary of a global database (readers only), one reader available",
            with(
                members(vec![reader()], &[("coffee-2", "available")], &["coffee-2"]),
                |f| f.observed.as_mut().unwrap().global_cluster = Some("coffee-global".into()),
            ),
            (true, "Available"),
        ),
        (
            "a secondary whose only reader is creating",
            with(
                members(vec![reader()], &[("coffee-2", "creating")], &["coffee-2"]),
                |f| f.observed.as_mut().unwrap().global_cluster = Some("coffee-global".into()),
            ),
            (false, NO_WRITER),
        ),
        (
            "a Limitless Database: shards, not instances",
            with(members(vec![], &[], &["coffee-1"]), |f| {
                f.cluster.spec.cluster_scalability_type =
                    Some(crate::database::choices::ClusterScalabilityType::Limitless)
            }),
            (true, "Available"),
        ),
        (
            "not available in RDS: the reason RDS gives stays",
            with(members(vec![], &[], &["coffee-1"]), |f| {
                f.observed.as_mut().unwrap().status = "modifying".into()
            }),
            (false, "Unavailable"),
        ),
    ];
    for (name, f, want) in rows {
        let p = plan(&f);
        assert_eq!(ready(&p), want, "{name}");
    }
}

#[test]
fn a_cluster_without_a_serving_member_is_looked_at_again_at_the_busy_interval() {
    let f = members(
        vec![member("coffee-1", true, "in-sync")],
        &[("coffee-1", "creating")],
        &[],
    );
    let p = plan(&f);
    assert_eq!(p.requeue, Requeue::After(f.intervals.busy));
    let serving = members(
        vec![member("coffee-1", true, "in-sync")],
        &[("coffee-1", "available")],
        &[],
    );
    assert_ne!(
        plan(&serving).requeue,
        Requeue::After(serving.intervals.busy)
    );
}

#[test]
fn the_message_names_each_member_its_role_and_state() {
    let f = members(
        vec![
            member("coffee-1", true, "in-sync"),
            member("coffee-2", false, "in-sync"),
        ],
        &[("coffee-1", "creating"), ("coffee-2", "available")],
        &["coffee-1", "coffee-2"],
    );
    let p = plan(&f);
    let message = &p.status.as_ref().unwrap().ready.message;
    assert!(
        message.contains("coffee-1 (writer, creating)")
            && message.contains("coffee-2 (reader, available)"),
        "{message}"
    );
}
