//! The DBProxy plan's rules, one row each.

use super::*;
use crate::crd::LocalRef;
use crate::dbproxy::{
    Credentials, DBProxySpec, ProxyAuth, ProxyEndpoint, ProxyEndpointSpec, ProxyTarget, Reads,
    Resolved, TargetHealth, TargetRole,
};
use crate::managed::named::fixtures::{self, deleting, owner_tags, with};

const SECRET: &str = "arn:aws:secretsmanager:us-east-1:1:secret:rds-operator/shop/coffee-AbCdEf";

fn instance(name: &str) -> ProxyTarget {
    ProxyTarget {
        db_instance_ref: Some(LocalRef { name: name.into() }),
        db_cluster_ref: None,
    }
}

fn resolved(identifier: &str) -> Resolved {
    Resolved {
        identifier: identifier.into(),
        cluster: false,
        engine: "mysql".into(),
    }
}

fn facts() -> Facts {
    let spec = DBProxySpec {
        targets: vec![instance("coffee-db")],
        vpc_subnet_ids: vec!["subnet-a".into(), "subnet-b".into()],
        // The namespace's own role (`managed::roles`): the fixture's namespace is shop.
        role_arn: "arn:aws:iam::1:role/rds-operator/shop/proxy".into(),
        ..Default::default()
    };
    let extra = Reads {
        targets: Some(Ok(vec![resolved("coffee-db")])),
        credentials: Some(Credentials {
            username: "admin".into(),
            password: Some(Sensitive("Sup3r-Secret".to_owned().into())),
            dbname: "COFFEE".into(),
            port: 3306,
            engine: "mysql".into(),
        }),
        auth_secret: Some((SECRET.into(), true)),
        secret: None,
        endpoint_secrets: Default::default(),
        role_grants: vec![],
    };
    fixtures::facts(DBProxy::new("coffee", spec), extra)
}

/// RDS's proxy, ours, available, with these targets registered (AVAILABLE).
fn ours(targets: &[&str]) -> ObservedProxy {
    ObservedProxy {
        name: "coffee".into(),
        arn: Some("arn:aws:rds:us-east-1:1:db-proxy:prx-1".into()),
        status: "available".into(),
        endpoint: Some("coffee.proxy-1.us-east-1.rds.amazonaws.com".into()),
        require_tls: false,
        idle_client_timeout: Some(1800),
        role_arn: Some("arn:aws:iam::1:role/rds-operator/shop/proxy".into()),
        auth: vec![(SECRET.into(), "DISABLED".into())],
        tags: owner_tags(),
        targets: (targets.iter())
            .map(|t| TargetHealth {
                identifier: t.to_string(),
                r#type: Some("RDS_INSTANCE".into()),
                state: Some("AVAILABLE".into()),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn reports(role: TargetRole) -> ProxyEndpointSpec {
    ProxyEndpointSpec {
        name: "reports".into(),
        target_role: role,
        ..Default::default()
    }
}

fn observed_endpoint(role: &str) -> ProxyEndpoint {
    ProxyEndpoint {
        name: "reports".into(),
        target_role: Some(role.into()),
        state: Some("available".into()),
        endpoint: Some("reports.endpoint.proxy-1.us-east-1.rds.amazonaws.com".into()),
    }
}

fn outcome(p: &Plan) -> (Vec<String>, String, bool) {
    let names = (p.steps.iter())
        .map(|s| match s {
            Step::AddFinalizer => "AddFinalizer".to_owned(),
            Step::Own(Own::CreateSecret { .. }) => "CreateSecret".to_owned(),
            Step::Own(Own::PutSecret { .. }) => "PutSecret".to_owned(),
            Step::Own(Own::Create { .. }) => "Create".to_owned(),
            Step::Own(Own::Modify { .. }) => "Modify".to_owned(),
            Step::Own(Own::ModifyPool { .. }) => "ModifyPool".to_owned(),
            Step::Own(Own::Targets {
                register, targets, ..
            }) => {
                let ids: Vec<&str> = targets.iter().map(|t| t.identifier.as_str()).collect();
                let verb = if *register { "Register" } else { "Deregister" };
                format!("{verb} {}", ids.join(","))
            }
            Step::Own(Own::CreateEndpoint { name, .. }) => format!("CreateEndpoint {name}"),
            Step::Own(Own::DeleteEndpoint { name }) => format!("DeleteEndpoint {name}"),
            Step::Own(Own::Secret(_)) => "Secret".to_owned(),
            Step::AddTags { .. } => "AddTags".to_owned(),
            Step::RemoveTags { .. } => "RemoveTags".to_owned(),
            Step::Delete { .. } => "Delete".to_owned(),
            Step::RemoveFinalizer => "RemoveFinalizer".to_owned(),
        })
        .collect();
    let status = p.status.as_ref();
    let reason = status.map(|s| s.synced.reason.clone()).unwrap_or_default();
    (names, reason, status.is_some_and(|s| s.ready.ok))
}

#[test]
fn rules() {
    type Row = (&'static str, Facts, Vec<&'static str>, &'static str, bool);
    let table: Vec<Row> = vec![
        (
            "a target not Ready yet: waits, nothing made",
            with(facts(), |f| {
                f.extra.targets = Some(Err("DBInstance coffee-db is not Ready yet".into()))
            }),
            vec![],
            "ReferencesUnresolved",
            false,
        ),
        (
            "no secret yet: it is made first, the proxy after it",
            with(facts(), |f| f.extra.auth_secret = None),
            vec!["CreateSecret"],
            "Creating",
            false,
        ),
        (
            "the secret holds the password: the proxy is made with it",
            facts(),
            vec!["Create"],
            "Creating",
            false,
        ),
        (
            "in sync: nothing sent",
            with(facts(), |f| f.observed = Some(ours(&["coffee-db"]))),
            vec![],
            "Synced",
            true,
        ),
        (
            "the target's password rotated: the secret is rewritten, once per difference",
            with(facts(), |f| {
                f.observed = Some(ours(&["coffee-db"]));
                f.extra.auth_secret = Some((SECRET.into(), false));
            }),
            vec!["PutSecret"],
            "Updating",
            true,
        ),
        (
            // Not Ready until RDS lists it: a proxy with no target registered refuses every
            // connection (issue 76; this row said Ready before).
            "a new target is registered",
            with(facts(), |f| f.observed = Some(ours(&[]))),
            vec!["Register coffee-db"],
            "Updating",
            false,
        ),
        (
            "a target gone from the spec is deregistered; the database stays",
            with(facts(), |f| {
                f.observed = Some(ours(&["coffee-db", "old-db"]))
            }),
            vec!["Deregister old-db"],
            "Updating",
            true,
        ),
        (
            "requireTLS changed: one ModifyDBProxy",
            with(facts(), |f| {
                f.object.spec.require_tls = true;
                f.observed = Some(ours(&["coffee-db"]));
            }),
            vec!["Modify"],
            "Updating",
            true,
        ),
        (
            "a pool setting the spec names differs: one ModifyDBProxyTargetGroup",
            with(facts(), |f| {
                f.object.spec.connection_pool = Some(ConnectionPool {
                    max_connections_percent: Some(50),
                    ..Default::default()
                });
                f.observed = Some(ours(&["coffee-db"]));
            }),
            vec!["ModifyPool"],
            "Updating",
            true,
        ),
        (
            "RDS busy with it: nothing sent to the proxy, looked at again",
            with(facts(), |f| {
                let mut o = ours(&[]);
                o.status = "modifying".into();
                f.observed = Some(o);
            }),
            vec![],
            "Synced",
            false,
        ),
        (
            "a target unavailable: not Ready, with RDS's reason",
            with(facts(), |f| {
                let mut o = ours(&["coffee-db"]);
                o.targets[0].state = Some("UNAVAILABLE".into());
                o.targets[0].reason = Some("AUTH_FAILURE".into());
                f.observed = Some(o);
            }),
            vec![],
            "Synced",
            false,
        ),
        (
            "an endpoint in the spec and not in RDS is made",
            with(facts(), |f| {
                f.object.spec.endpoints = vec![reports(TargetRole::ReadOnly)];
                f.observed = Some(ours(&["coffee-db"]));
            }),
            vec!["CreateEndpoint reports"],
            "Updating",
            true,
        ),
        (
            "an endpoint the operator made and the spec dropped is deleted",
            with(facts(), |f| {
                f.object.status = Some(DBProxyStatus {
                    applied_endpoints: vec!["reports".into()],
                    ..Default::default()
                });
                let mut o = ours(&["coffee-db"]);
                o.endpoints = vec![observed_endpoint("READ_ONLY")];
                f.observed = Some(o);
            }),
            vec!["DeleteEndpoint reports"],
            "Updating",
            true,
        ),
        (
            "one someone else made is left",
            with(facts(), |f| {
                let mut o = ours(&["coffee-db"]);
                o.endpoints = vec![observed_endpoint("READ_ONLY")];
                f.observed = Some(o);
            }),
            vec![],
            "Synced",
            true,
        ),
        (
            "an endpoint's role cannot change: refused, nothing sent",
            with(facts(), |f| {
                f.object.spec.endpoints = vec![reports(TargetRole::ReadWrite)];
                let mut o = ours(&["coffee-db"]);
                o.endpoints = vec![observed_endpoint("READ_ONLY")];
                f.observed = Some(o);
            }),
            vec![],
            "UnsupportedChange",
            true,
        ),
        (
            "a target still registering: not Ready yet",
            with(facts(), |f| {
                let mut o = ours(&["coffee-db"]);
                o.targets[0].state = Some("REGISTERING".into());
                f.observed = Some(o);
            }),
            vec![],
            "Synced",
            false,
        ),
        (
            "the spec names its own secret: the operator keeps none",
            with(facts(), |f| {
                f.object.spec.auth = ProxyAuth {
                    secret_arn: Some("arn:aws:secretsmanager:us-east-1:1:secret:rds!db-1".into()),
                    ..Default::default()
                };
                f.extra.auth_secret = None;
            }),
            vec!["Create"],
            "Creating",
            false,
        ),
        (
            "someone else's proxy of that name is never touched",
            with(facts(), |f| {
                let mut o = ours(&[]);
                o.tags.clear();
                f.observed = Some(o);
            }),
            vec![],
            "NameInUse",
            false,
        ),
        (
            "available, with its Secret asked for and written in this pass: Ready",
            with(facts(), |f| {
                f.object.spec.connection_secret = Some(wanted_secret());
                f.observed = Some(ours(&["coffee-db"]));
            }),
            vec!["Secret"],
            "Synced",
            true,
        ),
        (
            "available, its Secret asked for, the target's password not known: not Ready",
            with(facts(), |f| {
                f.object.spec.connection_secret = Some(wanted_secret());
                f.observed = Some(ours(&["coffee-db"]));
                if let Some(c) = f.extra.credentials.as_mut() {
                    c.password = None;
                }
            }),
            vec![],
            "AuthSecret",
            false,
        ),
        (
            "available, its Secret asked for, the target's port not known (0): not Ready",
            with(facts(), |f| {
                f.object.spec.connection_secret = Some(wanted_secret());
                f.observed = Some(ours(&["coffee-db"]));
                if let Some(c) = f.extra.credentials.as_mut() {
                    c.port = 0;
                }
            }),
            vec![],
            "Synced",
            false,
        ),
        (
            "available, an endpoint's Secret asked for, RDS has no address for it: not Ready",
            with(facts(), |f| {
                let mut e = reports(TargetRole::ReadOnly);
                e.connection_secret = Some(wanted_secret());
                f.object.spec.endpoints = vec![e];
                let mut o = ours(&["coffee-db"]);
                let mut there = observed_endpoint("READ_ONLY");
                there.endpoint = None;
                o.endpoints = vec![there];
                f.observed = Some(o);
            }),
            vec![],
            "Synced",
            false,
        ),
        (
            "available, no Secret asked for, no credentials yet: Ready as RDS has it",
            with(facts(), |f| {
                f.extra.credentials = None;
                f.observed = Some(ours(&["coffee-db"]));
            }),
            vec![],
            "AuthSecret",
            true,
        ),
        (
            "deleting ours deletes it (and its secret); the targets are not touched",
            deleting(with(facts(), |f| f.observed = Some(ours(&["coffee-db"])))),
            vec!["Delete", "RemoveFinalizer"],
            "",
            false,
        ),
    ];
    for (name, facts, steps, reason, ready) in table {
        let (got, got_reason, got_ready) = outcome(&plan(&facts));
        assert_eq!(got, steps, "{name}");
        assert_eq!(got_reason, reason, "{name}");
        assert_eq!(got_ready, ready, "{name}: Ready");
    }
}

fn wanted_secret() -> crate::database::parts::ConnectionSecretSpec {
    serde_json::from_value(serde_json::json!({"name": "coffee-proxy"})).unwrap()
}

#[test]
fn the_connection_secret_names_the_proxy_with_the_targets_credentials() {
    let f = with(facts(), |f| {
        f.object.spec.connection_secret = serde_json::from_value(serde_json::json!({
            "name": "coffee-proxy",
            "extraKeys": {"APP_DB_HOST": "{{ host }}"}
        }))
        .unwrap();
        f.observed = Some(ours(&["coffee-db"]));
    });
    let p = plan(&f);
    let Some(Step::Own(Own::Secret(SecretStep::WriteConnection { name, data, .. }))) =
        p.steps.first()
    else {
        panic!("{:?}", p.steps)
    };
    assert_eq!(name, "coffee-proxy");
    let value = |k: &str| secrecy::ExposeSecret::expose_secret(&data[k].0).to_owned();
    assert_eq!(
        value("APP_DB_HOST"),
        "coffee.proxy-1.us-east-1.rds.amazonaws.com"
    );
    assert_eq!(value("username"), "admin");
    assert_eq!(value("port"), "3306");
}

/// Ready needs every target the spec names registered (an empty list is not "all available"),
/// and every registered target AVAILABLE; it says which are missing.
#[test]
fn a_proxy_is_ready_only_once_every_target_it_names_is_registered_and_available() {
    let ready = |f: &Facts| {
        let p = plan(f);
        let status = p.status.expect("a status");
        (status.ready.ok, status.ready.reason, status.ready.message)
    };
    let (ok, reason, message) = ready(&with(facts(), |f| f.observed = Some(ours(&[]))));
    assert_eq!((ok, reason.as_str()), (false, "TargetRegistering"));
    assert!(message.contains("coffee-db"), "{message}");
    // The references not resolved in this pass: no target listed is still not Ready.
    let (ok, reason, _) = ready(&with(facts(), |f| {
        f.observed = Some(ours(&[]));
        f.extra.targets = Some(Err("DBInstance coffee-db is not Ready yet".into()));
    }));
    assert_eq!((ok, reason.as_str()), (false, "TargetRegistering"));
    // Registered and available: Ready.
    let (ok, _, _) = ready(&with(facts(), |f| f.observed = Some(ours(&["coffee-db"]))));
    assert!(ok);
}

/// A pass that fails with the connection Secret's write planned is not Ready (the write may not
/// have been made): Ready False, ConnectionSecretNotWritten, naming the Secret and the failure.
/// A failure with no write planned keeps the plan's Ready; one that says RDS cannot be reached
/// says so.
#[test]
fn a_failed_pass_that_planned_the_connection_secret_is_not_ready() {
    use crate::managed::{Failure, Managed};
    let with_secret = with(facts(), |f| {
        f.object.spec.connection_secret = Some(wanted_secret());
        f.observed = Some(ours(&["coffee-db"]));
    });
    let written = with(facts(), |f| f.observed = Some(ours(&["coffee-db"])));
    let table = [
        // (row, facts, failure reason, Ready, its reason)
        (
            "the Secret write planned, the pass failed",
            &with_secret,
            "KubeError",
            false,
            "ConnectionSecretNotWritten",
        ),
        (
            "no write planned, the pass failed",
            &written,
            "KubeError",
            true,
            "Synced",
        ),
        (
            "the write planned, the proxy gone from RDS",
            &with_secret,
            "NotFound",
            false,
            "NotFound",
        ),
    ];
    // The write made, a later step failed: the Secret holds it, Ready as planned.
    let planned = plan(&with_secret);
    let written = Failure {
        reason: "KubeError",
        message: "a later step failed",
        planned: Some(&planned),
        completed: planned.steps.len(),
        now: "2026-12-07T00:00:00Z",
    };
    let (status, _) = with_secret.object.failed(&written);
    let ready = (status.reported.conditions.iter()).find(|c| c.type_ == "Ready");
    assert_eq!(
        ready.map(|c| c.status.as_str()),
        Some("True"),
        "the Secret was written"
    );
    for (row, facts, reason, ok, why) in table {
        let planned = plan(facts);
        assert!(
            planned.status.as_ref().unwrap().ready.ok,
            "{row}: the plan is Ready"
        );
        let message = "secrets \"coffee-proxy\" is forbidden";
        let failure = Failure {
            reason,
            message,
            planned: Some(&planned),
            completed: 0,
            now: "2026-12-07T00:00:00Z",
        };
        let (status, _) = facts.object.failed(&failure);
        let ready = status
            .reported
            .conditions
            .iter()
            .find(|c| c.type_ == "Ready")
            .expect("Ready");
        assert_eq!(
            (ready.status == "True", ready.reason.as_str()),
            (ok, why),
            "{row}"
        );
        if why == "ConnectionSecretNotWritten" {
            assert!(
                ready.message.contains("coffee-proxy") && ready.message.contains("forbidden"),
                "{row}: {}",
                ready.message
            );
        }
    }
}

/// A target of another engine family is refused from its own spec, before any call: RDS answers
/// RegisterDBProxyTargets with InvalidDBInstanceState (otherwise "busy") and words that were
/// once the only way to tell. InvalidSpec naming the target and the field, no step, not tried
/// again until a spec changes; a target whose engine is not known (none given) is left to RDS.
#[test]
fn a_target_of_another_engine_family_is_refused_with_no_call() {
    let of = |engine: &str| {
        with(facts(), |f| {
            f.observed = Some(ours(&[]));
            let mut target = resolved("coffee-db");
            target.engine = engine.into();
            f.extra.targets = Some(Ok(vec![target]));
        })
    };
    for (engine, refused) in [
        ("postgres", true),
        ("aurora-postgresql", true),
        ("mysql", false),
        ("mariadb", false),
        ("aurora-mysql", false),
        ("", false),
    ] {
        let p = plan(&of(engine));
        let synced = &p.status.as_ref().unwrap().synced;
        let registers =
            (p.steps.iter()).any(|s| matches!(s, Step::Own(Own::Targets { register: true, .. })));
        assert_eq!(
            synced.reason == "InvalidSpec",
            refused,
            "{engine}: {}",
            synced.message
        );
        assert_eq!(registers, !refused, "{engine}: {:?}", p.steps);
        if refused {
            assert!(
                synced.message.contains("targets[0]")
                    && synced.message.contains("engineFamily MYSQL"),
                "{}",
                synced.message
            );
            assert_eq!(p.requeue, Requeue::AwaitChange);
        }
    }
}

/// Issue 77: roleARN is held to the namespace's roles, as exportTo.iamRole is: RDS Proxy reads
/// Secrets Manager as it, so another team's role is a reach into another team's secrets.
#[test]
fn a_role_not_the_namespaces_is_refused_with_no_call() {
    let with_role = |arn: &str, grants: &[&str]| {
        with(facts(), |f| {
            f.object.spec.role_arn = arn.into();
            f.extra.role_grants = grants.iter().map(|g| g.to_string()).collect();
        })
    };
    for (name, f, refused) in [
        (
            "its own path",
            with_role("arn:aws:iam::1:role/rds-operator/shop/proxy", &[]),
            false,
        ),
        ("no path", with_role("arn:aws:iam::1:role/proxy", &[]), true),
        (
            "another namespace's path",
            with_role("arn:aws:iam::1:role/rds-operator/payroll/proxy", &[]),
            true,
        ),
        (
            "no path, the namespace granted",
            with_role("arn:aws:iam::1:role/proxy", &["shop"]),
            false,
        ),
        (
            "no path, every namespace granted",
            with_role("arn:aws:iam::1:role/proxy", &["*"]),
            false,
        ),
    ] {
        for observed in [None, Some(ours(&["coffee-db"]))] {
            let existing = observed.is_some();
            let p = plan(&with(f.clone(), |f| f.observed = observed));
            let synced = &p.status.as_ref().unwrap().synced;
            let sent = (p.steps.iter())
                .any(|s| matches!(s, Step::Own(Own::Create { .. } | Own::Modify { .. })));
            assert_eq!(
                synced.reason == "RoleNotGranted",
                refused,
                "{name}, existing {existing}: {}",
                synced.message
            );
            if refused {
                assert!(!sent, "{name}: {:?}", p.steps);
                assert!(synced.message.contains("roleARN"), "{}", synced.message);
                assert_eq!(p.requeue, Requeue::AwaitChange);
            }
        }
    }
}
