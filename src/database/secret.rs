//! The Secrets a database kind writes (its connection Secret, its generated password): whose they
//! are, and the write one needs. Pure.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use secrecy::SecretString;

use crate::sensitive::Sensitive;

/// Whether the object `db` (a DBInstance or a DBCluster) controls the object (a controller ownerReference with its uid, or
/// the operator's owner annotation with it: a Secret under deletionPolicy Retain has no
/// ownerReference): the only objects the operator updates.
pub fn controlled_by(meta: &ObjectMeta, db: &impl kube::Resource) -> bool {
    let uid = db.meta().uid.as_deref();
    let annotated = (meta.annotations.as_ref())
        .and_then(|a| a.get(crate::crd::SECRET_OWNER_ANNOTATION))
        .is_some_and(|v| Some(v.as_str()) == uid);
    annotated || owner_referenced(meta, db)
}

/// Whether the object carries `db`'s controller ownerReference (which the garbage
/// collector follows).
pub fn owner_referenced(meta: &ObjectMeta, db: &impl kube::Resource) -> bool {
    let uid = db.meta().uid.as_deref();
    (meta.owner_references.iter().flatten())
        .any(|o| o.controller == Some(true) && Some(o.uid.as_str()) == uid)
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
    if current.is_some_and(|s| !controlled_by(&s.metadata, owner)) {
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
        Some(s) if owner_referenced(&s.metadata, owner) != owner_reference => SecretWrite::SetOwner,
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
