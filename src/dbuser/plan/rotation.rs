//! Password rotation between two logins (passwordRotation, strategy AlternatingUsers), pure. The
//! logins are `<username>` (its password under `password` in `<name>-password`) and
//! `<username>_clone` (under `clone-password`), with the same grants. status.rotation says which
//! one the connection Secret holds (`active`); the other is the standby.
//!
//! A rotation, when the schedule's tick or a new rds.operator.rs/rotate-now value asks for one:
//! 1. *start*: a fresh password for the standby is stored in `<name>-password`, status records the
//!    rotation as pending with the password's keyed hash, and the standby is given it (made with
//!    the grants if it is not there, unlocked if it was retired);
//! 2. *check*: the next pass logs in as the standby with the stored password. If it logs in,
//!    status switches `active` to it and the connection Secret follows (and its readers are
//!    rolled); if not, the Secret stays as it was, Synced says why (RotationFailed, with the
//!    engine's message), the password is set again, and the pass backs off. A stored password whose
//!    hash is not the pending one (a crash before it was stored) starts the rotation again;
//! 3. *retire*: the login the Secret left keeps logging in until retireAfter has passed and every
//!    reader the operator rolls has rolled out the new Secret version; it is then locked.
//!
//! A rotation asked for while the last one's login is not yet retired waits for it: its new
//! password would break the readers that still use it.

use std::time::Duration;

use chrono::{DateTime, Utc};
use kube::ResourceExt;
use kube::runtime::events::EventType;

use super::{
    DatabaseFacts, Facts, Found, Master, Password, Plan, SqlStep, Step, privileges, refuse,
};
use crate::crd::ROTATE_NOW_ANNOTATION;
use crate::database::password::password_hash;
use crate::dbuser::{DBUserStatus, ObservedUser, PasswordRotation, RotationStatus};
use crate::managed::plan::{ConditionPlan, Requeue};
use crate::sensitive::Sensitive;

/// The default of retireAfter.
pub const RETIRE_AFTER: Duration = Duration::from_secs(3600);
/// The key of the clone's password in `<name>-password`.
pub const CLONE_KEY: &str = "clone-password";

/// The login the connection Secret holds and its password, once the rotation's steps for this
/// pass are planned (status.rotation written into `status`); Err: a refusal, a wait or a failed
/// rotation, as Synced. `base`: the base login's stored password.
pub(super) fn plan(
    f: &Facts,
    plan: &mut Plan,
    status: &mut DBUserStatus,
    (db, master): (&DatabaseFacts, &Master),
    (rotation, base): (&PasswordRotation, &Sensitive),
) -> Result<(String, Sensitive, Option<ConditionPlan>), ConditionPlan> {
    let (username, clone) = (f.username(), format!("{}_clone", f.username()));
    let mut state = (status.rotation.clone()).unwrap_or_else(|| RotationStatus {
        active: username.clone(),
        ..RotationStatus::default()
    });
    let stored = |login: &str| match login == clone {
        true => f.clone_password.clone(),
        false => Some(base.clone()),
    };
    let clone_user = clone_user(f, plan, (&clone, db), &state)?;
    let clone_ours = state.clone_made == Some(true);
    if let (Some(held), true) = (&clone_user, clone_ours) {
        privileges(f, plan, (&clone, master, db), held);
    }
    let mut again = None;
    if let Some(pending) = state.pending.clone() {
        again = check(
            f,
            plan,
            &mut state,
            (&pending, stored(&pending)),
            (db, master),
        )?;
    }
    retire(f, plan, &mut state, master);
    let standby = match state.active == username {
        true => clone.clone(),
        false => username.clone(),
    };
    let mut waits = None;
    if let Some(request) = again.map_or_else(|| due(f, rotation, &state), |r| Ok(Some(r)))? {
        match (&state.pending, &state.retiring) {
            (None, None) => {
                let exists = standby == username || clone_user.is_some();
                start(
                    f,
                    plan,
                    &mut state,
                    (&standby, exists, request),
                    (db, master),
                )?;
                if standby == username {
                    status.password_hash = state.pending_hash.clone();
                }
                if let (Some(held), false, true) = (&clone_user, clone_ours, standby == clone) {
                    // Taken over (adoptionPolicy Adopt): its grants brought to the spec's.
                    privileges(f, plan, (&clone, master, db), held);
                }
            }
            // Waits; the Secret still holds the active login (the switch may be this pass's).
            (_, Some(retiring)) => {
                let why = waiting(retiring, state.retire_at.is_some());
                waits = Some(ConditionPlan::new(false, "RotationWaiting", why));
            }
            (Some(_), None) => {}
        }
    }
    plan.look_again_within(next_look(f, rotation, &state));
    let active = state.active.clone();
    status.rotation = Some(state);
    let password = stored(&active).ok_or_else(|| {
        let why = format!(
            "the password of {active} is not in Secret {}",
            secret_name(f)
        );
        plan.waiting(f.busy, "PasswordSecret", why)
    })?;
    Ok((active, password, waits))
}

/// Why a rotation due waits for the login the last one left (`retiring`), which is retired at a
/// time (`when`) or never.
fn waiting(retiring: &str, when: bool) -> String {
    match when {
        true => format!(
            "a rotation is due; it waits until {retiring}, which the last one left, is retired \
             (retireAfter, and every reader on the new Secret)"
        ),
        false => format!(
            "a rotation is due; it waits until {retiring}, which the last one left, is retired, \
             which is never while readers are not rolled and retireAfter is not set: set \
             passwordRotation.retireAfter to when every app has the new Secret, or turn rolling \
             on (docs/rotation.md)"
        ),
    }
}

fn secret_name(f: &Facts) -> String {
    super::password_secret(&f.user)
}

/// The clone as the master login found it (None: not there); Err: one of that name that is not
/// this DBUser's, unless adoptionPolicy is Adopt.
fn clone_user(
    f: &Facts,
    plan: &mut Plan,
    (clone, db): (&str, &DatabaseFacts),
    state: &RotationStatus,
) -> Result<Option<ObservedUser>, ConditionPlan> {
    let user = match &f.clone {
        Some(Found::User { user, .. }) => user.clone(),
        Some(Found::Unreachable(why)) => {
            return Err(plan.waiting(f.busy, "DatabaseUnreachable", why.clone()));
        }
        None => return Err(plan.waiting(f.busy, "DatabaseNotReady", "not read yet".into())),
    };
    let ours = state.clone_made == Some(true);
    let adopt = f.user.spec.adoption_policy == Some(crate::dbuser::UserAdoptionPolicy::Adopt);
    if user.is_some() && !ours && !adopt {
        return Err(refuse(
            plan,
            "UserExists",
            format!(
                "user {clone} exists in {} and is not this DBUser's: passwordRotation needs it as \
                 the user's second login; set adoptionPolicy Adopt to take it over",
                db.identifier
            ),
        ));
    }
    Ok(user)
}

/// The rotation asked for now, in words for the Event (None: none is due): a new rotate-now
/// value, or a schedule tick since the last rotation (or since the object was made); Err: a
/// schedule that is not a cron expression.
fn due(
    f: &Facts,
    rotation: &PasswordRotation,
    state: &RotationStatus,
) -> Result<Option<Request>, ConditionPlan> {
    let asked = f.user.annotations().get(ROTATE_NOW_ANNOTATION).cloned();
    if let Some(value) = asked.filter(|v| Some(v) != state.last_request.as_ref()) {
        return Ok(Some(Request::Now(value)));
    }
    let Some(schedule) = &rotation.schedule else {
        return Ok(None);
    };
    let cron = crate::snapshot::schedule::parse(schedule).map_err(|why| {
        ConditionPlan::new(false, "InvalidSpec", format!("passwordRotation.{why}"))
    })?;
    let now = DateTime::from_timestamp(f.epoch, 0).unwrap_or_default();
    let since = (state.last_rotated.as_deref())
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.to_utc())
        .or_else(|| made(f))
        .unwrap_or(now);
    let tick = cron.find_previous_occurrence(&now, true).ok();
    Ok(tick
        .filter(|t| *t > since)
        .map(|t| Request::Tick(rfc3339(&t))))
}

/// Why a rotation runs.
#[derive(Clone, Debug, PartialEq)]
enum Request {
    /// A rotate-now value.
    Now(String),
    /// The schedule's tick.
    Tick(String),
    /// A pending rotation whose password was not stored (a crash): made again.
    Again,
}

fn made(f: &Facts) -> Option<DateTime<Utc>> {
    let t = f.user.metadata.creation_timestamp.as_ref()?;
    DateTime::from_timestamp(t.0.as_second(), 0)
}

fn rfc3339(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// How soon to look again for the rotation: the busy interval while one is under way, at
/// retirement, or at the schedule's next tick (no later than the settled interval).
fn next_look(f: &Facts, rotation: &PasswordRotation, state: &RotationStatus) -> Duration {
    if state.pending.is_some() {
        return f.busy;
    }
    let now = DateTime::from_timestamp(f.epoch, 0).unwrap_or_default();
    let until = |t: DateTime<Utc>| (t - now).to_std().unwrap_or_default() + Duration::from_secs(1);
    let retire = (state.retire_at.as_deref())
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| until(t.to_utc()));
    let tick = (rotation.schedule.as_deref())
        .and_then(|s| crate::snapshot::schedule::parse(s).ok())
        .and_then(|c| c.find_next_occurrence(&now, false).ok())
        .map(until);
    // A login kept for ever is not looked at again (a change of retireAfter wakes it).
    let retiring = (state.retiring.is_some() && state.retire_at.is_some()).then_some(f.busy);
    [retire.map(|r| r.max(f.busy)), tick, retiring]
        .into_iter()
        .flatten()
        .fold(f.settled, Duration::min)
}

/// Starts a rotation: a fresh password for the standby stored, status claiming the rotation as
/// pending with its hash, then the standby given it (made with the grants when it is not there,
/// unlocked when it was retired).
fn start(
    f: &Facts,
    plan: &mut Plan,
    state: &mut RotationStatus,
    (standby, exists, request): (&str, bool, Request),
    (db, master): (&DatabaseFacts, &Master),
) -> Result<(), ConditionPlan> {
    let Password::Generated {
        existing: Some(base),
        candidate,
        ..
    } = &f.password
    else {
        let why = format!(
            "the passwords of a rotated user are in Secret {}",
            secret_name(f)
        );
        return Err(plan.waiting(f.busy, "PasswordSecret", why));
    };
    let clone = standby != f.username();
    let (base, clone_password) = match clone {
        true => (base.clone(), candidate.clone()),
        false => (
            candidate.clone(),
            f.clone_password.clone().unwrap_or(candidate.clone()),
        ),
    };
    plan.step(Step::WritePasswords {
        base,
        clone: clone_password,
    });
    state.pending = Some(standby.to_owned());
    state.pending_hash = Some(hash(f, candidate));
    state.clone_made = Some(state.clone_made == Some(true) || clone);
    if let Request::Now(value) = &request {
        state.last_request = Some(value.clone());
    }
    // A new password of the base login's is what its hash in status follows from now on.
    let base_hash = (!clone).then(|| hash(f, candidate));
    let claim = DBUserStatus {
        rotation: Some(state.clone()),
        password_hash: base_hash.or(f.status().password_hash),
        ..f.status()
    };
    plan.step(Step::Claim(Box::new(claim)));
    set(plan, (standby, exists, candidate), (db, master), f);
    let why = match request {
        Request::Now(value) => format!("{ROTATE_NOW_ANNOTATION} {value:?}"),
        Request::Tick(tick) => format!("the schedule's tick at {tick}"),
        Request::Again => "the last rotation, whose password was not stored".to_owned(),
    };
    let note = format!("rotating to {standby} with a new password, for {why}");
    plan.event(EventType::Normal, "RotationStarted", "Update", note);
    plan.requeue = Requeue::After(Duration::from_secs(1));
    Ok(())
}

/// The standby given `password`: made with the grants when it is not there, or its password set
/// and its lock lifted.
fn set(
    plan: &mut Plan,
    (login, exists, password): (&str, bool, &Sensitive),
    (db, master): (&DatabaseFacts, &Master),
    f: &Facts,
) {
    let sql = |plan: &mut Plan, step| plan.step(Step::Sql(step, Box::new(master.clone())));
    let (username, password) = (login.to_owned(), password.clone());
    match exists {
        true => {
            sql(plan, SqlStep::SetPassword { username, password });
            sql(
                plan,
                SqlStep::Unlock {
                    username: login.to_owned(),
                },
            );
        }
        false => {
            sql(plan, SqlStep::CreateUser { username, password });
            privileges(f, plan, (login, master, db), &ObservedUser::default());
        }
    }
}

fn hash(f: &Facts, password: &Sensitive) -> String {
    password_hash(&f.hash_key, &f.uid(), password.expose())
}

/// A pending rotation checked: the standby logs in with the stored password, and the Secret
/// switches to it; else the Secret stays, and Err says why. Ok(Some): the password stored is not
/// this rotation's (a crash before it was stored), and the rotation is made again.
fn check(
    f: &Facts,
    plan: &mut Plan,
    state: &mut RotationStatus,
    (pending, stored): (&str, Option<Sensitive>),
    (db, master): (&DatabaseFacts, &Master),
) -> Result<Option<Request>, ConditionPlan> {
    let stored = stored.filter(|p| Some(hash(f, p)) == state.pending_hash);
    let Some(stored) = stored else {
        state.pending = None;
        state.pending_hash = None;
        return Ok(Some(Request::Again));
    };
    match &f.pending_login {
        Some(Ok(())) => {
            let old = std::mem::replace(&mut state.active, pending.to_owned());
            let at = retire_after(f).map(|after| {
                DateTime::from_timestamp(f.epoch, 0).unwrap_or_default()
                    + chrono::Duration::from_std(after).unwrap_or_default()
            });
            state.pending = None;
            state.pending_hash = None;
            state.last_rotated = Some(f.now.clone());
            state.retiring = Some(old.clone());
            state.retire_at = at.as_ref().map(rfc3339);
            let note = match &at {
                Some(at) => format!(
                    "switched the connection Secret from {old} to {pending}; {old} logs in until \
                     {} at least",
                    rfc3339(at)
                ),
                None => format!(
                    "switched the connection Secret from {old} to {pending}; {old} keeps logging \
                     in (readers are not rolled and retireAfter is not set: nothing says when \
                     every app has the new Secret)"
                ),
            };
            plan.event(EventType::Normal, "PasswordRotated", "Update", note);
            Ok(None)
        }
        Some(Err(why)) => {
            let message = format!(
                "the new password of {pending} does not log in: {why}; the connection Secret \
                 still holds {}, and the password is set again",
                state.active
            );
            plan.event(
                EventType::Warning,
                "RotationFailed",
                "Update",
                message.clone(),
            );
            set(plan, (pending, true, &stored), (db, master), f);
            plan.requeue = Requeue::Backoff;
            plan.refusal = Some("RotationFailed");
            Err(ConditionPlan::new(false, "RotationFailed", message))
        }
        None => Err(plan.waiting(
            f.busy,
            "DatabaseNotReady",
            "the new login is not checked yet".into(),
        )),
    }
}

/// How long the login a rotation leaves keeps logging in: retireAfter; unset, an hour when the
/// operator rolls the Secret's readers, and for ever when it does not (nothing then says when
/// every app has the new Secret: a platform that turns rolling off sets retireAfter).
pub fn retire_after(f: &Facts) -> Option<Duration> {
    let set = (f.user.spec.password_rotation.as_ref()).and_then(|r| r.retire_after);
    match (set, f.roll_readers) {
        (Some(after), _) => Some(Duration::from(after)),
        (None, true) => Some(RETIRE_AFTER),
        (None, false) => None,
    }
}

/// The login the last rotation left locked, once the connection Secret (as read, not as this
/// pass writes it) holds the new login, retireAfter has passed, and every reader the operator
/// rolls has the Secret's current version (with rolling off: retireAfter alone). Never in the
/// pass that switches the Secret, whatever retireAfter says: the Secret is not written yet then.
fn retire(f: &Facts, plan: &mut Plan, state: &mut RotationStatus, master: &Master) {
    // A rotation that left its login to be kept for ever (rolling off, retireAfter unset) is
    // given a time once either changes: retireAfter from the pass that learns it (the pods
    // started before the rotation may still use the old login then).
    if let (Some(_), None, Some(after)) = (&state.retiring, &state.retire_at, retire_after(f)) {
        let now = DateTime::from_timestamp(f.epoch, 0).unwrap_or_default();
        state.retire_at = Some(rfc3339(
            &(now + chrono::Duration::from_std(after).unwrap_or_default()),
        ));
    }
    let (Some(retiring), Some(at)) = (state.retiring.clone(), state.retire_at.as_deref()) else {
        return;
    };
    let now = DateTime::from_timestamp(f.epoch, 0).unwrap_or_default();
    let due = DateTime::parse_from_rfc3339(at).is_ok_and(|t| t.to_utc() <= now);
    // (A user with no connection Secret has nothing to switch.)
    let switched = f.user.spec.connection_secret.is_none()
        || (f.secret.as_ref())
            .and_then(|s| crate::secrets::value_of(s, "username"))
            .is_some_and(|u| u.expose() == state.active);
    let readers = f.status().secret_readers;
    let version = f
        .secret
        .as_ref()
        .and_then(crate::database::readers::version);
    let rolled = !f.roll_readers
        || f.user.spec.connection_secret.is_none()
        || (readers.as_ref()).is_some_and(|r| Some(r.version) == version && r.rolled_out());
    if !due || !switched || !rolled || retiring == state.active {
        return;
    }
    plan.step(Step::Sql(
        SqlStep::Lock {
            username: retiring.clone(),
        },
        Box::new(master.clone()),
    ));
    state.retiring = None;
    state.retire_at = None;
    let note = format!("locked {retiring}: every reader has the new Secret");
    plan.event(EventType::Normal, "LoginRetired", "Update", note);
}
