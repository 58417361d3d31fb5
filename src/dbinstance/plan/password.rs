//! The master password every branch of the plan needs: the one to send or write (planning the
//! write of a newly generated one), its keyed hash, and how a password that cannot be used is
//! reported.

use super::spec;
use super::status::refuse;
use super::tenancy;
use super::types::{Facts, PasswordFacts, Plan, Requeue, Sensitive, Step};

/// Why the plan cannot use the master password.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PasswordProblem {
    /// The referenced Secret or key is missing: it may appear, so look again with backoff.
    Unavailable(String),
    /// The password is one RDS would refuse: wait for the Secret to change.
    Invalid(String),
    /// A Secret named like the generated one exists and is not this DBInstance's: never use or
    /// overwrite it.
    Conflict(String),
}

/// The password to send or write; plans the write of a newly generated one.
pub(super) fn password(f: &Facts, plan: &mut Plan) -> Result<Option<Sensitive>, PasswordProblem> {
    match &f.password {
        PasswordFacts::NotRead => Ok(None),
        PasswordFacts::Referenced(Err(message)) => {
            Err(PasswordProblem::Unavailable(message.clone()))
        }
        PasswordFacts::Referenced(Ok(p)) => {
            crate::database::connection::validate_password(&f.db.spec.engine, p.expose())
                .map_err(PasswordProblem::Invalid)?;
            Ok(Some(p.clone()))
        }
        PasswordFacts::Managed(value) => Ok(value.clone()),
        PasswordFacts::Generated {
            secret_exists: true,
            controlled: false,
            ..
        } => Err(PasswordProblem::Conflict(format!(
            "a Secret named {} exists and is not this DBInstance's; the operator neither uses nor \
             overwrites it: delete or rename it, or set masterUserPassword",
            spec::generated_secret_name(&f.db)
        ))),
        PasswordFacts::Generated {
            existing: Some(p), ..
        } => Ok(Some(p.clone())),
        PasswordFacts::Generated {
            existing: None,
            secret_exists,
            candidate,
            ..
        } => {
            plan.step(Step::WritePasswordSecret {
                name: spec::generated_secret_name(&f.db),
                password: candidate.clone(),
                replace: *secret_exists,
                owner_reference: tenancy::secrets_owner_referenced(&f.db),
            });
            Ok(Some(candidate.clone()))
        }
    }
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
    let (reason, message, requeue, label) = match problem {
        PasswordProblem::Unavailable(m) => (
            "PasswordSecretUnavailable",
            m,
            Requeue::Backoff,
            "PasswordSecret",
        ),
        PasswordProblem::Invalid(m) => ("InvalidSpec", m, Requeue::AwaitChange, "InvalidSpec"),
        PasswordProblem::Conflict(m) => {
            let drift = Requeue::After(spec::drift_interval(&f.db.spec, &f.intervals));
            ("PasswordSecretConflict", m, drift, "SecretConflict")
        }
    };
    let mut plan = refuse(plan, f, reason, &message, Some(label));
    plan.requeue = requeue;
    plan
}
