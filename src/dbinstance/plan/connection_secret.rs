//! The Secrets a sync of our instance writes: the connection Secret, rendered from what RDS holds
//! and written only when it differs (and only one this DBInstance controls), and the owner of
//! the generated password Secret, which follows the deletion policy.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::runtime::events::EventType;
use secrecy::SecretString;

use crate::dbinstance::connection::{self, ConnectionInfo};
use crate::rds_state::ObservedInstance;

use super::spec;
use super::tenancy;
use super::types::{Facts, PasswordFacts, Plan, Sensitive, Step};

/// Why the connection Secret cannot be written.
pub(super) enum SecretProblem {
    /// A template cannot be rendered.
    Template(String),
    /// A Secret of that name exists and is not controlled by this DBInstance.
    NotOurs(String),
}

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
    let Some(wanted) = &db.spec.connection_secret else {
        return Ok(());
    };
    let (Some(host), Some(port)) = (observed.address.as_deref(), observed.port) else {
        return Ok(());
    };
    let info = ConnectionInfo {
        reader_host: None,
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
    let data = (connection::render(&info, &wanted.extra_keys))
        .map_err(|e| SecretProblem::Template(e.to_string()))?;
    let owner_reference = tenancy::secrets_owner_referenced(db);
    let current = f.connection_secret.as_ref();
    let name = wanted.name.clone();
    match write_of(current, db, data, owner_reference) {
        SecretWrite::NotOurs => {
            return Err(SecretProblem::NotOurs(not_ours(&wanted.name, "DBInstance")));
        }
        SecretWrite::Write { data, create } => {
            let note = format!("wrote the connection details to Secret {name}");
            let write = Step::WriteConnectionSecret {
                name,
                data,
                create,
                owner_reference,
            };
            plan.step(write);
            plan.event(EventType::Normal, "ConnectionSecretWritten", "Update", note);
        }
        SecretWrite::SetOwner => {
            plan.step(Step::SetSecretOwner {
                name,
                owner_reference,
            });
        }
        SecretWrite::Nothing => {}
    }
    Ok(())
}

/// What a connection Secret of `owner` needs, for any kind that writes one.
pub enum SecretWrite {
    /// Its content differs from `data` (or it is missing: `create`).
    Write {
        data: BTreeMap<String, Sensitive>,
        create: bool,
    },
    /// Its content is right, its ownerReference is not (the deletion policy changed).
    SetOwner,
    Nothing,
    /// A Secret of that name is not the owner's: it is never written.
    NotOurs,
}

/// The write the connection Secret as it is now (`current`) needs to hold `data`, with the
/// owner's ownerReference when `owner_reference`.
pub fn write_of(
    current: Option<&Secret>,
    owner: &impl kube::Resource,
    data: BTreeMap<String, SecretString>,
    owner_reference: bool,
) -> SecretWrite {
    if current.is_some_and(|s| !spec::controlled_by(&s.metadata, owner)) {
        return SecretWrite::NotOurs;
    }
    let data: BTreeMap<String, Sensitive> =
        data.into_iter().map(|(k, v)| (k, Sensitive(v))).collect();
    let up_to_date = current.is_some_and(|s| {
        let values = s.data.as_ref();
        (data.iter()).all(|(k, v)| {
            (values.and_then(|d| d.get(k))).is_some_and(|b| b.0 == v.expose().as_bytes())
        })
    });
    match current {
        _ if !up_to_date => SecretWrite::Write {
            data,
            create: current.is_none(),
        },
        Some(s) if spec::owner_referenced(&s.metadata, owner) != owner_reference => {
            SecretWrite::SetOwner
        }
        _ => SecretWrite::Nothing,
    }
}

/// Why a Secret of the connection Secret's name is not written: it is not the `kind`'s.
pub fn not_ours(name: &str, kind: &str) -> String {
    format!(
        "a Secret named {name} exists and is not this {kind}'s; the operator does not write to it: \
         choose another connectionSecret.name, or delete that Secret"
    )
}

/// The generated password Secret follows the deletion policy: with the DBInstance's
/// ownerReference, or (Retain) without, so no garbage collection can take it first.
pub(super) fn password_secret_owner(f: &Facts, plan: &mut Plan) {
    let owner_reference = tenancy::secrets_owner_referenced(&f.db);
    if let PasswordFacts::Generated {
        controlled: true,
        existing: Some(_),
        owner_referenced,
        ..
    } = &f.password
        && *owner_referenced != owner_reference
    {
        plan.step(Step::SetSecretOwner {
            name: spec::generated_secret_name(&f.db),
            owner_reference,
        });
    }
}
