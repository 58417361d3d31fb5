//! The Secrets a database kind writes (its connection Secret, its generated password): whose they
//! are, the write one needs (pure), and the step that writes it ([`SecretStep`], run by [`act`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use secrecy::SecretString;

use kube::api::Api;

use kube::runtime::events::EventType;

use super::readers::{Roll, SECRET_VERSION, next_version};
use crate::error::Error;
use crate::managed::plan::Steps;
use crate::secrets::{self, GENERATED_KEY};
use crate::sensitive::Sensitive;

/// A write of one of the Secrets a database kind keeps, each idempotent.
#[derive(Clone, Debug, PartialEq)]
pub enum SecretStep {
    /// Create the generated master password Secret (`replace`: one exists without the key), with
    /// the owner's ownerReference when `owner_reference`.
    WritePassword {
        name: String,
        password: Sensitive,
        replace: bool,
        owner_reference: bool,
    },
    /// Write the connection Secret with exactly this data: create it (`create`), or update the one
    /// the owner controls.
    WriteConnection {
        name: String,
        data: BTreeMap<String, Sensitive>,
        /// Its version, one more than it had (its readers are rolled to it).
        version: u64,
        create: bool,
        owner_reference: bool,
    },
    /// Mark a Secret of the owner's as its own by annotation, and give it the owner's
    /// ownerReference (`owner_reference`) or take that away (deletionPolicy Retain).
    SetOwner { name: String, owner_reference: bool },
    /// Roll a reader of the connection Secret to its version (`readers`).
    RollReader(Roll),
}

impl SecretStep {
    /// The connection Secret this step writes, if it writes one.
    pub fn connection(&self) -> Option<&str> {
        match self {
            SecretStep::WriteConnection { name, .. } => Some(name),
            _ => None,
        }
    }

    /// The step in logs, metrics and the dry run.
    pub fn label(&self) -> &'static str {
        match self {
            SecretStep::WritePassword { .. } => "WritePasswordSecret",
            SecretStep::WriteConnection { .. } => "WriteConnectionSecret",
            SecretStep::SetOwner { .. } => "SetSecretOwner",
            SecretStep::RollReader(_) => "RollSecretReader",
        }
    }
}

/// Runs one Secret step of `owner` (a DBInstance or a DBCluster) in its namespace's `api`.
pub async fn act(
    api: &Api<Secret>,
    owner: &impl kube::Resource<DynamicType = ()>,
    step: &SecretStep,
) -> Result<(), Error> {
    match step {
        SecretStep::WritePassword {
            name,
            password,
            replace,
            owner_reference,
        } => {
            let data = [(GENERATED_KEY.to_owned(), password.clone())].into();
            let written = (name.as_str(), &data);
            secrets::write_owned(api, owner, written, [].into(), *owner_reference, !*replace).await
        }
        SecretStep::WriteConnection {
            name,
            data,
            version,
            create,
            owner_reference,
        } => {
            let annotations = [(SECRET_VERSION.to_owned(), version.to_string())].into();
            let written = (name.as_str(), data);
            secrets::write_owned(api, owner, written, annotations, *owner_reference, *create).await
        }
        SecretStep::SetOwner {
            name,
            owner_reference,
        } => secrets::set_owner(api, owner, name, *owner_reference).await,
        SecretStep::RollReader(roll) => {
            let namespace = owner.meta().namespace.clone().unwrap_or_default();
            super::readers::kube::roll(&api.clone().into_client(), &namespace, roll).await
        }
    }
}

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

/// Why a connection Secret cannot be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecretProblem {
    /// A template cannot be rendered (the spec's extraKeys).
    Template(String),
    /// A Secret of that name exists and is not the object's.
    NotOurs(String),
}

impl From<SecretProblem> for String {
    fn from(problem: SecretProblem) -> String {
        match problem {
            SecretProblem::Template(message) | SecretProblem::NotOurs(message) => message,
        }
    }
}

/// Whose connection Secret it is: the kind (in the refusal of someone else's Secret), what it
/// connects to in the Event's note (None: the object itself), and whether it carries the object's
/// ownerReference.
#[derive(Clone, Copy, Debug)]
pub struct Writer<'a> {
    pub kind: &'a str,
    pub what: Option<&'a str>,
    pub owner_reference: bool,
}

/// The write of the connection Secret that should hold `info` (with the spec's `extraKeys`): the
/// step (None: it holds this already) and, for a write, the Event's note; Err: a template cannot
/// be rendered, or a Secret of that name is not the object's.
pub fn connection_write(
    current: Option<&Secret>,
    owner: &impl kube::Resource,
    wanted: &crate::database::parts::ConnectionSecretSpec,
    info: &crate::database::connection::ConnectionInfo,
    writer: Writer,
) -> Result<Option<(SecretStep, Option<String>)>, SecretProblem> {
    let rendered = crate::database::connection::render(info, &wanted.extra_keys);
    let data = rendered.map_err(|e| SecretProblem::Template(e.to_string()))?;
    let (name, owner_reference) = (wanted.name.clone(), writer.owner_reference);
    let version = next_version(current);
    Ok(match write_of(current, owner, data, owner_reference) {
        SecretWrite::NotOurs => return Err(SecretProblem::NotOurs(not_ours(&name, writer.kind))),
        SecretWrite::Write { data, create } => {
            let note = match writer.what {
                Some(what) => format!("wrote {what}'s connection details to Secret {name}"),
                None => format!("wrote the connection details to Secret {name}"),
            };
            let step = SecretStep::WriteConnection {
                name,
                data,
                version,
                create,
                owner_reference,
            };
            Some((step, Some(note)))
        }
        SecretWrite::SetOwner => Some((
            SecretStep::SetOwner {
                name,
                owner_reference,
            },
            None,
        )),
        SecretWrite::Nothing => None,
    })
}

/// Plans a connection Secret's write: its step, as the kind's (`wrap`), and for a write the
/// Event.
pub fn plan_write<S>(
    plan: &mut impl Steps<S>,
    written: Option<(SecretStep, Option<String>)>,
    wrap: impl FnOnce(SecretStep) -> S,
) {
    let Some((step, note)) = written else { return };
    plan.push(wrap(step));
    if let Some(note) = note {
        plan.event(EventType::Normal, "ConnectionSecretWritten", "Update", note);
    }
}
