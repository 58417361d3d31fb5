//! The pure middle of every reconcile: [`Facts`] (what the read step gathered) in, [`Plan`] (the
//! steps to take, the status to report, the Events to publish, when to look again) out. No I/O, no
//! clock (`now` is a fact), no randomness (a candidate password is a fact), no `async`.
//!
//! Where a rule lives:
//! - [`apply`]: a DBInstance that is not being deleted (create, adopt, foreign, out-of-band
//!   deletion, sync: drift, tags, password rotation, connection Secret);
//! - [`cleanup`]: a DBInstance that is being deleted (deletion policy, protection);
//! - [`spec`]: what the spec alone decides (validation, tags, hashes, names, intervals);
//! - [`status`]: conditions, readiness and the status written after the act step;
//! - `crate::drift`: which fields differ and the ModifyDBInstance that puts them right.

pub mod apply;
pub mod cleanup;
pub mod spec;
pub mod status;
#[cfg(test)]
mod tests;
pub mod types;

use std::time::Duration;

use crate::crd::{DBInstance, FINALIZER};
use crate::observed::ObservedInstance;

pub use types::*;

/// The one decision of a reconcile.
pub fn plan(facts: &Facts) -> Plan {
    if facts.db.metadata.deletion_timestamp.is_some() {
        cleanup::plan(facts)
    } else {
        apply::plan(facts)
    }
}

/// Whether the read step needs to look at RDS at all: not for a DBInstance the operator has let go
/// of, nor for a spec the plan refuses before looking.
pub fn wants_observation(db: &DBInstance) -> bool {
    if db.metadata.deletion_timestamp.is_some() {
        db.metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == FINALIZER)
    } else {
        spec::validate(db).is_ok()
    }
}

/// What the read step fetches, given the observed instance.
pub fn reads(db: &DBInstance, observed: Option<&ObservedInstance>) -> Reads {
    let connection = db.spec.connection_secret.as_ref().map(|c| c.name.clone());
    if db.metadata.deletion_timestamp.is_some() {
        let candidates = std::iter::once(spec::generated_secret_name(db)).chain(connection);
        return Reads {
            password: PasswordRead::None,
            connection_secret: None,
            release_candidates: candidates.collect(),
        };
    }
    let uid = db.metadata.uid.as_deref().unwrap_or_default();
    // Never read a secret of an instance that is not ours.
    if observed.is_some_and(|o| !spec::owned_by(o, uid)) {
        return Reads {
            password: PasswordRead::None,
            connection_secret: None,
            release_candidates: Vec::new(),
        };
    }
    Reads {
        password: password_read(db, observed),
        connection_secret: connection.filter(|_| observed.is_some()),
        release_candidates: Vec::new(),
    }
}

fn password_read(db: &DBInstance, observed: Option<&ObservedInstance>) -> PasswordRead {
    if let Some(r) = &db.spec.master_user_password {
        return PasswordRead::Referenced {
            name: r.name.clone(),
            key: r.key.clone(),
        };
    }
    if db.spec.manage_master_user_password == Some(true) {
        return PasswordRead::Managed {
            secret_arn: observed.and_then(|o| o.master_user_secret_arn.clone()),
        };
    }
    PasswordRead::Generated {
        name: spec::generated_secret_name(db),
    }
}

/// The delay after `failures` failures in a row: 2 s, 4 s, 8 s... up to 5 min.
pub fn backoff_delay(failures: u32) -> Duration {
    let secs = 2u64.saturating_pow(failures.clamp(1, 9));
    Duration::from_secs(secs.min(300))
}
