//! The reads and writes of a password rotation between two logins (the plan is
//! `plan/rotation.rs`): the `<username>_clone` login as the master login finds it, a pending
//! rotation's login tried with its stored password, and the generated password Secret written
//! with both logins' passwords.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;

use super::DBUser;
use super::plan::rotation::CLONE_KEY;
use super::plan::{DatabaseFacts, Found, Password, password_secret};
use super::sql::{self, Login};
use crate::context::Context;
use crate::error::Error;
use crate::secrets;
use crate::sensitive::Sensitive;

/// With passwordRotation: the clone as the master login finds it, and (with a rotation pending)
/// whether its login logs in with the password stored for it, or the engine's message why not.
pub async fn read(
    user: &DBUser,
    ctx: &Context,
    db: &DatabaseFacts,
    (password, clone_password): (&Password, Option<&Sensitive>),
) -> (Option<Found>, Option<Result<(), String>>) {
    let (Some(clone), Some(login)) = (
        user.clone_username(),
        Login::master(db, ctx.ca_bundle.as_deref()),
    ) else {
        return (None, None);
    };
    let databases = super::plan::databases(user, db);
    let found = match sql::read(&login, &clone, &databases).await {
        Ok(user) => Found::User {
            user,
            password_logs_in: None,
        },
        Err(why) => return (Some(Found::Unreachable(why)), None),
    };
    let rotation = user.status.as_ref().and_then(|s| s.rotation.as_ref());
    let pending = rotation.and_then(|r| r.pending.as_deref());
    let stored = match pending {
        Some(login) if login == clone => clone_password,
        Some(_) => match password {
            Password::Generated {
                existing: Some(p), ..
            } => Some(p),
            _ => None,
        },
        None => None,
    };
    let tried = match (pending, stored) {
        (Some(pending), Some(stored)) => Some(
            sql::try_login(&Login {
                user: pending,
                password: stored,
                ..login
            })
            .await,
        ),
        (Some(_), None) => Some(Err("no password is stored for it".to_owned())),
        _ => None,
    };
    (Some(found), tried)
}

/// The generated password Secret with both logins' passwords (created when absent).
pub async fn write_passwords(
    api: &Api<Secret>,
    user: &DBUser,
    (base, clone): (&Sensitive, &Sensitive),
) -> Result<(), Error> {
    let name = password_secret(user);
    let exists = secrets::get(api, &name).await?.is_some();
    let data: BTreeMap<String, Sensitive> = [
        (secrets::GENERATED_KEY.to_owned(), base.clone()),
        (CLONE_KEY.to_owned(), clone.clone()),
    ]
    .into();
    let retain = user.spec.deletion_policy == Some(super::UserDeletionPolicy::Retain);
    secrets::write_owned(api, user, (&name, &data), BTreeMap::new(), !retain, !exists).await
}
