//! Password rotation between two logins (plan/rotation.rs), a rule a row.

use super::*;
use crate::crd::ROTATE_NOW_ANNOTATION;
use crate::database::readers::{SECRET_VERSION, SecretReaders};
use crate::dbuser::{PasswordRotation, RotationStatus, RotationStrategy};

const CLONE: &str = "reader_clone";
/// EPOCH, as status writes it.
const NOW: &str = "2026-12-05T00:00:00Z";

/// A rotated read-only user of this DBUser's, with its connection Secret `reader-db` holding the
/// base login, no clone yet, and no rotation asked for.
fn rotated() -> Facts {
    let mut f = ours(facts(), &[Select, ShowView]);
    f.user.spec.password_rotation = Some(PasswordRotation {
        strategy: RotationStrategy::AlternatingUsers,
        schedule: None,
        retire_after: None,
    });
    f.user.spec.connection_secret = Some(crate::database::parts::ConnectionSecretSpec {
        name: "reader-db".into(),
        extra_keys: Default::default(),
    });
    f.clone = Some(Found::User {
        user: None,
        password_logs_in: None,
    });
    f.now = NOW.into();
    let secret = secret_holding(&f, "user-pw");
    f.secret = Some(secret);
    f
}

fn asked(mut f: Facts, value: &str) -> Facts {
    f.user.metadata.annotations = Some([(ROTATE_NOW_ANNOTATION.into(), value.into())].into());
    f
}

fn state(f: &mut Facts, change: impl FnOnce(&mut RotationStatus)) {
    let status = f.user.status.get_or_insert_default();
    let rotation = status.rotation.get_or_insert_with(|| RotationStatus {
        active: "reader".into(),
        ..Default::default()
    });
    change(rotation);
}

fn hash_of(f: &Facts, password: &str) -> String {
    password_hash(&f.hash_key, UID, password)
}

/// The rotation as the plan leaves it in status.
fn rotation(plan: &Plan) -> RotationStatus {
    (plan.status.as_ref().unwrap().fields.rotation.clone()).expect("status.rotation")
}

fn names(plan: &Plan) -> Vec<String> {
    (plan.steps.iter())
        .map(|s| match s {
            Step::Sql(sql, _) => format!("{sql:?}")
                .split([' ', '{'])
                .next()
                .unwrap()
                .to_owned(),
            Step::Secret(s) => s.label().to_owned(),
            Step::WritePasswords { .. } => "WritePasswords".into(),
            Step::Claim(_) => "Claim".into(),
            other => format!("{other:?}"),
        })
        .collect()
}

/// Which user the connection Secret is written for, if it is written.
fn written_user(plan: &Plan) -> Option<String> {
    written(plan).map(|d| d["username"].clone())
}

#[test]
fn with_nothing_asked_the_secret_holds_the_base_login_and_nothing_rotates() {
    let plan = plan(&rotated());
    assert_eq!(names(&plan), Vec::<String>::new());
    assert_eq!(rotation(&plan).active, "reader");
    assert_eq!(synced(&plan), (true, "Synced".into()));
}

#[test]
fn a_new_rotate_now_value_starts_a_rotation_to_the_clone_stored_before_it_is_set() {
    let f = asked(rotated(), "1");
    let plan = plan(&f);
    assert_eq!(
        names(&plan),
        ["WritePasswords", "Claim", "CreateUser", "Grant"],
        "stored, claimed, then made with the grants"
    );
    let Step::WritePasswords { base, clone } = &plan.steps[0] else {
        panic!()
    };
    assert_eq!(
        base.expose(),
        "user-pw",
        "the base login keeps its password"
    );
    assert_eq!(clone.expose(), "fresh");
    let Step::Claim(claim) = &plan.steps[1] else {
        panic!()
    };
    let claimed = claim.rotation.clone().unwrap();
    assert_eq!(claimed.pending.as_deref(), Some(CLONE));
    assert_eq!(claimed.pending_hash, Some(hash_of(&f, "fresh")));
    assert_eq!(claimed.last_request.as_deref(), Some("1"));
    assert_eq!(claimed.clone_made, Some(true));
    assert_eq!(rotation(&plan), claimed, "status says what the claim said");
    assert_eq!(written_user(&plan), None, "the Secret is not touched");
    assert!(plan.events.iter().any(|e| e.reason == "RotationStarted"));
}

#[test]
fn a_rotate_now_value_acted_on_is_not_acted_on_again() {
    let mut f = asked(rotated(), "1");
    state(&mut f, |r| r.last_request = Some("1".into()));
    assert_eq!(names(&plan(&f)), Vec::<String>::new());
}

#[test]
fn the_schedule_rotates_once_a_tick_has_passed_since_the_last_rotation() {
    let schedule = |f: &mut Facts| {
        let r = f.user.spec.password_rotation.as_mut().unwrap();
        r.schedule = Some("0 3 * * *".into());
    };
    let made = |f: &mut Facts, t: &str| {
        let at = t.parse().unwrap();
        f.user.metadata.creation_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at));
    };
    // 2026-12-05T00:00:00Z: the last tick was 2026-12-04T03:00:00Z.
    let cases = [
        (
            "made before the tick, never rotated",
            "2026-12-01T00:00:00Z",
            None,
            true,
        ),
        ("made after the tick", "2026-12-04T04:00:00Z", None, false),
        (
            "rotated before the tick",
            "2026-12-01T00:00:00Z",
            Some("2026-12-04T02:59:59Z"),
            true,
        ),
        (
            "rotated after the tick",
            "2026-12-01T00:00:00Z",
            Some("2026-12-04T03:00:01Z"),
            false,
        ),
    ];
    for (why, created, last, due) in cases {
        let mut f = rotated();
        schedule(&mut f);
        made(&mut f, created);
        if let Some(last) = last {
            state(&mut f, |r| r.last_rotated = Some(last.into()));
        }
        let started = names(&plan(&f)).contains(&"WritePasswords".to_owned());
        assert_eq!(started, due, "{why}");
    }
    let mut f = rotated();
    f.user.spec.password_rotation.as_mut().unwrap().schedule = Some("every sunday".into());
    let plan = plan(&f);
    assert_eq!(synced(&plan), (false, "InvalidSpec".into()));
    assert_eq!(names(&plan), Vec::<String>::new());
}

/// A rotation to the clone pending, its password stored.
fn pending(login: Result<(), String>) -> Facts {
    let mut f = asked(rotated(), "1");
    f.clone_password = Some(Sensitive::new("new-pw"));
    f.clone = Some(Found::User {
        user: Some(held(&[Select, ShowView])),
        password_logs_in: None,
    });
    let hash = hash_of(&f, "new-pw");
    state(&mut f, |r| {
        r.pending = Some(CLONE.into());
        r.pending_hash = Some(hash);
        r.last_request = Some("1".into());
        r.clone_made = Some(true);
    });
    f.pending_login = Some(login);
    f
}

#[test]
fn a_new_password_that_logs_in_switches_the_secret_and_the_old_login_retires_later() {
    let mut f = pending(Ok(()));
    f.roll_readers = true;
    let plan = plan(&f);
    assert_eq!(written_user(&plan).as_deref(), Some(CLONE));
    assert_eq!(written(&plan).unwrap()["password"], "new-pw");
    let r = rotation(&plan);
    assert_eq!(r.active, CLONE);
    assert_eq!((r.pending, r.pending_hash), (None, None));
    assert_eq!(r.retiring.as_deref(), Some("reader"));
    assert_eq!(
        r.retire_at.as_deref(),
        Some("2026-12-05T01:00:00Z"),
        "retireAfter 1h"
    );
    assert_eq!(r.last_rotated.as_deref(), Some(NOW));
    assert!(
        !names(&plan).contains(&"Lock".to_owned()),
        "not retired yet"
    );
    assert!(plan.events.iter().any(|e| e.reason == "PasswordRotated"));
    // Readers not rolled and retireAfter not set: the old login is never retired (it was an
    // hour, whatever the readers: an app that read the password once at start failed after it).
    let never = super::plan(&pending(Ok(())));
    assert_eq!(rotation(&never).retiring.as_deref(), Some("reader"));
    assert_eq!(
        rotation(&never).retire_at,
        None,
        "rolling off, retireAfter unset"
    );
}

/// retireAfter 0s (or any, due): the old login is never locked in the pass that switches the
/// Secret (the Secret is not written yet, no reader has rolled), only in a later pass that reads
/// the Secret holding the new login, and, with rolling on, every reader on its version.
#[test]
fn no_login_is_locked_before_the_secret_switched_and_its_readers_rolled_whatever_retire_after_says()
{
    let zero = |mut f: Facts, roll: bool| {
        f.roll_readers = roll;
        let r = f.user.spec.password_rotation.as_mut().unwrap();
        r.retire_after = Some(Duration::from_secs(0).into());
        f
    };
    let past = "2026-12-04T23:59:59Z";
    let mut base_in_secret = retiring(past, Some((3, true)), false);
    let mut old = secret_holding(&base_in_secret, "pw");
    let user = k8s_openapi::ByteString(b"reader".to_vec());
    old.data
        .get_or_insert_default()
        .insert("username".into(), user);
    base_in_secret.secret = Some(old);
    // The switching pass with every reader rolled out on the Secret's version as read (the old
    // login's): the old rule locked the old login in this very pass.
    let mut rolled_at_old = zero(pending(Ok(())), true);
    let old_secret = retiring(past, Some((3, true)), true);
    let mut base = old_secret.secret.clone().unwrap();
    let user = k8s_openapi::ByteString(b"reader".to_vec());
    base.data
        .get_or_insert_default()
        .insert("username".into(), user);
    rolled_at_old.secret = Some(base);
    rolled_at_old.user.status.as_mut().unwrap().secret_readers = old_secret
        .user
        .status
        .as_ref()
        .unwrap()
        .secret_readers
        .clone();
    let rows = [
        (
            "the switching pass, readers rolled out on the old version",
            rolled_at_old,
            false,
        ),
        (
            "the switching pass, rolling off",
            zero(pending(Ok(())), false),
            false,
        ),
        (
            "the switching pass, rolling on",
            zero(pending(Ok(())), true),
            false,
        ),
        (
            "the Secret as read still holds the old login",
            zero(base_in_secret, false),
            false,
        ),
        (
            "a later pass, the Secret switched, rolling off",
            zero(retiring(past, None, false), false),
            true,
        ),
        (
            "a later pass, readers still rolling",
            zero(retiring(past, Some((3, false)), true), true),
            false,
        ),
        (
            "a later pass, readers rolled out",
            zero(retiring(past, Some((3, true)), true), true),
            true,
        ),
    ];
    for (row, f, locked) in rows {
        let p = plan(&f);
        let locks = (sql(&p).into_iter())
            .filter(|s| matches!(s, SqlStep::Lock { .. }))
            .count();
        assert_eq!(locks == 1, locked, "{row}: {:?}", names(&p));
    }
}

#[test]
fn a_new_password_that_does_not_log_in_leaves_the_secret_and_says_why() {
    let plan = plan(&pending(
        Err("Access denied for user 'reader_clone'".into()),
    ));
    assert_eq!(written_user(&plan), None, "the Secret is left as it was");
    assert_eq!(
        names(&plan),
        ["SetPassword", "Unlock"],
        "the password set again"
    );
    let s = plan.status.as_ref().unwrap();
    assert_eq!(
        (s.synced.ok, s.synced.reason.as_str()),
        (false, "RotationFailed")
    );
    assert!(
        s.synced.message.contains("Access denied"),
        "{}",
        s.synced.message
    );
    assert!(
        s.synced.message.contains("still holds reader"),
        "{}",
        s.synced.message
    );
    assert!(s.ready.ok, "the Secret's login still logs in");
    assert_eq!(plan.requeue, Requeue::Backoff, "no hot loop");
    assert_eq!(
        rotation(&plan).pending.as_deref(),
        Some(CLONE),
        "still pending"
    );
}

#[test]
fn a_pending_password_not_stored_before_a_crash_starts_the_rotation_again() {
    let mut f = pending(Ok(()));
    f.clone_password = Some(Sensitive::new("older-pw"));
    let plan = plan(&f);
    assert_eq!(
        written_user(&plan),
        None,
        "never switched to a password not this rotation's"
    );
    assert_eq!(
        names(&plan),
        ["WritePasswords", "Claim", "SetPassword", "Unlock"]
    );
}

/// The last rotation switched to the clone; the base login is retiring.
fn retiring(retire_at: &str, readers: Option<(u64, bool)>, roll: bool) -> Facts {
    let mut f = rotated();
    f.clone_password = Some(Sensitive::new("new-pw"));
    f.clone = Some(Found::User {
        user: Some(held(&[Select, ShowView])),
        password_logs_in: None,
    });
    f.roll_readers = roll;
    state(&mut f, |r| {
        r.active = CLONE.into();
        r.retiring = Some("reader".into());
        r.retire_at = Some(retire_at.into());
        r.clone_made = Some(true);
    });
    let mut secret = secret_holding(&f, "new-pw");
    let version = (SECRET_VERSION.to_owned(), "3".to_owned());
    secret
        .metadata
        .annotations
        .get_or_insert_default()
        .extend([version]);
    f.secret = Some(secret);
    let status = f.user.status.as_mut().unwrap();
    status.secret_readers = readers.map(|(version, done)| SecretReaders {
        version,
        rolled_at: None,
        readers: vec![crate::database::readers::SecretReader {
            kind: crate::database::readers::WorkloadKind::Deployment,
            name: "app".into(),
            state: match done {
                true => crate::database::readers::ReaderState::RolledOut,
                false => crate::database::readers::ReaderState::Rolling,
            },
        }],
    });
    f
}

#[test]
fn the_old_login_is_locked_only_after_retire_after_and_once_every_reader_has_the_new_secret() {
    let past = "2026-12-04T23:00:00Z";
    let future = "2026-12-05T00:30:00Z";
    let cases = [
        (
            "due, readers rolled out at this version",
            retiring(past, Some((3, true)), true),
            true,
        ),
        ("not due", retiring(future, Some((3, true)), true), false),
        (
            "due, a reader still rolling",
            retiring(past, Some((3, false)), true),
            false,
        ),
        (
            "due, readers at an older version",
            retiring(past, Some((2, true)), true),
            false,
        ),
        (
            "due, readers never listed",
            retiring(past, None, true),
            false,
        ),
        (
            "due, rolling off: retireAfter alone",
            retiring(past, None, false),
            true,
        ),
    ];
    for (why, f, locked) in cases {
        let plan = plan(&f);
        let locks: Vec<SqlStep> = sql(&plan)
            .into_iter()
            .filter(|s| matches!(s, SqlStep::Lock { .. }))
            .collect();
        let want = match locked {
            true => vec![SqlStep::Lock {
                username: "reader".into(),
            }],
            false => vec![],
        };
        assert_eq!(locks, want, "{why}");
        assert_eq!(rotation(&plan).retiring.is_none(), locked, "{why}");
        assert_eq!(
            written_user(&plan),
            None,
            "{why}: the Secret holds the clone already"
        );
    }
}

#[test]
fn a_rotation_asked_while_the_last_ones_login_is_not_retired_waits() {
    let f = asked(retiring("2026-12-05T00:30:00Z", Some((3, true)), true), "2");
    let plan = plan(&f);
    assert_eq!(names(&plan), Vec::<String>::new());
    let s = plan.status.as_ref().unwrap();
    assert_eq!(
        (s.synced.ok, s.synced.reason.as_str()),
        (false, "RotationWaiting")
    );
    assert!(s.ready.ok);
}

/// Rolling off and retireAfter unset: the login the last rotation left is never retired, and a
/// rotation asked for waits for it, saying how to let it go on.
#[test]
fn with_rolling_off_and_no_retire_after_the_old_login_is_kept_and_the_next_rotation_waits() {
    let mut f = asked(retiring("2026-12-04T23:00:00Z", None, false), "2");
    state(&mut f, |r| r.retire_at = None);
    let plan = plan(&f);
    assert_eq!(
        names(&plan),
        Vec::<String>::new(),
        "no lock, no new password"
    );
    let s = plan.status.as_ref().unwrap();
    assert_eq!(
        (s.synced.reason.as_str(), s.ready.ok),
        ("RotationWaiting", true)
    );
    assert!(
        s.synced.message.contains("retireAfter is not set"),
        "{}",
        s.synced.message
    );
}

#[test]
fn the_next_rotation_gives_the_retired_base_login_a_new_password_and_unlocks_it() {
    let mut f = asked(retiring("2026-12-04T23:00:00Z", Some((3, true)), true), "2");
    state(&mut f, |r| {
        r.retiring = None;
        r.retire_at = None;
    });
    let plan = plan(&f);
    assert_eq!(
        names(&plan),
        ["WritePasswords", "Claim", "SetPassword", "Unlock"]
    );
    let Step::WritePasswords { base, clone } = &plan.steps[0] else {
        panic!()
    };
    assert_eq!((base.expose(), clone.expose()), ("fresh", "new-pw"));
    assert_eq!(rotation(&plan).pending.as_deref(), Some("reader"));
    assert_eq!(
        written_user(&plan),
        None,
        "the Secret holds the clone until the check"
    );
}

#[test]
fn a_clone_of_that_name_not_this_dbusers_is_refused_unless_adopted() {
    let mut f = asked(rotated(), "1");
    f.clone = Some(Found::User {
        user: Some(held(&[Select])),
        password_logs_in: None,
    });
    let refused = plan(&f);
    assert_eq!(synced(&refused), (false, "UserExists".into()));
    assert_eq!(names(&refused), Vec::<String>::new());
    f.user.spec.adoption_policy = Some(crate::dbuser::UserAdoptionPolicy::Adopt);
    let adopted = plan(&f);
    assert_eq!(
        names(&adopted),
        ["WritePasswords", "Claim", "SetPassword", "Unlock", "Grant"]
    );
}

#[test]
fn deletion_drops_the_clone_this_dbuser_made_and_no_other() {
    let deleting = |made: bool| {
        let mut f = retiring("2026-12-04T23:00:00Z", None, false);
        state(&mut f, |r| r.clone_made = Some(made));
        f.user.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Default::default()),
        );
        plan(&f)
    };
    let dropped = |p: &Plan| {
        sql(p)
            .into_iter()
            .filter_map(|s| match s {
                SqlStep::DropUser { username, .. } => Some(username),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(dropped(&deleting(true)), ["reader", CLONE]);
    assert_eq!(dropped(&deleting(false)), ["reader"]);
}

/// The review's rows: a rotation that kept its login for ever is given a time once retireAfter
/// is set; a user with no connection Secret retires; a new rotate-now in the switching pass
/// waits, and the Secret still switches.
#[test]
fn a_kept_login_retires_once_retire_after_is_set_and_a_request_in_the_switching_pass_waits() {
    let past = "2026-12-04T23:00:00Z";
    // Kept for ever (rolling off, retireAfter unset), then retireAfter 10m is set.
    let mut kept = retiring(past, None, false);
    state(&mut kept, |r| {
        r.retire_at = None;
        r.last_rotated = Some("2026-12-04T22:00:00Z".into());
    });
    let p = plan(&kept);
    assert_eq!(names(&p), Vec::<String>::new(), "kept: nothing locked");
    let r = kept.user.spec.password_rotation.as_mut().unwrap();
    r.retire_after = Some(Duration::from_secs(600).into());
    let p = plan(&kept);
    // Timed from this pass, not from the rotation a while ago: not locked yet.
    assert_eq!(names(&p), Vec::<String>::new(), "{:?}", names(&p));
    let at = rotation(&p).retire_at.expect("a time now");
    assert_eq!(at, "2026-12-05T00:10:00Z");
    // Once that time has come, locked.
    state(&mut kept, |r| r.retire_at = Some(past.into()));
    assert!(names(&plan(&kept)).contains(&"Lock".to_owned()));
    // No connection Secret: nothing to switch nor roll, the old login retires when due.
    for roll in [false, true] {
        let mut bare = retiring(past, None, roll);
        bare.user.spec.connection_secret = None;
        bare.secret = None;
        assert!(
            names(&plan(&bare)).contains(&"Lock".to_owned()),
            "rolling {roll}"
        );
    }
    // A new rotate-now while the switch happens: the Secret switches, the rotation waits.
    let p = plan(&asked(pending(Ok(())), "2"));
    assert_eq!(
        written_user(&p).as_deref(),
        Some(CLONE),
        "the Secret switches"
    );
    assert_eq!(synced(&p), (false, "RotationWaiting".into()));
    assert!(p.status.as_ref().unwrap().ready.ok);
}
