//! The master password a DBCluster's plan sends or writes: the user's Secret, RDS's managed one,
//! or one the operator generated (its Secret's write planned here); its keyed hash, and how a
//! password that cannot be used is reported.

use super::{
    Facts, Plan, Step, drift_interval, generated_secret_name, refuse, secrets_owner_referenced, uid,
};
use crate::database::connection;
use crate::database::password::{PasswordFacts, password_hash};
use crate::managed::plan::Requeue;
use crate::sensitive::Sensitive;

/// The password to send or write; plans the write of a newly generated one. Err: why it cannot
/// be had (reason, message).
pub(super) fn password(
    f: &Facts,
    plan: &mut Plan,
) -> Result<Option<Sensitive>, (&'static str, String)> {
    match &f.password {
        PasswordFacts::NotRead | PasswordFacts::Managed(_) => Ok(None),
        PasswordFacts::Referenced(Err(message)) => {
            Err(("PasswordSecretUnavailable", message.clone()))
        }
        PasswordFacts::Referenced(Ok(p)) => {
            let engine = f.cluster.spec.engine.as_str();
            connection::validate_password(engine, p.expose()).map_err(|m| ("InvalidSpec", m))?;
            Ok(Some(p.clone()))
        }
        PasswordFacts::Generated {
            secret_exists: true,
            controlled: false,
            ..
        } => Err((
            "PasswordSecretConflict",
            format!(
                "a Secret named {} exists and is not this DBCluster's; the operator neither uses \
                 nor overwrites it: delete or rename it, or set masterUserPassword",
                generated_secret_name(&f.cluster)
            ),
        )),
        PasswordFacts::Generated {
            existing: Some(p), ..
        } => Ok(Some(p.clone())),
        PasswordFacts::Generated {
            existing: None,
            secret_exists,
            candidate,
            ..
        } => {
            plan.steps.push(Step::WritePasswordSecret {
                name: generated_secret_name(&f.cluster),
                password: candidate.clone(),
                replace: *secret_exists,
                owner_reference: secrets_owner_referenced(&f.cluster),
            });
            Ok(Some(candidate.clone()))
        }
    }
}

pub(super) fn hash_of(f: &Facts, password: Option<&Sensitive>) -> Option<String> {
    let uid = uid(&f.cluster);
    password.map(|p| password_hash(&f.hash_key, &uid, p.expose()))
}

pub(super) fn password_refused(
    plan: Plan,
    f: &Facts,
    (reason, message): (&'static str, String),
) -> Plan {
    let mut plan = refuse(plan, f, reason, &message, "PasswordSecret");
    plan.requeue = match reason {
        "PasswordSecretUnavailable" => Requeue::Backoff,
        "InvalidSpec" => Requeue::AwaitChange,
        _ => Requeue::After(drift_interval(f)),
    };
    plan
}

pub(super) fn managed_password(f: &Facts) -> Option<Sensitive> {
    match &f.password {
        PasswordFacts::Managed(value) => value.clone(),
        _ => None,
    }
}

/// The password of a cluster this DBCluster observes or adopted: the spec's Secret, or RDS's
/// managed one; never generated.
pub(super) fn observed_password(f: &Facts) -> Option<Sensitive> {
    match &f.password {
        PasswordFacts::Referenced(Ok(p)) => Some(p.clone()),
        PasswordFacts::Managed(value) => value.clone(),
        _ => None,
    }
}
