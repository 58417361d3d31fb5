//! The DBClusterEndpoint plan's table tests: the facts in, the steps and conditions out.

use super::*;
use crate::crd::LocalRef;
use crate::dbclusterendpoint::{DBClusterEndpointSpec, EndpointType, Reads};
use crate::managed::named::fixtures::{self, owner_tags, with};
use crate::sensitive::Sensitive;

fn cluster() -> Cluster {
    Cluster {
        identifier: "coffee".into(),
        port: 3306,
        username: "admin".into(),
        dbname: "COFFEE".into(),
        engine: "aurora-mysql".into(),
        members: ["coffee-w", "coffee-r1"]
            .map(|m| crate::dbcluster::ClusterMember {
                db_instance_identifier: m.into(),
                is_cluster_writer: m == "coffee-w",
                state: Some("available".into()),
            })
            .into(),
    }
}

/// The READER endpoint reports over the member coffee-r1, never made; its cluster Ready.
fn facts() -> Facts {
    let spec = DBClusterEndpointSpec {
        db_cluster_ref: LocalRef {
            name: "coffee".into(),
        },
        endpoint_type: EndpointType::Reader,
        static_members: vec![LocalRef {
            name: "reader-1".into(),
        }],
        ..Default::default()
    };
    let mut e = DBClusterEndpoint::new("reports", spec);
    e.metadata.generation = Some(1);
    e.metadata.uid = Some(fixtures::UID.into());
    let reads = Reads {
        cluster: Some(Ok(cluster())),
        members: Some(Ok((vec!["coffee-r1".into()], vec![]))),
        password: Some(Sensitive::new("the-password")),
        secret: None,
    };
    fixtures::facts(e, reads)
}

fn observed(status: &str) -> ObservedClusterEndpoint {
    ObservedClusterEndpoint {
        name: "reports".into(),
        arn: Some("arn:aws:rds:us-east-1:123456789012:cluster-endpoint:reports".into()),
        cluster: "coffee".into(),
        status: status.into(),
        endpoint: Some("reports.cluster-custom-x.us-east-1.rds.amazonaws.com".into()),
        endpoint_type: Some("READER".into()),
        static_members: vec!["coffee-r1".into()],
        excluded_members: vec![],
        tags: owner_tags(),
    }
}

fn own(plan: &Plan) -> Vec<&Own> {
    (plan.steps.iter())
        .filter_map(|s| match s {
            Step::Own(own) => Some(own),
            _ => None,
        })
        .collect()
}

fn reason(plan: &Plan) -> &str {
    &plan.status.as_ref().expect("a status").synced.reason
}

#[test]
fn an_endpoint_is_made_once_its_cluster_and_members_resolve() {
    let p = plan(&facts());
    let [
        Own::Create {
            cluster,
            endpoint_type,
            static_members,
            excluded_members,
            tags,
            ..
        },
    ] = own(&p)[..]
    else {
        panic!("one CreateDBClusterEndpoint: {:?}", p.steps);
    };
    assert_eq!(
        (cluster.as_str(), endpoint_type.as_str()),
        ("coffee", "READER")
    );
    assert_eq!(
        (static_members.clone(), excluded_members.clone()),
        (vec!["coffee-r1".to_owned()], vec![])
    );
    assert!(
        tags.contains_key(crate::crd::OWNER_TAG),
        "tagged at create: {tags:?}"
    );

    for (case, change) in [
        (
            "cluster not Ready",
            Some(Err("DBCluster coffee is not Ready yet".to_owned())),
        ),
        ("member not Ready", None),
    ] {
        let f = with(facts(), |f| match change {
            Some(c) => f.extra.cluster = Some(c),
            None => f.extra.members = Some(Err("DBInstance reader-1 is not Ready yet".into())),
        });
        let p = plan(&f);
        assert!(own(&p).is_empty(), "{case}: {:?}", p.steps);
        assert_eq!(reason(&p), "ReferencesUnresolved", "{case}");
    }
}

#[test]
fn members_and_type_are_kept_with_one_modify_while_available() {
    type Sent<'a> = Option<(&'a str, Vec<&'a str>, Vec<&'a str>)>;
    let cases: [(&str, Facts, Sent); 4] = [
        (
            "in sync",
            with(facts(), |f| f.observed = Some(observed("available"))),
            None,
        ),
        (
            "another member in the spec",
            with(facts(), |f| {
                f.observed = Some(observed("available"));
                f.extra.members = Some(Ok((vec!["coffee-r2".into()], vec![])));
            }),
            Some(("READER", vec!["coffee-r2"], vec![])),
        ),
        (
            "ANY, all but one",
            with(facts(), |f| {
                f.observed = Some(observed("available"));
                f.object.spec.endpoint_type = EndpointType::Any;
                f.extra.members = Some(Ok((vec![], vec!["coffee-w".into()])));
            }),
            Some(("ANY", vec![], vec!["coffee-w"])),
        ),
        (
            "RDS busy with it",
            with(facts(), |f| {
                f.observed = Some(observed("modifying"));
                f.extra.members = Some(Ok((vec!["coffee-r2".into()], vec![])));
            }),
            None,
        ),
    ];
    for (case, f, expected) in cases {
        let p = plan(&f);
        let modify = own(&p).into_iter().find_map(|s| match s {
            Own::Modify {
                endpoint_type,
                static_members,
                excluded_members,
                ..
            } => Some((
                endpoint_type.as_str(),
                static_members.clone(),
                excluded_members.clone(),
            )),
            _ => None,
        });
        let expected = expected.map(|(t, s, e)| {
            let owned = |v: Vec<&str>| v.into_iter().map(str::to_owned).collect::<Vec<_>>();
            (t, owned(s), owned(e))
        });
        assert_eq!(modify, expected, "{case}");
        assert!(
            !own(&p).iter().any(|s| matches!(s, Own::Create { .. })),
            "{case}"
        );
    }
}

#[test]
fn its_secret_names_the_endpoint_with_the_clusters_credentials_and_only_its_own() {
    let f = with(facts(), |f| {
        f.observed = Some(observed("available"));
        f.object.spec.connection_secret = Some(crate::database::parts::ConnectionSecretSpec {
            name: "reports-db".into(),
            extra_keys: [("APP_DB_HOST".to_owned(), "{{ host }}".to_owned())].into(),
        });
    });
    let p = plan(&f);
    let Some(Own::Secret(SecretStep::WriteConnection { data, create, .. })) =
        own(&p).first().copied()
    else {
        panic!("the Secret: {:?}", p.steps);
    };
    assert!(create);
    let value = |k: &str| data.get(k).map(|v| v.expose().to_owned());
    assert_eq!(value("host"), observed("available").endpoint);
    assert_eq!(value("APP_DB_HOST"), value("host"));
    assert_eq!(value("password").as_deref(), Some("the-password"));
    assert_eq!(value("username").as_deref(), Some("admin"));
    assert_eq!(value("dbname").as_deref(), Some("COFFEE"));
    // Someone else's Secret of that name: never written.
    let mut foreign = crate::secrets::owned_secret(&f.object, "reports-db", data, true);
    foreign.metadata.owner_references = None;
    foreign.metadata.annotations = None;
    let refused = plan(&with(f, |f| f.extra.secret = Some(foreign)));
    assert_eq!(reason(&refused), "ConnectionSecretConflict");
    assert!(own(&refused).is_empty());
}

#[test]
fn ready_only_once_the_secret_it_asks_for_can_hold_the_endpoint() {
    let wanted = |f: &mut Facts| {
        f.object.spec.connection_secret = Some(crate::database::parts::ConnectionSecretSpec {
            name: "reports-db".into(),
            extra_keys: Default::default(),
        });
    };
    let ready = |p: &Plan| {
        p.status
            .as_ref()
            .map(|s| (s.ready.ok, s.ready.reason.clone()))
    };
    for (name, f, expected) in [
        (
            "the Secret written in this pass: Ready",
            with(facts(), |f| {
                wanted(f);
                f.observed = Some(observed("available"));
            }),
            (true, "Available"),
        ),
        (
            "the cluster's password not known: not Ready",
            with(facts(), |f| {
                wanted(f);
                f.observed = Some(observed("available"));
                f.extra.password = None;
            }),
            (false, "ConnectionSecretPending"),
        ),
        (
            "no address from RDS yet: not Ready",
            with(facts(), |f| {
                wanted(f);
                let mut o = observed("available");
                o.endpoint = None;
                f.observed = Some(o);
            }),
            (false, "ConnectionSecretPending"),
        ),
        (
            "no Secret asked for, no password: Ready as RDS has it",
            with(facts(), |f| {
                f.observed = Some(observed("available"));
                f.extra.password = None;
            }),
            (true, "Available"),
        ),
    ] {
        let got = ready(&plan(&f));
        assert_eq!(got, Some((expected.0, expected.1.to_owned())), "{name}");
    }
}

/// Ready over a list (issue 76): an endpoint RDS reports available that reaches no instance
/// takes no connection, so it is not Ready.
#[test]
fn ready_only_while_the_endpoint_reaches_an_instance() {
    let over_all = |endpoint_type: &str, excluded: &[&str]| {
        with(facts(), |f| {
            let mut o = observed("available");
            o.endpoint_type = Some(endpoint_type.into());
            o.static_members = vec![];
            o.excluded_members = excluded.iter().map(|e| e.to_string()).collect();
            f.observed = Some(o);
            f.extra.members = Some(Ok((vec![], o_excluded(excluded))));
            f.object.spec.endpoint_type = match endpoint_type {
                "ANY" => EndpointType::Any,
                _ => EndpointType::Reader,
            };
            f.object.spec.static_members = vec![];
        })
    };
    let no_readers = |f: &mut Facts| {
        if let Some(Ok(c)) = f.extra.cluster.as_mut() {
            c.members.retain(|m| m.is_cluster_writer);
        }
    };
    let rows: Vec<(&str, Facts, (bool, &str))> = vec![
        (
            "static members (DBInstances that were Ready)",
            with(facts(), |f| f.observed = Some(observed("available"))),
            (true, "Available"),
        ),
        (
            "READER over all members, the cluster has a reader",
            over_all("READER", &[]),
            (true, "Available"),
        ),
        (
            "READER over all members, the cluster has only its writer",
            with(over_all("READER", &[]), no_readers),
            (false, "NoMembers"),
        ),
        (
            "READER over all but the only reader",
            over_all("READER", &["coffee-r1"]),
            (false, "NoMembers"),
        ),
        (
            "ANY over all but the reader: the writer is reached",
            over_all("ANY", &["coffee-r1"]),
            (true, "Available"),
        ),
        (
            "ANY over all but both",
            over_all("ANY", &["coffee-r1", "coffee-w"]),
            (false, "NoMembers"),
        ),
        (
            "READER over all members, the only reader creating",
            with(over_all("READER", &[]), |f| {
                state(f, "coffee-r1", Some("creating"))
            }),
            (false, "NoMembers"),
        ),
        (
            "READER over all members, the reader's state not known: taken to serve",
            with(over_all("READER", &[]), |f| state(f, "coffee-r1", None)),
            (true, "Available"),
        ),
        (
            "its static member rebooting",
            with(facts(), |f| {
                f.observed = Some(observed("available"));
                state(f, "coffee-r1", Some("rebooting"));
            }),
            (false, "NoMembers"),
        ),
        (
            "creating: RDS's state stays the reason",
            with(over_all("READER", &["coffee-r1"]), |f| {
                f.observed.as_mut().unwrap().status = "creating".into()
            }),
            (false, "Busy"),
        ),
    ];
    for (name, f, (ok, reason)) in rows {
        let p = plan(&f);
        let ready = &p.status.as_ref().expect("a status").ready;
        assert_eq!((ready.ok, ready.reason.as_str()), (ok, reason), "{name}");
        assert!(
            own(&p).iter().all(|s| !matches!(s, Own::Modify { .. })),
            "{name}"
        );
    }
}

/// The cluster's status gives member `id` this state.
fn state(f: &mut Facts, id: &str, state: Option<&str>) {
    if let Some(Ok(c)) = f.extra.cluster.as_mut() {
        for m in c
            .members
            .iter_mut()
            .filter(|m| m.db_instance_identifier == id)
        {
            m.state = state.map(str::to_owned);
        }
    }
}

fn o_excluded(excluded: &[&str]) -> Vec<String> {
    excluded.iter().map(|e| e.to_string()).collect()
}
