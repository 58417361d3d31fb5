//! Table tests of rolling a Secret's readers: what a pod spec reads, when a workload is rolled
//! out, when the readers are listed, and which are rolled.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Secret;
use serde_json::json;

use super::*;
use crate::managed::plan::{KindPlan, Requeue};

fn secret(version: Option<&str>) -> Secret {
    let mut s: Secret = serde_json::from_value(json!({"metadata": {"name": "coffee-db"}})).unwrap();
    if let Some(v) = version {
        s.metadata.annotations = Some([(SECRET_VERSION.to_owned(), v.to_owned())].into());
    }
    s
}

fn pod(spec: serde_json::Value) -> PodSpec {
    serde_json::from_value(spec).unwrap()
}

#[test]
fn a_pod_reads_the_secrets_it_names_by_env_from_env_a_volume_or_a_projected_volume() {
    let cases = [
        (
            json!({"containers": [{"name": "a", "envFrom": [{"secretRef": {"name": "s1"}}, {"configMapRef": {"name": "c"}}]}]}),
            vec!["s1"],
        ),
        (
            json!({"containers": [{"name": "a", "env": [{"name": "P", "valueFrom": {"secretKeyRef": {"name": "s2", "key": "password"}}}, {"name": "X", "value": "y"}]}]}),
            vec!["s2"],
        ),
        (
            json!({"containers": [{"name": "a"}], "volumes": [{"name": "v", "secret": {"secretName": "s3"}}]}),
            vec!["s3"],
        ),
        (
            json!({"containers": [{"name": "a"}], "volumes": [{"name": "v", "projected": {"sources": [{"secret": {"name": "s4"}}, {"configMap": {"name": "c"}}]}}]}),
            vec!["s4"],
        ),
        (
            json!({"containers": [{"name": "a"}], "initContainers": [{"name": "i", "envFrom": [{"secretRef": {"name": "s5"}}]}]}),
            vec!["s5"],
        ),
        (
            json!({"containers": [{"name": "a", "envFrom": [{"configMapRef": {"name": "s1"}}]}]}),
            vec![],
        ),
    ];
    for (spec, want) in cases {
        let read: Vec<String> = secrets_read(&pod(spec.clone())).into_iter().collect();
        assert_eq!(read, want, "{spec}");
    }
}

fn deployment(extra: serde_json::Value) -> Deployment {
    let mut d = json!({
        "metadata": {"name": "coffee-app", "generation": 2, "annotations": {}},
        "spec": {
            "replicas": 2,
            "selector": {},
            "template": {"metadata": {"annotations": {}}, "spec": {"containers": [{"name": "a", "envFrom": [{"secretRef": {"name": "coffee-db"}}]}]}},
        },
        "status": {"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 2},
    });
    json_patch(&mut d, extra);
    serde_json::from_value(d).unwrap()
}

fn json_patch(into: &mut serde_json::Value, patch: serde_json::Value) {
    match (into, patch) {
        (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
            for (k, v) in b {
                json_patch(a.entry(k).or_insert(serde_json::Value::Null), v);
            }
        }
        (a, b) => *a = b,
    }
}

#[test]
fn a_workload_is_rolled_out_once_its_controller_saw_it_and_every_pod_is_updated() {
    let cases = [
        (json!({}), true),
        (json!({"status": {"observedGeneration": 1}}), false),
        (json!({"status": {"updatedReplicas": 1}}), false),
        (json!({"status": {"replicas": 3}}), false),
        (json!({"status": {"availableReplicas": 1}}), false),
        (
            json!({"spec": {"replicas": 0}, "status": {"replicas": 0, "updatedReplicas": 0, "availableReplicas": 0}}),
            true,
        ),
    ];
    for (extra, want) in cases {
        let w = Workload::of_deployment(&deployment(extra.clone()));
        assert_eq!(w.rolled_out, want, "Deployment {extra}");
    }
    let set = |status: serde_json::Value| -> StatefulSet {
        serde_json::from_value(json!({
            "metadata": {"name": "s", "generation": 1},
            "spec": {"replicas": 1, "selector": {}, "serviceName": "s", "template": {}},
            "status": status,
        }))
        .unwrap()
    };
    let ok = json!({"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "currentRevision": "r2", "updateRevision": "r2"});
    assert!(Workload::of_stateful_set(&set(ok)).rolled_out);
    let old = json!({"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "currentRevision": "r1", "updateRevision": "r2"});
    assert!(!Workload::of_stateful_set(&set(old)).rolled_out);
    let daemons = |status: serde_json::Value| -> DaemonSet {
        serde_json::from_value(json!({
            "metadata": {"name": "d", "generation": 3},
            "spec": {"selector": {}, "template": {}},
            "status": status,
        }))
        .unwrap()
    };
    let base = json!({"observedGeneration": 3, "currentNumberScheduled": 2, "numberMisscheduled": 0, "numberReady": 2, "desiredNumberScheduled": 2, "updatedNumberScheduled": 2, "numberAvailable": 2});
    assert!(Workload::of_daemon_set(&daemons(base.clone())).rolled_out);
    let mut behind = base;
    behind["updatedNumberScheduled"] = json!(1);
    assert!(!Workload::of_daemon_set(&daemons(behind)).rolled_out);
}

#[test]
fn a_workload_opts_in_or_out_by_annotation() {
    let w = Workload::of_deployment(&deployment(json!({"metadata": {"annotations": {
        READS: "reports-db, other", ROLL: "false"
    }}})));
    assert!(w.opted_out);
    let read: Vec<&str> = w.reads.iter().map(String::as_str).collect();
    assert_eq!(read, ["coffee-db", "other", "reports-db"]);
    let w = Workload::of_deployment(&deployment(
        json!({"metadata": {"annotations": {ROLL: "true"}}}),
    ));
    assert!(!w.opted_out);
}

#[test]
fn the_readers_are_listed_when_the_version_moved_past_status_or_a_rollout_goes() {
    let rolled = |version, state| SecretReaders {
        version,
        rolled_at: None,
        readers: vec![SecretReader {
            kind: WorkloadKind::Deployment,
            name: "coffee-app".into(),
            state,
        }],
    };
    let cases = [
        (None, None, false, "no Secret"),
        (
            Some(secret(None)),
            None,
            false,
            "a Secret from before the counter",
        ),
        (
            Some(secret(Some("1"))),
            None,
            false,
            "a new Secret: its readers read it from the start",
        ),
        (
            Some(secret(Some("2"))),
            None,
            true,
            "a changed Secret never rolled for",
        ),
        (
            Some(secret(Some("2"))),
            Some(rolled(2, ReaderState::RolledOut)),
            false,
            "rolled out",
        ),
        (
            Some(secret(Some("2"))),
            Some(rolled(2, ReaderState::OptedOut)),
            false,
            "opted out",
        ),
        (
            Some(secret(Some("2"))),
            Some(rolled(2, ReaderState::Rolling)),
            true,
            "rolling",
        ),
        (
            Some(secret(Some("3"))),
            Some(rolled(2, ReaderState::RolledOut)),
            true,
            "changed again",
        ),
    ];
    for (s, previous, want, why) in cases {
        assert_eq!(to_list(s.as_ref(), previous.as_ref()), want, "{why}");
    }
}

type Plan = KindPlan<Roll, ()>;

const BUSY: Duration = Duration::from_secs(5);

fn planned(
    listed: Option<&[Workload]>,
    previous: Option<&SecretReaders>,
) -> (Plan, Option<SecretReaders>) {
    let mut plan = Plan::new(Requeue::AwaitChange);
    let s = secret(Some("3"));
    let status = super::plan(
        &mut plan,
        |r| r,
        ("coffee-db", Some(&s)),
        (listed, previous),
        ("2026-12-06T00:00:00Z", BUSY),
    );
    (plan, status)
}

#[test]
fn a_reader_without_the_version_is_rolled_and_one_with_it_reports_its_rollout() {
    let key = template_key("coffee-db").unwrap();
    let at = |v: &str, rolled_out: bool| {
        let mut w = Workload::of_deployment(&deployment(json!({
            "spec": {"template": {"metadata": {"annotations": {key.as_str(): v}}}}
        })));
        w.rolled_out = rolled_out;
        w
    };
    let fresh = Workload::of_deployment(&deployment(json!({})));
    let cases = [
        (
            fresh.clone(),
            true,
            ReaderState::Rolling,
            "never rolled: rolled",
        ),
        (
            at("2", true),
            true,
            ReaderState::Rolling,
            "an older version: rolled",
        ),
        (
            at("3", false),
            false,
            ReaderState::Rolling,
            "this version, rolling out",
        ),
        (
            at("3", true),
            false,
            ReaderState::RolledOut,
            "this version, rolled out",
        ),
        (
            Workload {
                opted_out: true,
                ..fresh.clone()
            },
            false,
            ReaderState::OptedOut,
            "opted out: never touched",
        ),
    ];
    for (w, rolls, state, why) in cases {
        let (plan, status) = planned(Some(std::slice::from_ref(&w)), None);
        let want = rolls.then(|| Roll {
            kind: WorkloadKind::Deployment,
            name: "coffee-app".into(),
            annotation: "secret.rds.operator.rs/coffee-db".into(),
            version: 3,
        });
        assert_eq!(plan.steps.first(), want.as_ref(), "{why}");
        assert_eq!(
            plan.events.len(),
            usize::from(rolls),
            "{why}: an Event per roll"
        );
        let status = status.unwrap();
        assert_eq!(status.version, 3, "{why}");
        assert_eq!(status.readers[0].state, state, "{why}");
        assert_eq!(status.rolled_at.is_some(), rolls, "{why}");
        let busy = state == ReaderState::Rolling;
        let requeue = if busy {
            Requeue::After(BUSY)
        } else {
            Requeue::AwaitChange
        };
        assert_eq!(plan.requeue, requeue, "{why}: a rollout is followed");
    }
}

#[test]
fn a_workload_that_does_not_read_the_secret_is_never_rolled() {
    let other = Workload {
        reads: ["reports-db".to_owned()].into(),
        ..Workload::of_deployment(&deployment(json!({})))
    };
    let (plan, status) = planned(Some(&[other]), None);
    assert!(plan.steps.is_empty());
    assert!(status.unwrap().readers.is_empty());
}

#[test]
fn status_stays_as_it_was_when_the_readers_are_not_listed() {
    let previous = SecretReaders {
        version: 2,
        rolled_at: Some("then".into()),
        readers: Vec::new(),
    };
    let (plan, status) = planned(None, Some(&previous));
    assert!(plan.steps.is_empty());
    assert_eq!(status, Some(previous));
}

#[test]
fn a_secret_name_too_long_for_an_annotation_is_not_rolled_for() {
    assert!(template_key(&"a".repeat(63)).is_some());
    assert!(template_key(&"a".repeat(64)).is_none());
}

#[test]
fn a_write_raises_the_version() {
    assert_eq!(next_version(None), 1);
    assert_eq!(next_version(Some(&secret(None))), 2);
    assert_eq!(next_version(Some(&secret(Some("7")))), 8);
}
