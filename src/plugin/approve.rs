//! `kubectl rds approve NAME switchover|failover|maintenance [ACTION]`: writes the annotation the
//! operator reads, once it has said what the operator will then do. A switchover of a DBInstance's
//! or DBCluster's blue/green deployment (`rds.operator.rs/switchover`), a pending maintenance
//! action applied at once (`rds.operator.rs/apply-maintenance: ACTION`), a GlobalCluster's failover
//! to the DBCluster ACTION (`rds.operator.rs/failover`), which loses the writes the target has not
//! received and so is asked for again unless `--yes`.

use kube::api::{Api, Patch, PatchParams};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;

use rds_operator::database::blue_green::{DeploymentStatus, SWITCHOVER_ANNOTATION};
use rds_operator::dbcluster::DBCluster;
use rds_operator::dbinstance::DBInstance;
use rds_operator::globalcluster::{FAILOVER_ANNOTATION, GlobalCluster};
use rds_operator::maintenance::{APPROVE_ANNOTATION, PendingAction};

/// What may be approved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum What {
    Switchover,
    Failover,
    Maintenance,
}

/// An approval: the annotation and its value, what the operator will do, and whether it loses
/// data.
#[derive(Debug, PartialEq)]
pub struct Approval {
    pub annotation: &'static str,
    pub value: String,
    pub preview: String,
    pub data_loss: bool,
}

/// What the object shows that an approval is decided on.
#[derive(Debug, Default)]
pub struct Shown {
    /// (deployment, its status, green).
    pub deployment: Option<(String, String, Option<String>)>,
    pub maintenance: Vec<PendingAction>,
    /// A GlobalCluster's writer, its failoverTo target and whether it allows data loss.
    pub writer: Option<String>,
    pub failover_to: Option<(String, bool)>,
}

/// The approval of `what` on `name` (`kind`), or why there is nothing to approve. Pure.
pub fn decide(
    (kind, name): (&str, &str),
    what: What,
    action: Option<&str>,
    shown: &Shown,
) -> Result<Approval, String> {
    match what {
        What::Switchover => switchover((kind, name), shown),
        What::Maintenance => maintenance((kind, name), action, shown),
        What::Failover => failover(name, action, shown),
    }
}

/// The deployment's switchover, now or once RDS reports it AVAILABLE.
fn switchover((kind, name): (&str, &str), shown: &Shown) -> Result<Approval, String> {
    let Some((deployment, status, green)) = &shown.deployment else {
        return Err(format!(
            "{kind} {name} has no blue/green deployment to switch over"
        ));
    };
    let green = green.as_deref().unwrap_or("green");
    let when = match status.as_str() {
        "AVAILABLE" => "now".to_owned(),
        other => format!("once RDS reports it AVAILABLE (it is {other})"),
    };
    Ok(Approval {
        annotation: SWITCHOVER_ANNOTATION,
        value: "true".into(),
        preview: format!(
            "SwitchoverBlueGreenDeployment {deployment} {when}: {green} takes {name}'s identifier \
             and endpoint; writes stop for the switchover (switchoverTimeout)"
        ),
        data_loss: false,
    })
}

/// A pending action, applied at once.
fn maintenance(
    (kind, name): (&str, &str),
    action: Option<&str>,
    shown: &Shown,
) -> Result<Approval, String> {
    let pending: Vec<&str> = shown
        .maintenance
        .iter()
        .map(|a| a.action.as_str())
        .collect();
    let Some(action) = action else {
        return Err(format!("name the action to apply: {}", list(&pending)));
    };
    let Some(found) = shown.maintenance.iter().find(|a| a.action == action) else {
        return Err(format!(
            "{kind} {name} has no pending {action}: {}",
            list(&pending)
        ));
    };
    let what = found.description.as_deref().unwrap_or("");
    Ok(Approval {
        annotation: APPROVE_ANNOTATION,
        value: action.to_owned(),
        preview: format!(
            "ApplyPendingMaintenanceAction {action} (immediate) on {name} now, not in its window \
             {what}"
        )
        .trim_end()
        .to_owned(),
        data_loss: false,
    })
}

/// The failover spec.failoverTo names, with the data it loses said.
fn failover(name: &str, target: Option<&str>, shown: &Shown) -> Result<Approval, String> {
    let Some(target) = target else {
        return Err("name the DBCluster to fail over to".into());
    };
    if !matches!(&shown.failover_to, Some((to, true)) if to == target) {
        return Err(format!(
            "GlobalCluster {name}'s spec.failoverTo must name {target} with allowDataLoss: true \
             first: a failover is the spec's decision, the annotation only says when"
        ));
    }
    let writer = shown.writer.as_deref().unwrap_or("the primary");
    Ok(Approval {
        annotation: FAILOVER_ANNOTATION,
        value: target.to_owned(),
        preview: format!(
            "FailoverGlobalCluster of {name} to {target} with AllowDataLoss: the writes {writer} \
             has not replicated to {target} are lost"
        ),
        data_loss: true,
    })
}

fn list(names: &[&str]) -> String {
    match names.is_empty() {
        true => "none is pending".into(),
        false => format!("pending: {}", names.join(", ")),
    }
}

/// Reads the object, decides, asks when data may be lost, and writes the annotation.
pub async fn run(
    client: &Client,
    namespace: &str,
    (name, what, action): (&str, What, Option<&str>),
    yes: bool,
) -> anyhow::Result<()> {
    let (kind, shown) = read(client, namespace, name, what).await?;
    let approval = decide((kind, name), what, action, &shown).map_err(anyhow::Error::msg)?;
    println!("{}", approval.preview);
    if approval.data_loss && !yes && !confirmed()? {
        anyhow::bail!("not approved");
    }
    let patch =
        serde_json::json!({"metadata": {"annotations": {approval.annotation: approval.value}}});
    let params = PatchParams::default();
    match kind {
        "DBInstance" => annotate::<DBInstance>(client, namespace, name, &patch, &params).await?,
        "DBCluster" => annotate::<DBCluster>(client, namespace, name, &patch, &params).await?,
        _ => annotate::<GlobalCluster>(client, namespace, name, &patch, &params).await?,
    }
    println!(
        "{kind} {name}: {}={} written",
        approval.annotation, approval.value
    );
    Ok(())
}

async fn annotate<K>(
    client: &Client,
    namespace: &str,
    name: &str,
    patch: &serde_json::Value,
    params: &PatchParams,
) -> anyhow::Result<()>
where
    K: Resource<Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    api.patch(name, params, &Patch::Merge(patch)).await?;
    Ok(())
}

/// The object an approval of `what` is of, and what it shows.
async fn read(
    client: &Client,
    namespace: &str,
    name: &str,
    what: What,
) -> anyhow::Result<(&'static str, Shown)> {
    if what == What::Failover {
        let api: Api<GlobalCluster> = Api::namespaced(client.clone(), namespace);
        let g = api.get(name).await?;
        let status = g.status.as_ref();
        let shown = Shown {
            writer: status.and_then(|s| s.writer.clone()),
            failover_to: g
                .spec
                .failover_to
                .as_ref()
                .map(|f| (f.name.clone(), f.allow_data_loss)),
            ..Default::default()
        };
        return Ok(("GlobalCluster", shown));
    }
    let instances: Api<DBInstance> = Api::namespaced(client.clone(), namespace);
    if let Some(db) = instances.get_opt(name).await? {
        let status = db.status.as_ref();
        let deployment = (status.and_then(|s| s.blue_green.as_ref()))
            .map(|b| (&b.deployment, &b.green_instance));
        return Ok(("DBInstance", shown(deployment, status.map(|s| &s.common))));
    }
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), namespace);
    let Some(c) = clusters.get_opt(name).await? else {
        anyhow::bail!("no DBInstance or DBCluster {name} in namespace {namespace}");
    };
    let status = c.status.as_ref();
    let deployment =
        (status.and_then(|s| s.blue_green.as_ref())).map(|b| (&b.deployment, &b.green_cluster));
    Ok(("DBCluster", shown(deployment, status.map(|s| &s.common))))
}

/// What a DBInstance or DBCluster shows an approval: its deployment with its green, its pending
/// maintenance.
fn shown(
    deployment: Option<(&DeploymentStatus, &Option<String>)>,
    common: Option<&rds_operator::database::status::DatabaseStatus>,
) -> Shown {
    Shown {
        deployment: deployment.map(|(d, green)| {
            (
                d.deployment_identifier.clone(),
                d.status.clone(),
                green.clone(),
            )
        }),
        maintenance: common
            .map(|c| c.pending_maintenance_actions.clone())
            .unwrap_or_default(),
        ..Default::default()
    }
}

/// Asks on the terminal; only "yes" goes on.
fn confirmed() -> anyhow::Result<bool> {
    use std::io::Write;
    print!("Type yes to approve it: ");
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(answer.trim() == "yes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(name: &str) -> PendingAction {
        PendingAction {
            action: name.into(),
            description: Some("New Operating System update is available".into()),
            ..Default::default()
        }
    }

    /// A rule a row: what is approved, the annotation and value written, whether it loses data;
    /// or why nothing is written.
    #[test]
    fn each_approval_writes_the_operators_annotation_or_says_why_not() {
        let deployment = Shown {
            deployment: Some((
                "bgd-1".into(),
                "AVAILABLE".into(),
                Some("coffee-green-1".into()),
            )),
            maintenance: vec![action("system-update")],
            ..Default::default()
        };
        let global = Shown {
            writer: Some("coffee".into()),
            failover_to: Some(("coffee-eu".into(), true)),
            ..Default::default()
        };
        let unset = Shown::default();
        // (case, what, action, shown) -> (annotation, value, data loss), or the words of the refusal.
        type Row<'a> = (
            &'a str,
            What,
            Option<&'a str>,
            &'a Shown,
            Result<(&'a str, &'a str, bool), &'a str>,
        );
        let rows: [Row; 7] = [
            (
                "switchover",
                What::Switchover,
                None,
                &deployment,
                Ok((SWITCHOVER_ANNOTATION, "true", false)),
            ),
            (
                "no deployment",
                What::Switchover,
                None,
                &unset,
                Err("no blue/green deployment"),
            ),
            (
                "maintenance",
                What::Maintenance,
                Some("system-update"),
                &deployment,
                Ok((APPROVE_ANNOTATION, "system-update", false)),
            ),
            (
                "an action not pending",
                What::Maintenance,
                Some("db-upgrade"),
                &deployment,
                Err("pending: system-update"),
            ),
            (
                "no action named",
                What::Maintenance,
                None,
                &unset,
                Err("none is pending"),
            ),
            (
                "failover",
                What::Failover,
                Some("coffee-eu"),
                &global,
                Ok((FAILOVER_ANNOTATION, "coffee-eu", true)),
            ),
            (
                "failover the spec does not name",
                What::Failover,
                Some("coffee-ap"),
                &global,
                Err("must name coffee-ap"),
            ),
        ];
        for (case, what, action, shown, expected) in rows {
            let got = decide(("DBCluster", "coffee"), what, action, shown);
            match (got, expected) {
                (Ok(a), Ok((annotation, value, loss))) => {
                    assert_eq!(
                        (a.annotation, a.value.as_str(), a.data_loss),
                        (annotation, value, loss),
                        "{case}"
                    );
                    assert!(!a.preview.is_empty(), "{case}");
                }
                (Err(why), Err(words)) => assert!(why.contains(words), "{case}: {why}"),
                (got, expected) => panic!("{case}: {got:?} where {expected:?}"),
            }
        }
    }

    #[test]
    fn a_switchover_not_yet_available_says_it_waits() {
        let provisioning = Shown {
            deployment: Some(("bgd-1".into(), "PROVISIONING".into(), None)),
            ..Default::default()
        };
        let a = decide(
            ("DBInstance", "coffee"),
            What::Switchover,
            None,
            &provisioning,
        )
        .unwrap();
        assert!(
            a.preview
                .contains("once RDS reports it AVAILABLE (it is PROVISIONING)"),
            "{}",
            a.preview
        );
    }
}
