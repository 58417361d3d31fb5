//! The chart's Kubernetes permissions, no wider than the work (issue 77): the RBAC objects
//! `helm template` renders are created on the real API server, and its authorizer is asked
//! (SubjectAccessReview) what the operator's ServiceAccount may do.

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, DynamicObject, PostParams};
use kube::discovery::ApiResource;
use serde::Deserialize;

use crate::common;

fn chart() -> String {
    format!("{}/helm/rds-operator", common::REPO)
}

/// `helm template` of the chart for a release of that name in `namespace`, with these `--set`s.
fn render(release: &str, namespace: &str, sets: &[String]) -> (bool, String, String) {
    let helm = common::tool("helm");
    let chart = chart();
    let mut args = vec![
        "template",
        release,
        chart.as_str(),
        "--namespace",
        namespace,
    ];
    for set in sets {
        args.extend(["--set", set.as_str()]);
    }
    common::run(&helm, &args)
}

/// The rendered RBAC objects (and the ServiceAccount), created on the API server; the names of
/// the cluster-scoped ones, to delete.
async fn create_rbac(
    client: &kube::Client,
    namespace: &str,
    rendered: &str,
) -> Vec<(String, String)> {
    let mut cluster_scoped = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(rendered) {
        let value = serde_json::Value::deserialize(doc).expect("YAML");
        let kind = value["kind"].as_str().unwrap_or_default().to_owned();
        let (plural, namespaced) = match kind.as_str() {
            "ClusterRole" => ("clusterroles", false),
            "ClusterRoleBinding" => ("clusterrolebindings", false),
            "Role" => ("roles", true),
            "RoleBinding" => ("rolebindings", true),
            "ServiceAccount" => ("serviceaccounts", true),
            _ => continue,
        };
        let object: DynamicObject = serde_json::from_value(value).expect("an object");
        let resource = resource(&kind, plural);
        let api: Api<DynamicObject> = match namespaced {
            true => {
                let ns = object.metadata.namespace.clone();
                Api::namespaced_with(
                    client.clone(),
                    ns.as_deref().unwrap_or(namespace),
                    &resource,
                )
            }
            false => Api::all_with(client.clone(), &resource),
        };
        let name = object.metadata.name.clone().expect("a name");
        (api.create(&PostParams::default(), &object).await)
            .unwrap_or_else(|e| panic!("create {kind} {name}: {e}"));
        if !namespaced {
            cluster_scoped.push((plural.to_owned(), name));
        }
    }
    cluster_scoped
}

async fn delete_cluster_scoped(client: &kube::Client, objects: &[(String, String)]) {
    for (plural, name) in objects {
        let kind = match plural.as_str() {
            "clusterroles" => "ClusterRole",
            _ => "ClusterRoleBinding",
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource(kind, plural));
        let _ = api.delete(name, &Default::default()).await;
    }
}

/// The API resource of an RBAC kind, or of ServiceAccount (the core group).
fn resource(kind: &str, plural: &str) -> ApiResource {
    let (group, version) = match kind {
        "ServiceAccount" => ("", "v1"),
        _ => ("rbac.authorization.k8s.io", "v1"),
    };
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: match group {
            "" => version.into(),
            g => format!("{g}/{version}"),
        },
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// The chart rendered for a release `release` (its fullname too) in `namespace` with `sets`,
/// its RBAC created on the API server: what is cluster-scoped (to delete), and its
/// ServiceAccount's name.
async fn installed(
    client: &kube::Client,
    (release, namespace): (&str, &str),
    sets: &[String],
) -> (Vec<(String, String)>, String) {
    let sets = [&[format!("fullnameOverride={release}")], sets].concat();
    let (ok, rendered, err) = render(release, namespace, &sets);
    assert!(ok, "{err}");
    let made = create_rbac(client, namespace, &rendered).await;
    (made, service_account(client, namespace, release).await)
}

/// Whether the API server's authorizer lets ServiceAccount `sa` of `namespace` do `verb` on
/// `resource` (of `group`) in namespace `in_ns`.
async fn allowed(
    client: &kube::Client,
    (namespace, sa): (&str, &str),
    verb: &str,
    (group, resource): (&str, &str),
    in_ns: &str,
) -> bool {
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(format!("system:serviceaccount:{namespace}:{sa}")),
            groups: Some(vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".into(),
            ]),
            resource_attributes: Some(ResourceAttributes {
                namespace: Some(in_ns.into()),
                verb: Some(verb.into()),
                group: Some(group.into()),
                resource: Some(resource.into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let api: Api<SubjectAccessReview> = Api::all(client.clone());
    let answered = (api.create(&PostParams::default(), &review).await).expect("a review");
    answered.status.is_some_and(|s| s.allowed)
}

/// The defaults render no rule on apps/* at all; rolling readers with every namespace watched
/// and no namespace opted in is refused at render, never granted cluster-wide.
#[test]
fn rolling_readers_is_never_granted_cluster_wide() {
    let (ok, defaults, err) = render("rds", "ops", &[]);
    assert!(ok, "{err}");
    assert!(!defaults.contains("apiGroups: [\"apps\"]"), "{defaults}");
    let (ok, _, err) = render("rds", "ops", &["rollSecretReaders=true".into()]);
    assert!(!ok && err.contains("rollSecretReadersNamespaces"), "{err}");
    let sets = [
        "rollSecretReaders=true".into(),
        "rollSecretReadersNamespaces={shop}".into(),
    ];
    let (ok, rendered, err) = render("rds", "ops", &sets);
    assert!(ok, "{err}");
    assert!(
        rendered.contains("- --roll-secret-readers-namespaces=shop"),
        "{rendered}"
    );
    for doc in rendered.split("\n---\n") {
        if doc.contains("kind: ClusterRoleBinding") {
            assert!(!doc.contains("secret-readers"), "bound cluster-wide: {doc}");
        }
    }
}

/// As the operator's ServiceAccount: with every namespace watched and rolling opted in by one
/// namespace, it may patch a Deployment there and not in another; a release watching one
/// namespace may read its Secrets and not kube-system's.
#[tokio::test]
async fn the_operators_service_account_is_refused_what_its_work_does_not_need() {
    let client = common::client().await;
    let (ops, opted, other) = (
        common::namespace(&client, "rbac-ops").await,
        common::namespace(&client, "rbac-opted").await,
        common::namespace(&client, "rbac-other").await,
    );
    let release = common::unique("rbac");
    let sets = [
        "rollSecretReaders=true".into(),
        format!("rollSecretReadersNamespaces={{{opted}}}"),
    ];
    let (made, sa) = installed(&client, (&release, &ops), &sets).await;
    let deployments = ("apps", "deployments");
    assert!(allowed(&client, (&ops, &sa), "patch", deployments, &opted).await);
    assert!(!allowed(&client, (&ops, &sa), "patch", deployments, &other).await);
    assert!(!allowed(&client, (&ops, &sa), "patch", deployments, "kube-system").await);
    // No delete on Secrets anywhere: owned ones go by the garbage collector with their owner.
    let secrets = ("", "secrets");
    assert!(allowed(&client, (&ops, &sa), "patch", secrets, &opted).await);
    assert!(!allowed(&client, (&ops, &sa), "delete", secrets, &opted).await);
    delete_cluster_scoped(&client, &made).await;

    // Watching one namespace: its Secrets, and not kube-system's.
    let (team_ops, team) = (
        common::namespace(&client, "rbac-team-ops").await,
        common::namespace(&client, "rbac-team").await,
    );
    let release = common::unique("rbac-team");
    let sets = [format!("watchNamespaces={{{team}}}")];
    let (made, sa) = installed(&client, (&release, &team_ops), &sets).await;
    let secrets = ("", "secrets");
    assert!(allowed(&client, (&team_ops, &sa), "get", secrets, &team).await);
    assert!(!allowed(&client, (&team_ops, &sa), "get", secrets, "kube-system").await);
    assert!(!allowed(&client, (&team_ops, &sa), "list", secrets, "kube-system").await);
    assert!(!allowed(&client, (&team_ops, &sa), "patch", deployments, &team).await);
    delete_cluster_scoped(&client, &made).await;
}

/// The chart's ServiceAccount (named after the release's full name), as rendered and created.
async fn service_account(client: &kube::Client, namespace: &str, name: &str) -> String {
    let api = Api::<ServiceAccount>::namespaced(client.clone(), namespace);
    (api.get(name).await).unwrap_or_else(|e| panic!("the chart's ServiceAccount {name}: {e}"));
    name.to_owned()
}
