//! The master password every branch of the plan needs: the one to send or write (planning the
//! write of a newly generated one), its keyed hash, and how a password that cannot be used is
//! reported.

use super::spec;
use super::status::refuse;
use super::tenancy;
use super::types::{Facts, Plan, Sensitive, Step};
pub use crate::database::password::PasswordProblem;
use crate::database::password::{Whose, choose};

/// Whose password it is, as [`choose`] asks.
pub(super) fn whose(f: &Facts) -> Whose<'_> {
    Whose {
        kind: "DBInstance",
        engine: &f.db.spec.engine,
        generated_secret: spec::generated_secret_name(&f.db),
        owner_reference: tenancy::secrets_owner_referenced(&f.db),
    }
}

/// The password to send or write ([`choose`]); plans the write of a newly generated one.
pub(super) fn password(f: &Facts, plan: &mut Plan) -> Result<Option<Sensitive>, PasswordProblem> {
    let (password, write) = choose(&f.password, &whose(f))?;
    if let Some(write) = write {
        plan.step(Step::Secret(write));
    }
    Ok(password)
}

/// The keyed hash of a password the operator sends itself (None for RDS-managed ones).
pub(super) fn hash_of(f: &Facts, password: Option<&Sensitive>) -> Option<String> {
    let uid = f.db.metadata.uid.as_deref().unwrap_or_default();
    password
        .filter(|_| spec::operator_sends_password(&f.db.spec))
        .map(|p| spec::password_hash(&f.hash_key, uid, p.expose()))
}

/// The password hash of an instance restored from spec.restoreFrom until the spec's password is
/// sent: it matches no password, so the first sync sends it.
pub const RESTORED_PASSWORD: &str = "the source's password (restored)";

pub(super) fn password_refused(plan: Plan, f: &Facts, problem: PasswordProblem) -> Plan {
    let label = match problem {
        PasswordProblem::Unavailable(_) => "PasswordSecret",
        PasswordProblem::Invalid(_) => "InvalidSpec",
        PasswordProblem::Conflict(_) => "SecretConflict",
    };
    let drift = spec::drift_interval(&f.db.spec, &f.intervals);
    let mut plan = refuse(plan, f, problem.reason(), problem.message(), Some(label));
    plan.requeue = problem.requeue(drift);
    plan
}
