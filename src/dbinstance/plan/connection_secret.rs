//! The Secrets a sync of our instance writes: the connection Secret, rendered from what RDS holds
//! and written only when it differs (and only one this DBInstance controls), and the owner of
//! the generated password Secret, which follows the deletion policy.

use crate::database::connection::ConnectionInfo;
use crate::database::readers::{self, SecretReaders};
use crate::rds_state::ObservedInstance;

use super::spec;
use super::tenancy;
use super::types::{Facts, Plan, Sensitive, Step};
use crate::database::password::password_owner;
pub use crate::database::secret::{SecretProblem, not_ours};
use crate::database::secret::{SecretStep, Writer, connection_write, plan_write};

/// Plans the connection Secret's write when its content differs from what it should be (missing,
/// edited, endpoint or password changed). Only a Secret this DBInstance controls is ever updated;
/// a missing one is created, never applied over someone else's.
pub(super) fn connection_secret(
    f: &Facts,
    plan: &mut Plan,
    observed: &ObservedInstance,
    password: &Sensitive,
) -> Result<(), SecretProblem> {
    let db = &f.db;
    let Some(wanted) = &db.spec.connection.connection_secret else {
        return Ok(());
    };
    let (Some(host), Some(port)) = (observed.address.as_deref(), observed.port) else {
        return Ok(());
    };
    let info = ConnectionInfo {
        reader_host: None,
        shard_group_host: None,
        host,
        port,
        username: (observed.master_username.as_deref())
            .or(db.spec.master_username.as_deref())
            .unwrap_or_default(),
        password: &password.0,
        dbname: (observed.db_name.as_deref())
            .or(db.spec.db_name.as_deref())
            .unwrap_or_default(),
        engine: &db.spec.engine,
        ca_bundle: f.ca_bundle.as_deref(),
    };
    let writer = Writer {
        kind: "DBInstance",
        what: None,
        owner_reference: tenancy::secrets_owner_referenced(db),
    };
    let current = f.connection_secret.as_ref();
    let written = connection_write(current, db, wanted, &info, writer)?;
    plan_write(plan, written, Step::Secret);
    Ok(())
}

/// The readers of the connection Secret, rolled to its version when its data changed
/// (`readers::plan`); None when the spec asks for no Secret.
pub(super) fn secret_readers(f: &Facts, plan: &mut Plan) -> Option<SecretReaders> {
    let wanted = f.db.spec.connection.connection_secret.as_ref()?;
    let previous = (f.db.status.as_ref()).and_then(|s| s.common.secret_readers.as_ref());
    readers::plan(
        plan,
        |roll| Step::Secret(SecretStep::RollReader(roll)),
        (&wanted.name, f.connection_secret.as_ref()),
        (f.readers.as_deref(), previous),
        (&f.now, f.intervals.busy),
    )
}

/// The generated password Secret follows the deletion policy: with the DBInstance's
/// ownerReference, or (Retain) without, so no garbage collection can take it first.
pub(super) fn password_secret_owner(f: &Facts, plan: &mut Plan) {
    let name = || spec::generated_secret_name(&f.db);
    let owner_reference = tenancy::secrets_owner_referenced(&f.db);
    if let Some(step) = password_owner(&f.password, name, owner_reference) {
        plan.step(Step::Secret(step));
    }
}

/// Why the connection Secret the spec asks for will not hold the instance once this plan's steps
/// are made (None: it will, or none is asked for): it is not there and not written, it is someone
/// else's, or the password it must hold is not known. Ready waits for it
/// (`conditions::ready_with_secret`).
pub(super) fn pending(f: &Facts, steps: &[Step]) -> Option<String> {
    let wanted = f.db.spec.connection.connection_secret.as_ref()?;
    let written = steps.iter().any(|s| {
        matches!(s, Step::Secret(SecretStep::WriteConnection { name, .. }) if *name == wanted.name)
    });
    if written {
        return None;
    }
    let whose = super::password::whose(f);
    let known = matches!(
        crate::database::password::choose(&f.password, &whose),
        Ok((Some(_), _))
    );
    match f.connection_secret.as_ref() {
        Some(s) if !crate::database::secret::controlled_by(&s.metadata, &f.db) => {
            Some(not_ours(&wanted.name, "DBInstance"))
        }
        _ if !known => Some("the master password is not known".into()),
        None => Some(format!("Secret {} is not written yet", wanted.name)),
        Some(_) => None,
    }
}
