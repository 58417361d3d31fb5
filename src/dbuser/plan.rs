//! The DBUser plan, pure: from what was read (the database, the master login, the user and its
//! privileges, the passwords, the connection Secret) to the steps (the finalizer, the password
//! Secret, CREATE USER, ALTER USER, GRANT, REVOKE, DROP USER, the connection Secret) and the
//! status. Every safety rule is a row of the table tests (`plan/tests.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::runtime::events::EventType;
use secrecy::SecretString;

use super::{
    DBUserStatus, GrantPolicy, ObservedUser, Privilege, UserAdoptionPolicy, UserDeletionPolicy,
};
use crate::crd::FINALIZER;
use crate::database::connection::ConnectionInfo;
use crate::database::password::password_hash;
use crate::database::readers;
use crate::database::secret::{SecretStep, Writer, connection_write, plan_write};
use crate::managed::plan::{ConditionPlan, KindStatus, Requeue};
use crate::sensitive::Sensitive;

pub mod iam;
pub mod rotation;
mod types;

pub use types::*;

pub fn plan(f: &Facts) -> Plan {
    let mut plan = Plan::new(Requeue::After(f.settled));
    if f.user.metadata.deletion_timestamp.is_some() {
        return deletion(f, plan);
    }
    if !f.user.finalizers().iter().any(|x| x == FINALIZER) {
        plan.step(Step::AddFinalizer);
    }
    let mut status = DBUserStatus {
        username: Some(f.username()),
        ..f.status()
    };
    let (synced, applied) = match apply(f, &mut plan, &mut status) {
        Ok(synced) => (synced, true),
        Err(refused) => (refused, false),
    };
    // Err: an IAM user's token is due and no new one can be written.
    let stopped = (!applied).then_some(synced.reason.as_str());
    let renewed = iam::renew(f, &mut plan, &mut status, stopped);
    iam::renewal_first(f, &mut plan);
    // The user this DBUser made stays Ready while its database is away for a moment, and while a
    // rotation waits or fails (the connection Secret's login still logs in).
    let away = [
        "DatabaseUnreachable",
        "DatabaseNotReady",
        "RotationFailed",
        "RotationWaiting",
    ]
    .contains(&synced.reason.as_str());
    let usable = status.owner.as_deref() == Some(f.uid().as_str()) && (applied || away);
    let ready = match (renewed, usable) {
        (Err(due), _) => due,
        (Ok(()), true) => ConditionPlan::new(true, "Available", "the user can log in"),
        (Ok(()), false) => {
            ConditionPlan::new(false, synced.reason.as_str(), synced.message.clone())
        }
    };
    plan.status = Some(KindStatus {
        fields: status,
        ready,
        synced,
        busy: false,
    });
    plan
}

/// The steps towards the spec and the Synced condition; Err: a refusal or a wait, as Synced.
fn apply(
    f: &Facts,
    plan: &mut Plan,
    status: &mut DBUserStatus,
) -> Result<ConditionPlan, ConditionPlan> {
    let username = f.username();
    let db = match &f.database {
        Database::Found(db) => db,
        Database::Unresolved(why, _) => {
            return Err(plan.waiting(f.busy, "DatabaseNotReady", why.clone()));
        }
        Database::Gone => {
            let why = "the database the user is in does not exist".to_owned();
            return Err(plan.waiting(f.busy, "DatabaseNotReady", why));
        }
    };
    status.database = Some(db.identifier.clone());
    if reserved(&username, &db.master_username) {
        return Err(refuse(
            plan,
            "InvalidSpec",
            format!(
                "user {username} is the database's master user or one RDS or MySQL keeps for itself: \
             a DBUser never makes, alters or drops it"
            ),
        ));
    }
    if let Some(why) = not_in_postgres(f, db) {
        return Err(refuse(plan, "InvalidSpec", why));
    }
    let master = match &db.master_password {
        Ok(p) => db.master(p),
        Err(why) => return Err(plan.waiting(f.busy, "MasterPassword", why.clone())),
    };
    if f.iam() {
        iam::enabled(f, plan, db)?;
    }
    let password = match f.iam() {
        true => None,
        false => Some(password(f, plan)?),
    };
    let (user, logs_in) = reached(f, plan, db)?;
    let hash = (password.as_ref()).map(|p| password_hash(&f.hash_key, &f.uid(), p.expose()));
    let rotated = status.password_hash != hash && status.owner.is_some();
    let held = held(
        f,
        plan,
        (db, master.as_ref()),
        (user, logs_in, rotated),
        password.as_ref(),
    )?;
    status.owner = Some(f.uid());
    status.password_hash = hash;
    let drift = privileges(f, plan, (&username, master.as_ref(), db), &held);
    status.grants = holds(f, db, &held);
    if let Some(words) = &drift {
        status.last_drift = Some(format!("{}: {words}", f.now));
    }
    let password = match password {
        Some(password) => password,
        None => iam::token(f, plan, status, db, &username)?,
    };
    if !f.iam() {
        status.token_signed_at = None;
    }
    status.iam_policy = (f.iam()).then(|| iam::policy(db, &username)).flatten();
    let (login, password, waiting) = match &f.user.spec.password_rotation {
        Some(r) if !f.iam() => rotation::plan(f, plan, status, (db, &master), (r, &password))?,
        _ => (username.clone(), password, None),
    };
    secret(f, plan, status, db, &login, password)?;
    // A rotation that waits: the Secret holds the active login all the same.
    if let Some(waiting) = waiting {
        return Err(waiting);
    }
    Ok(synced(f, plan, drift))
}

/// What the master login found: the user and whether this DBUser's password logs in as it; Err:
/// the database could not be read.
fn reached<'a>(
    f: &'a Facts,
    plan: &mut Plan,
    db: &DatabaseFacts,
) -> Result<(Option<&'a ObservedUser>, Option<bool>), ConditionPlan> {
    match &f.found {
        Some(Found::Unreachable(why)) => {
            plan.requeue = Requeue::After(f.busy);
            plan.refusal = Some("Unreachable");
            Err(ConditionPlan::new(
                false,
                "DatabaseUnreachable",
                format!(
                    "the operator cannot log in to {} as its master user: {why}; the operator's Pod \
                 must reach the database's endpoint (docs/dbuser.md, \"Reaching the database\")",
                    db.identifier
                ),
            ))
        }
        Some(Found::User {
            user,
            password_logs_in,
        }) => Ok((user.as_ref(), *password_logs_in)),
        None => Err(plan.waiting(f.busy, "DatabaseNotReady", "not read yet".into())),
    }
}

/// The user as the steps leave it: created (after status claims it), its password or IAM login
/// set when it changed, or taken over as adoptionPolicy says; Err: another's user, refused.
/// `password` None: the user logs in with IAM tokens.
fn held(
    f: &Facts,
    plan: &mut Plan,
    (db, master): (&DatabaseFacts, &Master),
    (user, logs_in, rotated): (Option<&ObservedUser>, Option<bool>, bool),
    password: Option<&Sensitive>,
) -> Result<ObservedUser, ConditionPlan> {
    let username = f.username();
    let login = |plan: &mut Plan| {
        let step = match password {
            Some(password) => SqlStep::SetPassword {
                username: username.clone(),
                password: password.clone(),
            },
            None => SqlStep::SetIam {
                username: username.clone(),
            },
        };
        plan.step(Step::Sql(step, Box::new(master.clone())));
    };
    Ok(match user {
        None => {
            if !f.ours() {
                plan.step(Step::Claim(Box::new(DBUserStatus {
                    username: Some(username.clone()),
                    database: Some(db.identifier.clone()),
                    owner: Some(f.uid()),
                    ..f.status()
                })));
            }
            let create = match password {
                Some(password) => SqlStep::CreateUser {
                    username: username.clone(),
                    password: password.clone(),
                },
                None => SqlStep::CreateIamUser {
                    username: username.clone(),
                },
            };
            plan.step(Step::Sql(create, Box::new(master.clone())));
            let note = format!("created user {username} in {}", db.identifier);
            plan.event(EventType::Normal, "UserCreated", "Create", note);
            ObservedUser {
                iam: password.is_none(),
                ..ObservedUser::default()
            }
        }
        Some(user) if f.ours() || logs_in == Some(true) => {
            // A new password, or a change between a password and IAM tokens.
            if (password.is_some() && (rotated || user.iam)) || (password.is_none() && !user.iam) {
                login(plan);
            }
            user.clone()
        }
        Some(user) => match f.user.spec.adoption_policy.unwrap_or_default() {
            UserAdoptionPolicy::Adopt => {
                login(plan);
                let note = format!("took over user {username} in {}", db.identifier);
                plan.event(EventType::Normal, "UserAdopted", "Adopt", note);
                user.clone()
            }
            UserAdoptionPolicy::Never => {
                return Err(refuse(
                    plan,
                    "UserExists",
                    format!(
                        "user {username} exists in {} and is not this DBUser's; set adoptionPolicy \
                     Adopt to take it over (its password becomes this DBUser's)",
                        db.identifier
                    ),
                ));
            }
        },
    })
}

/// The Synced condition once the steps are planned.
fn synced(f: &Facts, plan: &mut Plan, drift: Option<String>) -> ConditionPlan {
    match (drift, f.user.spec.grant_policy.unwrap_or_default()) {
        (Some(words), GrantPolicy::Report) => ConditionPlan::new(
            false,
            "GrantDrift",
            format!("the user holds privileges no grant gives: {words}; grantPolicy is Report"),
        ),
        _ if plan.steps.iter().any(|s| !matches!(s, Step::AddFinalizer)) => {
            plan.requeue = Requeue::After(Duration::from_secs(1));
            ConditionPlan::new(false, "Updating", "the user is being brought to the spec")
        }
        _ => ConditionPlan::new(true, "Synced", "the user and its privileges match the spec"),
    }
}

/// Whether the name is the master user's or one RDS, MySQL or PostgreSQL keeps.
/// Every name RDS keeps starts with `rds` (rdsadmin, rdsrepladmin, rds_superuser, rds_iam...);
/// MySQL's system users (mysql.sys, mysql.session) hold a dot, which the CRD's pattern refuses at
/// apply; PostgreSQL's roles start with `pg_`, and `public` stands for every role.
fn reserved(username: &str, master: &str) -> bool {
    let lower = username.to_ascii_lowercase();
    username.eq_ignore_ascii_case(master)
        || ["root", "public"].contains(&lower.as_str())
        || lower.starts_with("rds")
        || lower.starts_with("pg_")
}

/// For a PostgreSQL database, the grants' privileges it has no such thing as, in words.
fn not_in_postgres(f: &Facts, db: &DatabaseFacts) -> Option<String> {
    if !db.postgres() {
        return None;
    }
    let missing: BTreeSet<&str> = (f.user.spec.grants.iter())
        .flat_map(|g| g.privileges.iter())
        .filter(|p| !p.in_postgres())
        .map(|p| p.as_str())
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "{} runs PostgreSQL, which has no {} as a DBUser grants them: it grants SELECT, \
             INSERT, UPDATE, DELETE, REFERENCES and TRIGGER on every table of schema public, \
             CREATE on schema public and CREATE TEMPORARY TABLES",
            db.identifier,
            missing.into_iter().collect::<Vec<_>>().join(", ")
        )
    })
}

/// The databases a PostgreSQL user's privileges are in (its grants' and the database object's);
/// none for MySQL, whose privileges are the server's.
pub fn databases(user: &super::DBUser, db: &DatabaseFacts) -> Vec<String> {
    if !db.postgres() {
        return Vec::new();
    }
    let mut all: BTreeSet<String> = (user.spec.grants.iter())
        .map(|g| g.database.clone())
        .collect();
    all.insert(db.login_database().to_owned());
    all.into_iter().collect()
}

fn refuse(plan: &mut Plan, reason: &'static str, message: String) -> ConditionPlan {
    plan.refusal = Some(reason);
    plan.requeue = Requeue::AwaitChange;
    ConditionPlan::new(false, reason, message)
}

/// The user's password, writing the generated Secret first when it is missing.
fn password(f: &Facts, plan: &mut Plan) -> Result<Sensitive, ConditionPlan> {
    match &f.password {
        Password::Referenced(Ok(password)) => Ok(password.clone()),
        Password::Referenced(Err(why)) => Err(plan.waiting(f.busy, "PasswordSecret", why.clone())),
        Password::Generated {
            existing: Some(password),
            ..
        } => Ok(password.clone()),
        Password::Generated {
            exists: true,
            ours: false,
            ..
        } => Err(refuse(
            plan,
            "PasswordSecretConflict",
            format!(
                "a Secret named {} exists and is not this DBUser's; name the user's password with \
             passwordSecretRef, or delete that Secret",
                password_secret(&f.user)
            ),
        )),
        Password::Generated {
            existing: None,
            exists,
            candidate,
            ..
        } => {
            plan.step(Step::Secret(SecretStep::WritePassword {
                name: password_secret(&f.user),
                password: candidate.clone(),
                replace: *exists,
                owner_reference: !retained(f),
            }));
            Ok(candidate.clone())
        }
    }
}

fn retained(f: &Facts) -> bool {
    f.user.spec.deletion_policy == Some(UserDeletionPolicy::Retain)
}

/// What the user holds as the steps leave it, in words: under `grantPolicy: Enforce` what its
/// grants give (what was added by hand is revoked in this pass), otherwise what it was found with.
/// Written from the read before the revoke, status would list a revoked privilege until the next
/// drift interval.
fn holds(f: &Facts, db: &DatabaseFacts, held: &ObservedUser) -> Vec<String> {
    let words = |(d, p): (&String, &Privilege)| format!("{} on {d}", p.as_str());
    if f.user.spec.grant_policy.unwrap_or_default() == GrantPolicy::Enforce {
        let wanted = wanted(f, db);
        return (wanted.iter())
            .flat_map(|(d, ps)| ps.iter().map(move |p| words((d, p))))
            .collect();
    }
    let mut holds: Vec<String> = held.privileges.iter().map(|(d, p)| words((d, p))).collect();
    holds.extend(held.other.iter().cloned());
    holds
}

/// The grants and revokes that bring the user's privileges to the spec's; the privileges no grant
/// gives, in words (None: none).
fn privileges(
    f: &Facts,
    plan: &mut Plan,
    (username, master, db): (&str, &Master, &DatabaseFacts),
    held: &ObservedUser,
) -> Option<String> {
    let wanted = wanted(f, db);
    let mut have: BTreeMap<String, BTreeSet<Privilege>> = BTreeMap::new();
    for (database, privilege) in &held.privileges {
        have.entry(database.clone()).or_default().insert(*privilege);
    }
    let mut extra: Vec<String> = held.other.clone();
    let mut revokes = Vec::new();
    for (database, privileges) in &have {
        let unwanted: Vec<Privilege> = (privileges.iter())
            .filter(|p| !wanted.get(database).is_some_and(|w| w.contains(p)))
            .copied()
            .collect();
        if !unwanted.is_empty() {
            let names: Vec<&str> = unwanted.iter().map(|p| p.as_str()).collect();
            extra.push(format!("{} on {database}", names.join(", ")));
            revokes.push(SqlStep::Revoke {
                username: username.to_owned(),
                database: database.clone(),
                privileges: unwanted,
            });
        }
    }
    let enforce = f.user.spec.grant_policy.unwrap_or_default() == GrantPolicy::Enforce;
    let revoke_all = enforce && !held.other.is_empty();
    if enforce {
        match revoke_all {
            true => {
                plan.step(Step::Sql(
                    SqlStep::RevokeAll {
                        username: username.to_owned(),
                        databases: databases(&f.user, db),
                    },
                    Box::new(master.clone()),
                ));
            }
            false => revokes.into_iter().for_each(|r| {
                plan.step(Step::Sql(r, Box::new(master.clone())));
            }),
        }
    }
    for (database, privileges) in &wanted {
        // Held only in part (a PostgreSQL table without it): granted again.
        let incomplete = |p: &Privilege| held.incomplete.contains(&(database.clone(), *p));
        let missing: Vec<Privilege> = (privileges.iter())
            .filter(|p| {
                revoke_all || incomplete(p) || !have.get(database).is_some_and(|h| h.contains(p))
            })
            .copied()
            .collect();
        if !missing.is_empty() {
            let grant = SqlStep::Grant {
                username: username.to_owned(),
                database: database.clone(),
                privileges: missing,
            };
            plan.step(Step::Sql(grant, Box::new(master.clone())));
        }
    }
    if extra.is_empty() {
        return None;
    }
    let words = extra.join("; ");
    let note = match enforce {
        true => format!("revoked privileges no grant gives: {words}"),
        false => format!("the user holds privileges no grant gives: {words}"),
    };
    plan.event(EventType::Warning, "GrantDrift", "Update", note);
    Some(words)
}

/// The privileges the grants give, per database, in the database's engine.
fn wanted(f: &Facts, db: &DatabaseFacts) -> BTreeMap<String, BTreeSet<Privilege>> {
    let mut wanted: BTreeMap<String, BTreeSet<Privilege>> = BTreeMap::new();
    for grant in &f.user.spec.grants {
        wanted
            .entry(grant.database.clone())
            .or_default()
            .extend(grant.privileges_in(db.postgres()));
    }
    wanted
}

/// The connection Secret's write, once the user is there.
pub(super) fn secret(
    f: &Facts,
    plan: &mut Plan,
    status: &mut DBUserStatus,
    db: &DatabaseFacts,
    username: &str,
    password: Sensitive,
) -> Result<(), ConditionPlan> {
    let Some(wanted) = &f.user.spec.connection_secret else {
        return Ok(());
    };
    let dbname = (f.user.spec.grants.first()).map_or(db.dbname.clone(), |g| g.database.clone());
    let password = SecretString::from(password.expose().to_owned());
    let info = ConnectionInfo {
        host: &db.host,
        reader_host: db.reader_host.as_deref(),
        shard_group_host: None,
        port: db.port,
        username,
        password: &password,
        dbname: &dbname,
        engine: &db.engine,
        ca_bundle: f.ca_bundle.as_deref(),
    };
    let writer = Writer {
        kind: "DBUser",
        what: None,
        owner_reference: !retained(f),
    };
    match connection_write(f.secret.as_ref(), &f.user, wanted, &info, writer) {
        Ok(written) => {
            plan_write(plan, written, Step::Secret);
            status.connection_secret = Some(wanted.name.clone());
            // An IAM token a volume brings: its readers are not rolled for each one.
            let previous = f.status().secret_readers.filter(|_| !f.iam());
            status.secret_readers = readers::plan(
                plan,
                |roll| Step::Secret(SecretStep::RollReader(roll)),
                (&wanted.name, f.secret.as_ref()),
                (f.readers.as_deref().filter(|_| !f.iam()), previous.as_ref()),
                (&f.now, f.busy),
            );
            Ok(())
        }
        Err(problem) => Err(refuse(plan, "ConnectionSecretConflict", problem.into())),
    }
}

/// At deletion: the user dropped (deletionPolicy Delete, and only a user this DBUser made or
/// adopted), then the finalizer removed. A database that cannot be reached is waited for.
fn deletion(f: &Facts, mut plan: Plan) -> Plan {
    if !f.user.finalizers().iter().any(|x| x == FINALIZER) {
        return plan;
    }
    let username = f.username();
    let keep = retained(f) || !f.ours();
    let status = |ready: ConditionPlan, synced: ConditionPlan| KindStatus {
        fields: f.status(),
        ready,
        synced,
        busy: false,
    };
    let (master, databases) = match &f.database {
        Database::Found(db) => (
            db.master_password.as_ref().ok().map(|p| db.master(p)),
            databases(&f.user, db),
        ),
        _ => (None, Vec::new()),
    };
    if !keep && !matches!(f.database, Database::Gone) {
        match (&f.found, master) {
            (Some(Found::User { user: Some(_), .. }), Some(master)) => {
                plan.step(Step::Sql(
                    SqlStep::DropUser {
                        username: username.clone(),
                        databases,
                    },
                    master,
                ));
                plan.event(
                    EventType::Normal,
                    "UserDropped",
                    "Delete",
                    format!("dropped user {username}"),
                );
                drop_clone(f, &mut plan);
            }
            (Some(Found::User { user: None, .. }), _) => {}
            (Some(Found::Unreachable(why)), _) => {
                let message = format!(
                    "deleting: waiting to drop user {username}: the database cannot be reached: {why}"
                );
                plan.requeue = Requeue::After(f.busy);
                let c = ConditionPlan::new(false, "DatabaseUnreachable", message);
                plan.status = Some(status(c.clone(), c));
                return plan;
            }
            _ => {
                let message = format!("deleting: waiting for the database to drop user {username}");
                plan.requeue = Requeue::After(f.busy);
                let c = ConditionPlan::new(false, "DatabaseNotReady", message);
                plan.status = Some(status(c.clone(), c));
                return plan;
            }
        }
    }
    if retained(f) {
        keep_secrets(f, &mut plan);
    }
    plan.step(Step::RemoveFinalizer);
    plan.requeue = Requeue::AwaitChange;
    plan
}

/// At deletion: the `<username>_clone` login this DBUser made, dropped with the user.
fn drop_clone(f: &Facts, plan: &mut Plan) {
    let made = (f.status().rotation).is_some_and(|r| r.clone_made == Some(true));
    let (Some(clone), Some(Found::User { user: Some(_), .. }), Database::Found(db)) =
        (f.user.clone_username(), &f.clone, &f.database)
    else {
        return;
    };
    let Some(master) = db.master_password.as_ref().ok().map(|p| db.master(p)) else {
        return;
    };
    if made {
        let databases = databases(&f.user, db);
        let drop = SqlStep::DropUser {
            username: clone.clone(),
            databases,
        };
        plan.step(Step::Sql(drop, master));
        let note = format!("dropped user {clone}");
        plan.event(EventType::Normal, "UserDropped", "Delete", note);
    }
}

/// At deletion under deletionPolicy Retain: the kept user's Secrets stay with it, the garbage
/// collector must not follow the DBUser to them.
fn keep_secrets(f: &Facts, plan: &mut Plan) {
    // The kept user's Secrets stay with it: the garbage collector must not follow the DBUser.
    if let Password::Generated {
        exists: true,
        ours: true,
        ..
    } = f.password
    {
        let name = password_secret(&f.user);
        plan.step(Step::Secret(SecretStep::SetOwner {
            name,
            owner_reference: false,
        }));
    }
    let controlled = |s: &Secret| crate::database::secret::controlled_by(&s.metadata, &f.user);
    if let (Some(wanted), Some(true)) = (
        &f.user.spec.connection_secret,
        f.secret.as_ref().map(controlled),
    ) {
        let name = wanted.name.clone();
        plan.step(Step::Secret(SecretStep::SetOwner {
            name,
            owner_reference: false,
        }));
    }
}

#[cfg(test)]
mod tests;
