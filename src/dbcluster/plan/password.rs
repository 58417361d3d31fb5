//! The master password a DBCluster's plan sends or writes: the user's Secret, RDS's managed one,
//! or one the operator generated (its Secret's write planned here); its keyed hash, and how a
//! password that cannot be used is reported.

use super::{
    Facts, Plan, Step, drift_interval, generated_secret_name, refuse, secrets_owner_referenced, uid,
};
use crate::database::password::{PasswordFacts, PasswordProblem, Whose, choose, password_hash};
use crate::sensitive::Sensitive;

/// The password to send or write ([`choose`]; RDS's managed one is never sent); plans the write of
/// a newly generated one.
pub(super) fn password(f: &Facts, plan: &mut Plan) -> Result<Option<Sensitive>, PasswordProblem> {
    if let PasswordFacts::Managed(_) = f.password {
        return Ok(None);
    }
    let whose = Whose {
        kind: "DBCluster",
        engine: f.cluster.spec.engine.as_str(),
        generated_secret: generated_secret_name(&f.cluster),
        owner_reference: secrets_owner_referenced(&f.cluster),
    };
    let (password, write) = choose(&f.password, &whose)?;
    if let Some(write) = write {
        plan.step(Step::Secret(write));
    }
    Ok(password)
}

pub(super) fn hash_of(f: &Facts, password: Option<&Sensitive>) -> Option<String> {
    let uid = uid(&f.cluster);
    password.map(|p| password_hash(&f.hash_key, &uid, p.expose()))
}

pub(super) fn password_refused(plan: Plan, f: &Facts, problem: PasswordProblem) -> Plan {
    let mut plan = refuse(
        plan,
        f,
        problem.reason(),
        problem.message(),
        "PasswordSecret",
    );
    plan.requeue = problem.requeue(drift_interval(f));
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
