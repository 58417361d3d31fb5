//! The Kubernetes Secrets the operator reads and writes: the master password (from the user's
//! Secret, a generated one it owns, or RDS's Secrets Manager secret) and the connection Secret.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Resource, ResourceExt};
use secrecy::{ExposeSecret, SecretString};
use serde_json::json;

use crate::connection::{self, ConnectionInfo};
use crate::controller::{Context, Error, MANAGER, kube_err};
use crate::crd::DBInstance;
use crate::rds::ObservedInstance;

/// Key of the password in the generated password Secret.
pub const GENERATED_KEY: &str = "password";
/// Label on the Secrets the operator writes.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "rds-operator");

/// Name of the Secret holding a generated master password.
pub fn generated_secret_name(db: &DBInstance) -> String {
    format!("{}-master-password", db.name_any())
}

fn api(ctx: &Context, namespace: &str) -> Api<Secret> {
    Api::namespaced(ctx.client.clone(), namespace)
}

/// The master password, wherever the spec says it lives. None when RDS manages it and has not
/// created its secret yet (before CreateDBInstance).
pub async fn master_password(
    db: &DBInstance,
    ctx: &Context,
    namespace: &str,
    observed: Option<&ObservedInstance>,
) -> Result<Option<SecretString>, Error> {
    if db.spec.master_user_password.is_some() {
        return read_referenced(db, ctx, namespace).await.map(Some);
    }
    if db.spec.manage_master_user_password == Some(true) {
        return match observed.and_then(|o| o.master_user_secret_arn.as_deref()) {
            Some(arn) => Ok(Some(ctx.rds.managed_password(arn).await?)),
            None => Ok(None),
        };
    }
    ensure_generated(db, ctx, namespace).await.map(Some)
}

/// Whether the operator sends the password itself (and so tracks its hash for rotation).
pub fn operator_sends_password(db: &DBInstance) -> bool {
    db.spec.manage_master_user_password != Some(true)
}

async fn read_referenced(
    db: &DBInstance,
    ctx: &Context,
    namespace: &str,
) -> Result<SecretString, Error> {
    let reference = db
        .spec
        .master_user_password
        .as_ref()
        .ok_or(Error::MissingObjectKey("masterUserPassword"))?;
    let secret = api(ctx, namespace)
        .get_opt(&reference.name)
        .await
        .map_err(kube_err("read password Secret"))?
        .ok_or_else(|| {
            Error::PasswordSecret(format!("Secret {namespace}/{} not found", reference.name))
        })?;
    value_of(&secret, &reference.key).ok_or_else(|| {
        Error::PasswordSecret(format!(
            "Secret {namespace}/{} has no UTF-8 text under key {:?}",
            reference.name, reference.key
        ))
    })
}

fn value_of(secret: &Secret, key: &str) -> Option<SecretString> {
    let bytes = secret.data.as_ref()?.get(key)?;
    String::from_utf8(bytes.0.clone())
        .ok()
        .map(SecretString::from)
}

/// The generated password, creating its Secret (owned by the DBInstance) the first time. Never
/// overwrites an existing one, so a restart reuses the password the instance was created with.
async fn ensure_generated(
    db: &DBInstance,
    ctx: &Context,
    namespace: &str,
) -> Result<SecretString, Error> {
    let api = api(ctx, namespace);
    let name = generated_secret_name(db);
    if let Some(existing) = api
        .get_opt(&name)
        .await
        .map_err(kube_err("read generated password"))?
        && let Some(password) = value_of(&existing, GENERATED_KEY)
    {
        return Ok(password);
    }
    let password = connection::generate_password();
    let secret = owned_secret(
        db,
        &name,
        BTreeMap::from([(GENERATED_KEY.to_owned(), password.clone())]),
    );
    match api.create(&PostParams::default(), &secret).await {
        Ok(_) => Ok(password),
        // A Secret without the key, or one created meanwhile: replace an unusable one, reuse a good one.
        Err(kube::Error::Api(e)) if e.code == 409 => {
            let existing = api
                .get(&name)
                .await
                .map_err(kube_err("read generated password"))?;
            if let Some(password) = value_of(&existing, GENERATED_KEY) {
                return Ok(password);
            }
            api.patch(
                &name,
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(&secret),
            )
            .await
            .map_err(kube_err("write generated password"))?;
            Ok(password)
        }
        Err(e) => Err(kube_err("create generated password")(e)),
    }
}

fn owned_secret(db: &DBInstance, name: &str, data: BTreeMap<String, SecretString>) -> Secret {
    let owner = db.controller_owner_ref(&()).map(|o| vec![o]);
    let mut secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {
            "name": name,
            "namespace": db.namespace(),
            "labels": { MANAGED_BY.0: MANAGED_BY.1, "rds.operator.rs/dbinstance": db.name_any() },
        },
    }))
    .expect("a static Secret shape");
    secret.metadata.owner_references = owner;
    secret.data = Some(
        data.into_iter()
            .map(|(k, v)| (k, ByteString(v.expose_secret().as_bytes().to_vec())))
            .collect(),
    );
    secret
}

/// Writes the connection Secret when its content differs from what it should be (missing,
/// edited, endpoint or password changed). Returns whether it wrote.
pub async fn sync_connection_secret(
    db: &DBInstance,
    ctx: &Context,
    namespace: &str,
    observed: &ObservedInstance,
    password: &SecretString,
) -> Result<bool, Error> {
    let Some(spec) = &db.spec.connection_secret else {
        return Ok(false);
    };
    let (Some(host), Some(port)) = (observed.address.as_deref(), observed.port) else {
        return Ok(false);
    };
    let username = observed
        .master_username
        .as_deref()
        .or(db.spec.master_username.as_deref())
        .unwrap_or_default();
    let dbname = observed
        .db_name
        .as_deref()
        .or(db.spec.db_name.as_deref())
        .unwrap_or_default();
    let info = ConnectionInfo {
        host,
        port,
        username,
        password,
        dbname,
        engine: &db.spec.engine,
    };
    let data = connection::render(&info, &spec.extra_keys)
        .map_err(|e| Error::InvalidSpec(e.to_string()))?;
    let api = api(ctx, namespace);
    let current = api
        .get_opt(&spec.name)
        .await
        .map_err(kube_err("read connection Secret"))?;
    let up_to_date = current.as_ref().is_some_and(|s| {
        let owned = s
            .owner_references()
            .iter()
            .any(|o| Some(&o.uid) == db.metadata.uid.as_ref());
        owned
            && data.iter().all(|(k, v)| {
                value_of(s, k).is_some_and(|c| c.expose_secret() == v.expose_secret())
            })
    });
    if up_to_date {
        return Ok(false);
    }
    let secret = owned_secret(db, &spec.name, data);
    api.patch(
        &spec.name,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&secret),
    )
    .await
    .map_err(kube_err("write connection Secret"))?;
    Ok(true)
}

/// At deletion: deletes the Secrets the operator wrote for this DBInstance, or, when the RDS
/// instance is retained, keeps them (without owner) so the retained database stays reachable.
pub async fn release(
    db: &DBInstance,
    ctx: &Context,
    namespace: &str,
    retain: bool,
) -> Result<(), Error> {
    let api = api(ctx, namespace);
    let mut names = vec![generated_secret_name(db)];
    names.extend(db.spec.connection_secret.as_ref().map(|c| c.name.clone()));
    for name in names {
        let Some(secret) = api
            .get_opt(&name)
            .await
            .map_err(kube_err("read owned Secret"))?
        else {
            continue;
        };
        if !secret
            .owner_references()
            .iter()
            .any(|o| Some(&o.uid) == db.metadata.uid.as_ref())
        {
            continue;
        }
        if retain {
            let patch = json!({"metadata": {"ownerReferences": null}});
            api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(kube_err("orphan owned Secret"))?;
        } else {
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(e)) if e.code == 404 => {}
                Err(e) => return Err(kube_err("delete owned Secret")(e)),
            }
        }
    }
    Ok(())
}
