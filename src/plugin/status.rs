//! `kubectl rds status NAME`: one screen for a database, a DBInstance or a DBCluster of the name:
//! its state and conditions, its cluster and members with their roles, its replicas, a
//! blue/green deployment's green, its global database and regions, its snapshots and their
//! schedules, the proxies in front of it, its pending maintenance, the last drift and what was
//! done of it, its health, and the keys of its connection Secret (never their values). Read
//! (`gather`), then made into a [`View`] (pure), then drawn as a tree (pure) or written as JSON.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use serde::Serialize;

use rds_operator::crd::Reported;
use rds_operator::database::health::HealthStatus;
use rds_operator::database::status::DatabaseStatus;
use rds_operator::dbcluster::DBCluster;
use rds_operator::dbclustersnapshot::DBClusterSnapshot;
use rds_operator::dbinstance::DBInstance;
use rds_operator::dbproxy::DBProxy;
use rds_operator::dbsnapshot::DBSnapshot;
use rds_operator::dbuser::DBUser;
use rds_operator::globalcluster::GlobalCluster;

/// What the namespace holds that a database's screen names.
#[derive(Default)]
pub struct Namespace {
    pub instances: Vec<DBInstance>,
    pub snapshots: Vec<DBSnapshot>,
    pub cluster_snapshots: Vec<DBClusterSnapshot>,
    pub proxies: Vec<DBProxy>,
    pub globals: Vec<GlobalCluster>,
    pub users: Vec<DBUser>,
    /// The connection Secret's name and keys, when it exists.
    pub secret: Option<SecretView>,
}

/// One database, as the screen shows it (`-o json` writes it as is).
#[derive(Serialize, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct View {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub identifier: Option<String>,
    /// RDS's status of it.
    pub state: Option<String>,
    pub engine_version: Option<String>,
    pub endpoint: Option<String>,
    pub reader_endpoint: Option<String>,
    pub conditions: Vec<ConditionView>,
    /// Whether it runs or is stopped, and by what (spec.activation, its schedule).
    pub activation: Option<String>,
    /// The DBUsers of the namespace in it: "name (username, auth)".
    pub users: Vec<String>,
    /// A member's DBCluster.
    pub cluster: Option<String>,
    pub members: Vec<MemberView>,
    /// A replica's source.
    pub source: Option<String>,
    pub replicas: Vec<String>,
    pub blue_green: Option<BlueGreenView>,
    pub global: Option<GlobalView>,
    pub snapshots: Vec<SnapshotView>,
    pub proxies: Vec<String>,
    pub maintenance: Vec<String>,
    pub last_drift: Option<String>,
    pub health: Option<HealthStatus>,
    pub alarms: Vec<String>,
    pub advisories: Vec<String>,
    pub secret: Option<SecretView>,
}

#[derive(Serialize, Debug, Default, PartialEq)]
pub struct ConditionView {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
}

#[derive(Serialize, Debug, Default, PartialEq)]
pub struct MemberView {
    pub identifier: String,
    /// writer or reader.
    pub role: String,
    /// The DBInstance of the namespace that is it, if any.
    pub object: Option<String>,
}

#[derive(Serialize, Debug, Default, PartialEq)]
pub struct BlueGreenView {
    pub deployment: String,
    pub status: String,
    pub green: Option<String>,
    pub old: Option<String>,
}

#[derive(Serialize, Debug, Default, PartialEq)]
pub struct GlobalView {
    pub name: String,
    pub writer: Option<String>,
    /// (cluster, region, role).
    pub members: Vec<(String, String, String)>,
}

#[derive(Serialize, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotView {
    pub name: String,
    pub state: Option<String>,
    pub created: Option<String>,
    /// Its schedule's cron, for one that takes snapshots on a schedule.
    pub schedule: Option<String>,
}

#[derive(Serialize, Debug, Default, PartialEq, Clone)]
pub struct SecretView {
    pub name: String,
    pub keys: Vec<String>,
}

/// Reads the database `name` of `namespace` and what its screen names; None when the namespace
/// has neither a DBInstance nor a DBCluster of the name.
pub async fn gather(client: &Client, namespace: &str, name: &str) -> anyhow::Result<Option<View>> {
    let instances: Api<DBInstance> = Api::namespaced(client.clone(), namespace);
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), namespace);
    let (db, cluster) = (
        instances.get_opt(name).await?,
        clusters.get_opt(name).await?,
    );
    let secret_name = match (&db, &cluster) {
        (Some(db), _) => secret_name(&db.spec.connection, db.status.as_ref().map(|s| &s.common)),
        (None, Some(c)) => secret_name(&c.spec.connection, c.status.as_ref().map(|s| &s.common)),
        (None, None) => return Ok(None),
    };
    let all = ListParams::default();
    let ns = Namespace {
        instances: instances.list(&all).await?.items,
        snapshots: list::<DBSnapshot>(client, namespace).await?,
        cluster_snapshots: list::<DBClusterSnapshot>(client, namespace).await?,
        proxies: list::<DBProxy>(client, namespace).await?,
        globals: list::<GlobalCluster>(client, namespace).await?,
        users: list::<DBUser>(client, namespace).await?,
        secret: match secret_name {
            Some(s) => secret_keys(client, namespace, &s).await?,
            None => None,
        },
    };
    Ok(Some(match (db, cluster) {
        (Some(db), _) => of_instance(&db, &ns),
        (None, Some(c)) => of_cluster(&c, &ns),
        (None, None) => unreachable!("returned above"),
    }))
}

async fn list<K>(client: &Client, namespace: &str) -> anyhow::Result<Vec<K>>
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    Ok(api.list(&ListParams::default()).await?.items)
}

fn secret_name(
    connection: &rds_operator::database::spec::Connection,
    status: Option<&DatabaseStatus>,
) -> Option<String> {
    (status.and_then(|s| s.connection_secret.clone())).or_else(|| {
        connection
            .connection_secret
            .as_ref()
            .map(|c| c.name.clone())
    })
}

/// The Secret's keys, sorted; its values are dropped here, never shown.
async fn secret_keys(
    client: &Client,
    namespace: &str,
    name: &str,
) -> anyhow::Result<Option<SecretView>> {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    Ok(api.get_opt(name).await?.map(|s| SecretView {
        name: name.to_owned(),
        keys: s.data.unwrap_or_default().into_keys().collect(),
    }))
}

fn conditions(reported: Option<&Reported>) -> Vec<ConditionView> {
    (reported.into_iter().flat_map(|r| r.conditions.iter()))
        .map(|c| ConditionView {
            type_: c.type_.clone(),
            status: c.status.clone(),
            reason: c.reason.clone(),
            message: c.message.clone(),
        })
        .collect()
}

/// What both kinds' screens show alike: the object's names and conditions, how it runs, its
/// DBUsers and Secret, and its shared status (`common`).
fn base<K: kube::Resource>(
    (kind, object): (&str, &K),
    run: &rds_operator::database::activation::ActivationSpec,
    status: Option<(&Reported, &DatabaseStatus)>,
    ns: &Namespace,
) -> View {
    let name = object.meta().name.clone().unwrap_or_default();
    let stopped_at = status.and_then(|(_, c)| c.stopped_at.as_deref());
    let mut view = View {
        kind: kind.into(),
        namespace: object.meta().namespace.clone().unwrap_or_default(),
        conditions: conditions(status.map(|(r, _)| r)),
        activation: activation(run, stopped_at),
        users: users(ns, &name, kind == "DBCluster"),
        secret: ns.secret.clone(),
        name,
        ..Default::default()
    };
    if let Some((_, shared)) = status {
        common(&mut view, shared);
    }
    view
}

/// What a database's shared status gives: endpoint, version, maintenance, health, alarms.
fn common(view: &mut View, common: &DatabaseStatus) {
    view.endpoint = (common.endpoint.as_ref()).map(|e| format!("{}:{}", e.address, e.port));
    view.engine_version = common.engine_version.clone();
    view.maintenance = (common.pending_maintenance_actions.iter())
        .map(|a| {
            let when =
                (a.current_apply_date.as_deref()).map_or(String::new(), |d| format!(", {d}"));
            let opt_in = a.opt_in_status.as_deref().unwrap_or("not opted in");
            format!("{} ({opt_in}{when})", a.action)
        })
        .collect();
    view.health = common.health.clone();
    view.alarms = (common.alarms.iter())
        .map(|a| format!("{} {}", a.metric, a.state))
        .collect();
}

/// What runs it: spec.activation, or its schedule's windows and time zone, and since when it is
/// stopped.
fn activation(
    run: &rds_operator::database::activation::ActivationSpec,
    stopped_at: Option<&str>,
) -> Option<String> {
    let since = stopped_at.map_or(String::new(), |t| format!(", stopped at {t}"));
    if let Some(schedule) = &run.activation_schedule {
        let windows: Vec<String> = (schedule.running.iter())
            .map(|w| format!("\"{}\" to \"{}\"", w.start, w.stop))
            .collect();
        let zone = schedule.time_zone.as_deref().unwrap_or("UTC");
        return Some(format!("running {} ({zone}){since}", windows.join(", ")));
    }
    let activation = serde_json::to_value(run.activation.as_ref()?).ok()?;
    Some(format!("{}{since}", activation.as_str()?))
}

/// The DBUsers of the namespace in the database `name` (a DBInstance's, or a DBCluster's).
fn users(ns: &Namespace, name: &str, cluster: bool) -> Vec<String> {
    (ns.users.iter())
        .filter(|u| {
            let of = match cluster {
                true => u.spec.db_cluster_ref.as_ref(),
                false => u.spec.db_instance_ref.as_ref(),
            };
            of.is_some_and(|r| r.name == name)
        })
        .map(|u| {
            let username = (u.status.as_ref().and_then(|s| s.username.clone()))
                .or_else(|| u.spec.username.clone())
                .unwrap_or_else(|| u.name_any());
            let auth = serde_json::to_value(u.spec.auth.unwrap_or_default());
            let auth = auth
                .ok()
                .and_then(|a| a.as_str().map(str::to_owned))
                .unwrap_or_default();
            format!("{} ({username}, {auth})", u.name_any())
        })
        .collect()
}

fn drift(last: Option<&rds_operator::database::parts::DriftRecord>) -> Option<String> {
    let last = last?;
    let fields: Vec<String> = (last.fields.iter())
        .map(|f| format!("{} {} -> {}", f.field, f.observed, f.desired))
        .collect();
    Some(format!(
        "{} {}: {}",
        last.time,
        last.action,
        fields.join(", ")
    ))
}

/// A DBInstance's screen.
pub fn of_instance(db: &DBInstance, ns: &Namespace) -> View {
    let name = db.name_any();
    let status = db.status.as_ref();
    let shared = status.map(|s| (&s.reported, &s.common));
    let mut view = View {
        identifier: status.and_then(|s| s.db_instance_identifier.clone()),
        state: status.and_then(|s| s.db_instance_status.clone()),
        cluster: db.spec.db_cluster_ref.as_ref().map(|r| r.name.clone()),
        source: (db.spec.replica_of.as_ref()).and_then(|r| r.name.clone()),
        replicas: (ns.instances.iter())
            .filter(|i| (i.spec.replica_of.as_ref()).and_then(|r| r.name.as_deref()) == Some(&name))
            .map(|i| i.name_any())
            .collect(),
        last_drift: drift(status.and_then(|s| s.last_drift.as_ref())),
        advisories: status.map(|s| s.advisories.clone()).unwrap_or_default(),
        ..base(("DBInstance", db), &db.spec.run, shared, ns)
    };
    if let Some(s) = status {
        view.blue_green = (s.blue_green.as_ref())
            .map(|b| blue_green(&b.deployment, &b.green_instance, &b.old_instance));
    }
    view.snapshots = (ns.snapshots.iter())
        .filter(|s| (s.spec.source.as_ref()).and_then(|r| r.name.as_deref()) == Some(&name))
        .map(|s| {
            let report = s.status.as_ref().map(|st| &st.report);
            snapshot(s.name_any(), report, &s.spec.options)
        })
        .collect();
    view.proxies = proxies(ns, |t| {
        t.db_instance_ref.as_ref().map(|r| r.name.as_str()) == Some(&name)
    });
    view
}

/// A DBCluster's screen: its members (the DBInstances of the namespace that are them, by name),
/// its global database.
pub fn of_cluster(c: &DBCluster, ns: &Namespace) -> View {
    let name = c.name_any();
    let status = c.status.as_ref();
    let shared = status.map(|s| (&s.reported, &s.common));
    let mut view = View {
        identifier: status.and_then(|s| s.db_cluster_identifier.clone()),
        state: status.and_then(|s| s.status.clone()),
        reader_endpoint: status.and_then(|s| s.reader_endpoint.clone()),
        last_drift: status.and_then(|s| s.last_drift.clone()),
        ..base(("DBCluster", c), &c.spec.run, shared, ns)
    };
    if let Some(s) = status {
        view.members = (s.members.iter())
            .map(|m| MemberView {
                identifier: m.db_instance_identifier.clone(),
                role: (if m.is_cluster_writer {
                    "writer"
                } else {
                    "reader"
                })
                .into(),
                object: (ns.instances.iter())
                    .find(|i| {
                        let id = i
                            .status
                            .as_ref()
                            .and_then(|s| s.db_instance_identifier.as_ref());
                        id == Some(&m.db_instance_identifier)
                    })
                    .map(|i| i.name_any()),
            })
            .collect();
        view.blue_green = (s.blue_green.as_ref())
            .map(|b| blue_green(&b.deployment, &b.green_cluster, &b.old_cluster));
    }
    view.global = global(c, ns);
    view.snapshots = (ns.cluster_snapshots.iter())
        .filter(|s| (s.spec.source.as_ref()).and_then(|r| r.name.as_deref()) == Some(&name))
        .map(|s| {
            let report = s.status.as_ref().map(|st| &st.report);
            snapshot(s.name_any(), report, &s.spec.options)
        })
        .collect();
    view.proxies = proxies(ns, |t| {
        t.db_cluster_ref.as_ref().map(|r| r.name.as_str()) == Some(&name)
    });
    view
}

fn blue_green(
    d: &rds_operator::database::blue_green::DeploymentStatus,
    green: &Option<String>,
    old: &Option<String>,
) -> BlueGreenView {
    BlueGreenView {
        deployment: d.deployment_identifier.clone(),
        status: d.status.clone(),
        green: green.clone(),
        old: old.clone(),
    }
}

/// A snapshot object's line: its state, when it was taken, its schedule.
fn snapshot(
    name: String,
    report: Option<&rds_operator::snapshot::SnapshotReport>,
    options: &rds_operator::snapshot::SnapshotOptions,
) -> SnapshotView {
    SnapshotView {
        name,
        state: report.and_then(|r| r.state.clone()),
        created: report.and_then(|r| r.snapshot_create_time.clone()),
        schedule: (options.schedule.as_ref()).map(|c| c.cron.clone()),
    }
}

fn proxies(
    ns: &Namespace,
    targets: impl Fn(&rds_operator::dbproxy::ProxyTarget) -> bool,
) -> Vec<String> {
    (ns.proxies.iter())
        .filter(|p| p.spec.targets.iter().any(&targets))
        .map(|p| p.name_any())
        .collect()
}

/// The GlobalCluster of the namespace the cluster is a member of (its source, a secondary's
/// reference, or a member by identifier).
fn global(c: &DBCluster, ns: &Namespace) -> Option<GlobalView> {
    let name = c.name_any();
    let identifier = c
        .status
        .as_ref()
        .and_then(|s| s.db_cluster_identifier.clone());
    let by_ref = c.spec.global_cluster_ref.as_ref().map(|r| r.name.clone());
    let g = ns.globals.iter().find(|g| {
        let members = g.status.as_ref().map_or(&[][..], |s| &s.members[..]);
        Some(g.name_any()) == by_ref
            || g.spec.source_db_cluster_ref.as_ref().map(|r| &r.name) == Some(&name)
            || members
                .iter()
                .any(|m| Some(&m.db_cluster_identifier) == identifier.as_ref())
    })?;
    let status = g.status.as_ref();
    Some(GlobalView {
        name: g.name_any(),
        writer: status.and_then(|s| s.writer.clone()),
        members: (status.map_or(&[][..], |s| &s.members[..]).iter())
            .map(|m| {
                (
                    m.db_cluster_identifier.clone(),
                    m.region.clone(),
                    m.role.clone(),
                )
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object<K: serde::de::DeserializeOwned>(value: serde_json::Value) -> K {
        serde_json::from_value(value).expect("a valid object")
    }

    /// A cluster of a writer and a reader, a member DBInstance of the namespace, a blue/green
    /// deployment awaiting approval, a global database, a scheduled snapshot, a proxy, pending
    /// maintenance, a drift put back, health, an alarm and its Secret's keys.
    fn cluster_namespace() -> (DBCluster, Namespace) {
        let cluster: DBCluster = object(serde_json::json!({
            "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBCluster",
            "metadata": {"name": "coffee", "namespace": "shop"},
            "spec": {"engine": "aurora-mysql", "masterUsername": "admin",
                     "connectionSecret": {"name": "coffee-db"},
                     "activation": "Running"},
            "status": {
                "dbClusterIdentifier": "coffee", "status": "available",
                "endpoint": {"address": "coffee.cluster-x.rds.amazonaws.com", "port": 3306},
                "readerEndpoint": "coffee.cluster-ro-x.rds.amazonaws.com",
                "engineVersion": "8.0.mysql_aurora.3.08.0",
                "conditions": [
                    {"type": "Ready", "status": "True", "reason": "Available", "message": "RDS reports the cluster available",
                     "lastTransitionTime": "2026-12-06T10:00:00Z"},
                    {"type": "Synced", "status": "False", "reason": "SwitchoverAwaitingApproval",
                     "message": "blue/green deployment bgd-1 is AVAILABLE; approve it", "lastTransitionTime": "2026-12-06T10:00:00Z"}],
                "members": [{"dbInstanceIdentifier": "coffee-1", "isClusterWriter": true},
                            {"dbInstanceIdentifier": "coffee-2", "isClusterWriter": false}],
                "blueGreen": {"deploymentIdentifier": "bgd-1", "deploymentName": "coffee-2", "status": "AVAILABLE",
                              "greenCluster": "coffee-green-abc"},
                "pendingMaintenanceActions": [{"action": "system-update", "optInStatus": "next-maintenance",
                                               "currentApplyDate": "2026-12-08T03:00:00Z"}],
                "lastDrift": "2026-12-06T09:00:00Z Corrected: backupRetentionPeriod 1 -> 7",
                "health": {"replicaLagSeconds": 0, "cpuPercent": 4, "connections": 2},
                "alarms": [{"name": "rds-operator:cluster:coffee:CPUUtilization", "metric": "CPUUtilization", "state": "OK"}]
            }
        }));
        let member: DBInstance = object(serde_json::json!({
            "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBInstance",
            "metadata": {"name": "coffee-writer", "namespace": "shop"},
            "spec": {"dbInstanceIdentifier": "coffee-1", "engine": "aurora-mysql", "dbInstanceClass": "db.r6g.large",
                     "dbClusterRef": {"name": "coffee"}},
            "status": {"dbInstanceIdentifier": "coffee-1"}
        }));
        let global: GlobalCluster = object(serde_json::json!({
            "apiVersion": "rds.operator.rs/v1alpha1", "kind": "GlobalCluster",
            "metadata": {"name": "coffee-global", "namespace": "shop"},
            "spec": {"sourceDBClusterRef": {"name": "coffee"}},
            "status": {"writer": "coffee", "members": [
                {"dbClusterIdentifier": "coffee", "region": "us-east-1", "role": "primary"},
                {"dbClusterIdentifier": "coffee-eu", "region": "eu-west-1", "role": "secondary"}]}
        }));
        let snapshot: DBClusterSnapshot = object(serde_json::json!({
            "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBClusterSnapshot",
            "metadata": {"name": "coffee-nightly", "namespace": "shop"},
            "spec": {"source": {"name": "coffee"}, "schedule": {"cron": "0 3 * * *", "keep": 7}},
            "status": {"state": "available", "snapshotCreateTime": "2026-12-06T03:00:12Z"}
        }));
        let proxy: DBProxy = object(serde_json::json!({
            "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBProxy",
            "metadata": {"name": "coffee-proxy", "namespace": "shop"},
            "spec": {"engineFamily": "MYSQL", "targets": [{"dbClusterRef": {"name": "coffee"}}],
                     "auth": {"secretARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:db"},
                     "vpcSubnetIDs": ["subnet-1", "subnet-2"], "roleARN": "arn:aws:iam::123456789012:role/proxy"}
        }));
        let user: DBUser = object(serde_json::json!({
            "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBUser",
            "metadata": {"name": "coffee-app", "namespace": "shop"},
            "spec": {"dbClusterRef": {"name": "coffee"}, "username": "coffee_app", "auth": "IAM"}
        }));
        let ns = Namespace {
            users: vec![user],
            instances: vec![member],
            cluster_snapshots: vec![snapshot],
            proxies: vec![proxy],
            globals: vec![global],
            secret: Some(SecretView {
                name: "coffee-db".into(),
                keys: [
                    "dbname",
                    "host",
                    "password",
                    "port",
                    "readerHost",
                    "username",
                ]
                .map(String::from)
                .to_vec(),
            }),
            ..Default::default()
        };
        (cluster, ns)
    }

    /// The screen stays as it is (src/plugin/golden/status-cluster.txt); a change to it is a
    /// change of that file, in review.
    #[test]
    fn the_status_screen_of_a_cluster_is_the_golden_file() {
        let (cluster, ns) = cluster_namespace();
        let shown = crate::screen::render(&of_cluster(&cluster, &ns), false);
        let golden = include_str!("golden/status-cluster.txt");
        assert_eq!(shown, golden, "\n{shown}");
    }

    /// The JSON has every part, and the Secret's keys, never a value.
    #[test]
    fn the_json_names_the_members_roles_and_the_secrets_keys_only() {
        let (cluster, ns) = cluster_namespace();
        let view = of_cluster(&cluster, &ns);
        let json = serde_json::to_value(&view).unwrap();
        assert_eq!(json["members"][0]["role"], "writer");
        assert_eq!(json["members"][0]["object"], "coffee-writer");
        assert_eq!(json["global"]["members"][1][1], "eu-west-1");
        assert_eq!(json["snapshots"][0]["schedule"], "0 3 * * *");
        assert_eq!(json["proxies"][0], "coffee-proxy");
        assert_eq!(json["blueGreen"]["green"], "coffee-green-abc");
        assert!(
            json["secret"]["keys"]
                .as_array()
                .unwrap()
                .contains(&"password".into())
        );
        assert!(!json.to_string().contains("hunter2"));
    }

    /// Coloured on a terminal: Ready True in green, Synced False in red.
    #[test]
    fn colour_marks_the_states() {
        let (cluster, ns) = cluster_namespace();
        let shown = crate::screen::render(&of_cluster(&cluster, &ns), true);
        assert!(shown.contains("Ready \x1b[32mTrue\x1b[0m"), "{shown}");
        assert!(shown.contains("Synced \x1b[31mFalse\x1b[0m"), "{shown}");
    }
}
