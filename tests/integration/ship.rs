//! Shipping: the Helm chart, the plain manifests, least-privilege RBAC, metrics, health and
//! leader election, on the real API server.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Secret, Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, PostParams};
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use crate::common::TIMEOUT;
use crate::common::dbinstance;
use crate::common::{self, Operator, is_ready, wait_dbi, wait_for};

fn chart() -> String {
    format!("{}/helm/rds-operator", common::REPO)
}

#[test]
fn chart_lints_renders_and_refuses_bad_values() {
    let helm = common::tool("helm");
    let chart = chart();
    let (ok, out, err) = common::run(&helm, &["lint", "--strict", &chart]);
    assert!(ok, "helm lint --strict (defaults): {out}{err}");
    assert!(!out.contains("icon"), "the chart has its icon: {out}");
    let custom = [
        "--set",
        "watchNamespaces={shop,billing}",
        "--set",
        "leaderElection.enabled=false",
        "--set",
        "metrics.serviceMonitor.enabled=true",
        "--set",
        "aws.endpointUrl=http://localstack:4566",
        "--set",
        "aws.credentials.secretName=aws-creds",
        "--set",
        "serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::123456789012:role/rds",
        "--set",
        "log.format=text",
        "--set",
        "replicaCount=2",
        "--set",
        "tenancy.grantAdoption={shop,billing}",
        "--set",
        "tenancy.namespaceReadBudget=120",
    ];
    let mut lint = vec!["lint", "--strict", chart.as_str()];
    lint.extend(custom);
    let (ok, out, err) = common::run(&helm, &lint);
    assert!(ok, "helm lint (custom values): {out}{err}");
    let mut template = vec!["template", "rds", chart.as_str(), "--namespace", "ops"];
    template.extend(custom);
    let (ok, rendered, err) = common::run(&helm, &template);
    assert!(ok, "helm template (custom values): {err}");
    assert!(rendered.contains("kind: ServiceMonitor"));
    assert!(
        rendered.contains("- --grant-adoption=shop,billing"),
        "{rendered}"
    );
    assert!(rendered.contains("- --namespace-read-budget=120"));
    assert!(
        !rendered.contains("--grant-restore"),
        "none granted by default"
    );
    let kinds = |text: &str, kind: &str| {
        text.lines()
            .filter(|l| *l == format!("kind: {kind}"))
            .count()
    };
    // With watchNamespaces, what is namespaced is granted by Roles; the one ClusterRole is the
    // accounts' (AWSAccounts, namespaces' metadata, listing users), which grants no Secret.
    assert_eq!(
        kinds(&rendered, "ClusterRole"),
        1,
        "watchNamespaces gives Roles, and only the accounts' ClusterRole"
    );
    let cluster_role = (rendered.split("\n---\n"))
        .find(|doc| doc.contains("\nkind: ClusterRole\n"))
        .unwrap_or_default();
    assert!(
        cluster_role.contains("name: rds-rds-operator-ops-accounts"),
        "{cluster_role}"
    );
    assert!(
        !cluster_role.contains("secrets"),
        "the ClusterRole grants no Secret: {cluster_role}"
    );
    assert_eq!(
        kinds(&rendered, "Role"),
        4,
        "one Role per watched namespace, one for the hash key Secret, one for the accounts' Secrets in the release namespace, no lease Role"
    );
    assert!(rendered.contains("- --namespace=shop") && rendered.contains("- --namespace=billing"));
    assert!(!rendered.contains("--leader-elect"));
    assert!(rendered.contains("AWS_ENDPOINT_URL") && rendered.contains("name: aws-creds"));
    assert!(rendered.contains("eks.amazonaws.com/role-arn"));
    let (ok, defaults, err) = common::run(
        &helm,
        &["template", "rds", chart.as_str(), "--namespace", "ops"],
    );
    assert!(ok, "{err}");
    for needle in [
        "readOnlyRootFilesystem: true",
        "allowPrivilegeEscalation: false",
        "runAsNonRoot: true",
        "path: /healthz",
        "path: /readyz",
        "--leader-elect",
        "\nkind: ClusterRole\n",
        "coordination.k8s.io",
        "--log-format=json",
    ] {
        assert!(
            defaults.contains(needle),
            "default rendering lacks {needle:?}"
        );
    }
    assert!(
        !defaults.contains("--events-queue-url") && !defaults.contains("--safety-net-interval"),
        "no event feed unless asked for"
    );

    // The values platform teams compose with.
    let digest = format!("image.digest=sha256:{}", "a".repeat(64));
    let composed = [
        "--set",
        "fullnameOverride=ops-rds",
        "--set",
        "commonLabels.team=platform",
        "--set",
        digest.as_str(),
        "--set",
        "extraEnv[0].name=HTTPS_PROXY",
        "--set",
        "extraEnv[0].value=http://proxy:3128",
        "--set",
        "extraArgs={--aws-attempt-timeout=20s}",
        "--set",
        "podSecurityContext.runAsNonRoot=true",
        "--set",
        "podSecurityContext.runAsUser=null",
        "--set",
        "podSecurityContext.runAsGroup=null",
        "--set",
        "replicaCount=2",
        "--set",
        "podDisruptionBudget.enabled=true",
        "--set",
        "topologySpreadConstraints[0].maxSkew=1",
        "--set",
        "topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone",
        "--set",
        "topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway",
        "--set",
        "metrics.serviceMonitor.enabled=true",
        "--set",
        "metrics.serviceMonitor.scrapeTimeout=10s",
        "--set",
        "metrics.prometheusRule.enabled=true",
        "--set",
        "events.queueUrl=https://sqs.eu-west-1.amazonaws.com/123456789012/rds-operator-events",
        "--set",
        "events.safetyNetInterval=15m",
    ];
    let mut template = vec!["template", "rds", chart.as_str(), "--namespace", "ops"];
    template.extend(composed);
    let (ok, rendered, err) = common::run(&helm, &template);
    assert!(ok, "helm template (composed values): {err}");
    for needle in [
        "name: ops-rds\n",
        "team: platform",
        "rds-operator@sha256:aaaa",
        "name: HTTPS_PROXY",
        "\"--aws-attempt-timeout=20s\"",
        "kind: PodDisruptionBudget",
        "topologyKey: topology.kubernetes.io/zone",
        "scrapeTimeout: 10s",
        "kind: PrometheusRule",
        "alert: RdsOperatorPollStale",
        "alert: RdsOperatorLocationUnavailable",
        "rds_operator_location_breaker{state!=\"closed\"}",
        "--events-queue-url=https://sqs.eu-west-1.amazonaws.com/123456789012/rds-operator-events",
        "--safety-net-interval=15m",
        "alert: RdsOperatorEventFeedDown",
    ] {
        assert!(
            rendered.contains(needle),
            "composed rendering lacks {needle:?}"
        );
    }
    assert!(
        !rendered.contains("runAsUser"),
        "runAsUser can be dropped for OpenShift"
    );
    assert_eq!(kinds(&rendered, "PodDisruptionBudget"), 1);
    let (_, single, _) = common::run(
        &helm,
        &[
            "template",
            "rds",
            chart.as_str(),
            "--set",
            "podDisruptionBudget.enabled=true",
        ],
    );
    assert_eq!(
        kinds(&single, "PodDisruptionBudget"),
        0,
        "no PDB for one replica"
    );

    // As a subchart of an umbrella chart, with global values and a condition.
    let umbrella = std::env::temp_dir().join(format!("rds-umbrella-{}", std::process::id()));
    std::fs::create_dir_all(umbrella.join("charts")).expect("umbrella dir");
    std::fs::write(
        umbrella.join("Chart.yaml"),
        format!(
            "apiVersion: v2\nname: platform\nversion: 0.1.0\ndependencies:\n  - name: rds-operator\n    version: \">0.0.0-0\"\n    repository: file://{chart}\n    condition: rds-operator.enabled\n"
        ),
    )
    .expect("Chart.yaml");
    std::fs::write(
        umbrella.join("values.yaml"),
        "global:\n  imageRegistry: registry.example.com\nrds-operator:\n  enabled: true\n  watchNamespaces: [shop]\n",
    )
    .expect("values.yaml");
    let dir = umbrella.to_str().unwrap();
    let (ok, out, err) = common::run(&helm, &["dependency", "update", dir]);
    assert!(ok, "helm dependency update: {out}{err}");
    let (ok, rendered, err) =
        common::run(&helm, &["template", "platform", dir, "--namespace", "ops"]);
    assert!(
        ok,
        "the chart renders as a subchart with global and enabled: {err}"
    );
    assert!(rendered.contains("kind: Deployment") && rendered.contains("--namespace=shop"));
    let (ok, rendered, _) = common::run(
        &helm,
        &[
            "template",
            "platform",
            dir,
            "--set",
            "rds-operator.enabled=false",
        ],
    );
    assert!(
        ok && !rendered.contains("kind: Deployment"),
        "the condition turns it off"
    );
    let _ = std::fs::remove_dir_all(&umbrella);

    // Values that break the schema are refused, readably.
    for (set, expected) in [
        ("log.format=xml", "/log/format"),
        ("driftInterval=soon", "/driftInterval"),
        ("aws.region=Mars", "/aws/region"),
        ("replicaCount=-1", "/replicaCount"),
        ("unknownKey=1", "unknownKey"),
        ("tenancy.grantRestore={Team_A}", "/tenancy/grantRestore"),
        (
            "tenancy.namespaceReadBudget=-1",
            "/tenancy/namespaceReadBudget",
        ),
        ("events.queueUrl=rds-operator-events", "/events/queueUrl"),
        (
            "events.safetyNetInterval=often",
            "/events/safetyNetInterval",
        ),
    ] {
        let (ok, out, err) = common::run(&helm, &["template", "rds", chart.as_str(), "--set", set]);
        assert!(!ok, "{set} was accepted: {out}");
        assert!(
            err.contains("values don't meet the specifications of the schema")
                && err.contains(expected),
            "{set}: {err}"
        );
    }

    // The chart ships the same CRDs, every kind's, and admission policy as crds/.
    let read = |p: &str| std::fs::read_to_string(format!("{}/{p}", common::REPO)).unwrap();
    let names = |dir: &str| -> std::collections::BTreeSet<String> {
        (std::fs::read_dir(format!("{}/{dir}", common::REPO)).expect("a CRD folder"))
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|n| n.ends_with(".yaml") && !n.ends_with("-policy.yaml"))
            .collect()
    };
    let (chart_crds, crds) = (names("helm/rds-operator/crds"), names("crds"));
    assert_eq!(
        chart_crds, crds,
        "the chart ships every kind's CRD: run `make crds`"
    );
    assert_eq!(
        crds.len(),
        rds_operator::kinds::KINDS.len(),
        "one file a kind"
    );
    for file in &crds {
        assert_eq!(
            read(&format!("helm/rds-operator/crds/{file}")),
            read(&format!("crds/{file}")),
            "{file}: run `make crds`"
        );
    }
    let policy = read("crds/dbinstance-policy.yaml");
    let policy_body = &policy[policy.find("apiVersion").unwrap()..];
    // The chart names the policy after the release, so two releases do not collide.
    let template = read("helm/rds-operator/templates/admission-policy.yaml")
        .replace(r#"{{ include "rds-operator.fullname" . }}."#, "");
    assert!(template.contains(policy_body.trim_end()));

    // deploy/ is the chart's rendering.
    let out = tempfile::tempdir().unwrap();
    let script = format!("{}/helm/render-deploy.sh", common::REPO);
    let (ok, _, err) = common::run(
        std::path::Path::new(&script),
        &[out.path().to_str().unwrap()],
    );
    assert!(ok, "{err}");
    for file in [
        "crd.yaml",
        "service_account.yaml",
        "role.yaml",
        "role_binding.yaml",
        "operator.yaml",
        "grafana-dashboard.json",
    ] {
        let rendered = std::fs::read_to_string(out.path().join(file)).unwrap();
        assert!(
            rendered == read(&format!("deploy/{file}")),
            "deploy/{file} differs from the chart: run `make manifests`"
        );
    }
}

#[tokio::test]
async fn helm_install_then_the_operator_runs_as_its_service_account() {
    let client = common::client_with_crd().await;
    let release_ns = common::namespace(&client, "rds-system").await;
    let watched = common::namespace(&client, "shop").await;
    let elsewhere = common::namespace(&client, "other").await;
    common::secret(
        &client,
        &watched,
        "db-password",
        "password",
        "Sup3r-Secret-Passw0rd",
    )
    .await;
    common::secret(&client, &elsewhere, "not-yours", "token", "do-not-read").await;

    let (ok, out, err) = common::helm(&[
        "install",
        "rds-operator",
        &chart(),
        "--namespace",
        &release_ns,
        "--set",
        &format!("watchNamespaces={{{watched}}}"),
        "--set",
        "admissionPolicy.enabled=false",
        "--set",
        "leaderElection.leaseDuration=6s",
    ]);
    assert!(ok, "helm install: {out}{err}");

    // Every object is there.
    let sa: Api<ServiceAccount> = Api::namespaced(client.clone(), &release_ns);
    sa.get("rds-operator").await.expect("ServiceAccount");
    let deployment = Api::<Deployment>::namespaced(client.clone(), &release_ns)
        .get("rds-operator")
        .await
        .expect("Deployment");
    Api::<Service>::namespaced(client.clone(), &release_ns)
        .get("rds-operator-metrics")
        .await
        .expect("Service");
    Api::<Role>::namespaced(client.clone(), &watched)
        .get("rds-operator")
        .await
        .expect("Role in the watched namespace");
    Api::<RoleBinding>::namespaced(client.clone(), &watched)
        .get("rds-operator")
        .await
        .expect("RoleBinding");
    Api::<Role>::namespaced(client.clone(), &release_ns)
        .get("rds-operator-leader-election")
        .await
        .expect("lease Role");
    assert!(
        Api::<Role>::namespaced(client.clone(), &elsewhere)
            .get_opt("rds-operator")
            .await
            .unwrap()
            .is_none()
    );

    // The operator as a local process, with the Deployment's arguments and the ServiceAccount's token.
    let dir = tempfile::tempdir().unwrap();
    let (sa_client, sa_kubeconfig) =
        common::service_account_kubeconfig(&release_ns, "rds-operator", dir.path()).await;
    let container = &deployment.spec.unwrap().template.spec.unwrap().containers[0];
    let args: Vec<String> = container
        .args
        .clone()
        .unwrap()
        .into_iter()
        .filter(|a| !a.starts_with("--metrics-addr"))
        .map(|a| {
            if a.starts_with("--busy-poll-interval") {
                "--busy-poll-interval=1s".into()
            } else {
                a
            }
        })
        .collect();
    let operator = Operator::spawn(
        &args,
        &sa_kubeconfig,
        &[("POD_NAMESPACE", &release_ns), ("LOG_FORMAT", "json")],
    );
    wait_for("/readyz to answer 200", TIMEOUT, || {
        let r = operator.get("/readyz");
        async move { (r?.0 == 200).then_some(()) }
    })
    .await;
    assert_eq!(operator.get("/healthz").map(|r| r.0), Some(200));

    // The full lifecycle, with least privilege.
    let api: Api<DBInstance> = Api::namespaced(client.clone(), &watched);
    let id = common::unique("helm");
    api.create(
        &PostParams::default(),
        &dbinstance(
            "helm",
            &id,
            json!({"connectionSecret": {"name": "db-connection"}}),
        ),
    )
    .await
    .expect("create");
    wait_dbi(
        &api,
        "helm",
        "Ready as the ServiceAccount",
        TIMEOUT,
        is_ready,
    )
    .await;
    common::wait_for("the connection Secret", TIMEOUT, || {
        let client = client.clone();
        let watched = watched.clone();
        async move { common::secret_data(&client, &watched, "db-connection").await }
    })
    .await;
    common::delete_and_wait(&api, "helm").await;
    let rds = common::rds().await;
    assert!(common::describe(&rds, &id).await.is_none());

    // Metrics after the lifecycle.
    let (code, metrics) = operator.get("/metrics").expect("metrics");
    assert_eq!(code, 200);
    for needle in [
        // Calls are counted by the account id and region they were made in.
        "rds_operator_rds_api_calls_total{operation=\"CreateDBInstance\",outcome=\"ok\",account=\"123456789012\",region=\"us-east-1\"} 1",
        "rds_operator_rds_api_calls_total{operation=\"DeleteDBInstance\",outcome=\"ok\",account=\"123456789012\",region=\"us-east-1\"} 1",
        "rds_operator_rds_api_calls_total{operation=\"DescribeDBInstances\",outcome=\"ok\",account=\"123456789012\",region=\"us-east-1\"}",
        "rds_operator_reconciles_total{result=\"success\",kind=\"DBInstance\"}",
        "rds_operator_reconcile_duration_seconds_count",
        "rds_operator_is_leader 1",
        "rds_operator_build_info{version=",
        "rds_operator_observer_last_poll_timestamp_seconds ",
        "process_resident_memory_bytes ",
        "process_open_fds ",
    ] {
        assert!(
            metrics.contains(needle),
            "/metrics lacks {needle}:\n{metrics}"
        );
    }
    // JSON logs, each line about the resource naming it.
    let logs = operator.logs();
    let line = logs
        .lines()
        .find(|l| l.contains("created RDS instance"))
        .expect("a log line about the creation");
    let parsed: serde_json::Value = serde_json::from_str(line).expect("JSON log line");
    // The object as separate fields, for log queries (the span's own "name" key is its name).
    let span = &parsed["span"];
    assert_eq!(span["kind"], "DBInstance", "{parsed}");
    assert_eq!(span["namespace"], watched.as_str(), "{parsed}");
    assert_eq!(span["resource"], "helm", "{parsed}");
    assert!(!logs.contains("Sup3r-Secret-Passw0rd"));

    // Outside its RBAC: no Secrets of other namespaces, nor of its own.
    for ns in [&elsewhere, &release_ns] {
        let err = Api::<Secret>::namespaced(sa_client.clone(), ns)
            .list(&Default::default())
            .await
            .expect_err("denied");
        assert!(
            matches!(err, kube::Error::Api(ref e) if e.code == 403),
            "{err}"
        );
    }
    let err = Api::<Secret>::namespaced(sa_client.clone(), &elsewhere)
        .get("not-yours")
        .await
        .expect_err("denied");
    assert!(
        matches!(err, kube::Error::Api(ref e) if e.code == 403),
        "{err}"
    );

    // An operator pointed at a namespace its RBAC does not cover never syncs: alive, not ready.
    drop(operator);
    let mut stray = Operator::spawn(
        &["--namespace".into(), elsewhere.clone()],
        &sa_kubeconfig,
        &[("POD_NAMESPACE", &release_ns)],
    );
    wait_for("/healthz", TIMEOUT, || {
        let r = stray.get("/healthz");
        async move { (r?.0 == 200).then_some(()) }
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        stray.get("/readyz").map(|r| r.0),
        Some(503),
        "ready without a synced cache"
    );
    assert!(stray.running());
}

#[tokio::test]
async fn leader_election_lets_exactly_one_replica_reconcile() {
    let (client, ns, api, _rds) = common::setup("leader").await;
    let args = |ns: &str| -> Vec<String> {
        [
            "--namespace",
            ns,
            "--leader-elect",
            "--leader-election-namespace",
            ns,
            "--leader-election-lease-duration",
            "4s",
            "--busy-poll-interval",
            "1s",
            "--drift-interval",
            "5s",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect()
    };
    let mut first = Operator::spawn(&args(&ns), common::kubeconfig(), &[]);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut second = Operator::spawn(&args(&ns), common::kubeconfig(), &[]);
    let leases: Api<Lease> = Api::namespaced(client.clone(), &ns);
    let holder = wait_for("a lease holder", TIMEOUT, || async {
        leases
            .get_opt("rds-operator-leader")
            .await
            .ok()??
            .spec?
            .holder_identity
    })
    .await;

    let id1 = common::unique("leader");
    api.create(&PostParams::default(), &dbinstance("one", &id1, json!({})))
        .await
        .unwrap();
    wait_dbi(&api, "one", "Ready", TIMEOUT, is_ready).await;
    let calls = |op: &Operator| {
        op.get("/metrics")
            .map(|(_, m)| m.contains("rds_operator_rds_api_calls_total{"))
            .unwrap_or(false)
    };
    let (leader, follower) = if calls(&first) {
        (&mut first, &mut second)
    } else {
        (&mut second, &mut first)
    };
    assert!(calls(leader), "the leader made the RDS calls");
    assert!(!calls(follower), "the follower made no RDS call");
    assert_eq!(
        follower.get("/readyz").map(|r| r.0),
        Some(200),
        "a standby is ready"
    );
    assert!(
        leader.logs().contains(&holder)
            || std::fs::read_to_string(&leader.log)
                .unwrap()
                .contains("became leader")
    );

    // The leader dies without releasing the lease: the other takes over within the lease duration.
    leader.kill();
    let id2 = common::unique("leader");
    api.create(&PostParams::default(), &dbinstance("two", &id2, json!({})))
        .await
        .unwrap();
    wait_dbi(
        &api,
        "two",
        "Ready after the take-over",
        Duration::from_secs(60),
        is_ready,
    )
    .await;
    assert!(calls(follower), "the new leader made the RDS calls");
    let new_holder = leases
        .get("rds-operator-leader")
        .await
        .unwrap()
        .spec
        .unwrap()
        .holder_identity
        .unwrap();
    assert_ne!(new_holder, holder);
    for name in ["one", "two"] {
        common::delete_and_wait(&api, name).await;
    }
}
