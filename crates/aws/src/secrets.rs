//! The Kubernetes Secrets the operator reads and writes: the master password (the user's Secret, or
//! a generated one it owns) and the connection Secret. I/O only: which Secret to read or write, and
//! with what, is decided by the plan.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Resource, ResourceExt};
use serde_json::json;

use crate::crd::SECRET_OWNER_ANNOTATION;
use crate::error::{Error, kube_err};
use crate::sensitive::Sensitive;

/// Key of the password in the generated password Secret.
pub const GENERATED_KEY: &str = "password";
/// Label on the Secrets the operator writes.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "rds-operator");
/// Field manager of the operator's server-side applies.
pub const MANAGER: &str = "rds-operator";

/// The Secret, or None when absent.
pub async fn get(api: &Api<Secret>, name: &str) -> Result<Option<Secret>, Error> {
    api.get_opt(name).await.map_err(kube_err("read Secret"))
}

/// The Secret's metadata, or None when absent (its data is not kept).
pub async fn get_metadata(api: &Api<Secret>, name: &str) -> Result<Option<Secret>, Error> {
    Ok(get(api, name).await?.map(|mut s| {
        s.data = None;
        s.string_data = None;
        s
    }))
}

/// The UTF-8 text under `key`, if any.
pub fn value_of(secret: &Secret, key: &str) -> Option<Sensitive> {
    let bytes = secret.data.as_ref()?.get(key)?;
    String::from_utf8(bytes.0.clone()).ok().map(Sensitive::new)
}

/// The referenced password, or why it cannot be had (a message for the user).
pub async fn read_referenced(
    api: &Api<Secret>,
    namespace: &str,
    name: &str,
    key: &str,
) -> Result<Result<Sensitive, String>, Error> {
    let Some(secret) = get(api, name).await? else {
        return Ok(Err(format!("Secret {namespace}/{name} not found")));
    };
    Ok(value_of(&secret, key)
        .ok_or_else(|| format!("Secret {namespace}/{name} has no UTF-8 text under key {key:?}")))
}

/// A Secret of the DBInstance's, labelled as the operator's and marked with the DBInstance's uid
/// (`SECRET_OWNER_ANNOTATION`); owned as controller by it when `owner_reference`.
pub fn owned_secret<K: Resource<DynamicType = ()>>(
    db: &K,
    name: &str,
    data: &BTreeMap<String, Sensitive>,
    owner_reference: bool,
) -> Secret {
    let owner = (db.controller_owner_ref(&()))
        .filter(|_| owner_reference)
        .map(|o| vec![o]);
    let mut secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {
            "name": name,
            "namespace": db.namespace(),
            "labels": { MANAGED_BY.0: MANAGED_BY.1, owner_label::<K>(): db.name_any() },
            "annotations": { SECRET_OWNER_ANNOTATION: db.uid() },
        },
    }))
    .expect("a static Secret shape");
    secret.metadata.owner_references = owner;
    secret.data = Some(
        data.iter()
            .map(|(k, v)| (k.clone(), ByteString(v.expose().as_bytes().to_vec())))
            .collect(),
    );
    secret
}

/// The label naming the object a Secret is written for: `rds.operator.rs/<kind in lower case>`.
fn owner_label<K: Resource<DynamicType = ()>>() -> String {
    format!("rds.operator.rs/{}", K::kind(&()).to_lowercase())
}

/// Writes a Secret of `owner`'s with exactly `data` and these `annotations` besides the owner's:
/// creates it (`create`; fails if one exists), or applies it over the one the owner controls.
pub async fn write_owned<K: Resource<DynamicType = ()>>(
    api: &Api<Secret>,
    owner: &K,
    (name, data): (&str, &BTreeMap<String, Sensitive>),
    annotations: BTreeMap<String, String>,
    owner_reference: bool,
    create: bool,
) -> Result<(), Error> {
    let mut secret = owned_secret(owner, name, data, owner_reference);
    secret
        .metadata
        .annotations
        .get_or_insert_default()
        .extend(annotations);
    match create {
        true => self::create(api, &secret).await,
        false => apply(api, &secret).await,
    }
}

/// Creates the Secret; fails if one exists already.
pub async fn create(api: &Api<Secret>, secret: &Secret) -> Result<(), Error> {
    api.create(&PostParams::default(), secret)
        .await
        .map_err(kube_err("create Secret"))?;
    Ok(())
}

/// Writes the Secret by server-side apply.
pub async fn apply(api: &Api<Secret>, secret: &Secret) -> Result<(), Error> {
    let name = secret.name_any();
    api.patch(
        &name,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(secret),
    )
    .await
    .map_err(kube_err("write Secret"))?;
    Ok(())
}

/// Marks the Secret as the DBInstance's by annotation, and gives it the DBInstance's controller
/// ownerReference or takes all of them away (a merge patch replaces the whole list).
pub async fn set_owner<K: Resource<DynamicType = ()>>(
    api: &Api<Secret>,
    db: &K,
    name: &str,
    owner_reference: bool,
) -> Result<(), Error> {
    let owners = (db.controller_owner_ref(&())).filter(|_| owner_reference);
    let patch = json!({"metadata": {
        "annotations": { SECRET_OWNER_ANNOTATION: db.uid() },
        "ownerReferences": owners.map(|o| vec![o]),
    }});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(kube_err("set the owner of a Secret"))?;
    Ok(())
}

/// Removes the Secret's owner references and owner annotation, so it outlives the DBInstance as
/// nobody's.
pub async fn orphan(api: &Api<Secret>, name: &str) -> Result<(), Error> {
    let patch = json!({"metadata": {
        "ownerReferences": null,
        "annotations": { SECRET_OWNER_ANNOTATION: null },
    }});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(kube_err("orphan owned Secret"))?;
    Ok(())
}

/// Key of the hash key in its Secret.
pub const HASH_KEY: &str = "key";

/// The key of the password hashes in DBInstance status: read from the Secret `name` in the
/// operator's own namespace, or created there (32 random bytes) when absent. Only the operator
/// reads it, so the hashes reveal nothing to readers of DBInstances.
pub async fn hash_key(api: &Api<Secret>, name: &str) -> Result<Sensitive, Error> {
    if let Some(secret) = get(api, name).await?
        && let Some(key) = value_of(&secret, HASH_KEY)
    {
        return Ok(key);
    }
    let key = {
        use rand::RngExt;
        let mut rng = rand::rng();
        let bytes: Vec<u8> = (0..32).map(|_| rng.random()).collect();
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": name, "labels": { MANAGED_BY.0: MANAGED_BY.1 }},
        "stringData": { HASH_KEY: key },
    }))
    .expect("a static Secret shape");
    match api.create(&PostParams::default(), &secret).await {
        Ok(_) => Ok(Sensitive::new(key)),
        // Another replica created it first: use theirs.
        Err(kube::Error::Api(e)) if e.code == 409 => {
            let secret = get(api, name)
                .await?
                .ok_or(Error::MissingObjectKey("hash key Secret"))?;
            value_of(&secret, HASH_KEY).ok_or(Error::MissingObjectKey("hash key"))
        }
        Err(e) => Err(kube_err("create hash key Secret")(e)),
    }
}
