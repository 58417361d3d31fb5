//! The DBUser plan's rules, a row each.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::*;
use crate::crd::LocalRef;
use crate::dbuser::{DBUser, DBUserSpec, Grant, Preset, UserAuth};
use crate::managed::plan::Requeue;

const UID: &str = "uid-1";
/// 2026-12-05T00:00:00Z.
const EPOCH: i64 = 1_796_428_800;

fn user(spec: DBUserSpec) -> DBUser {
    let mut u = DBUser::new("reader", spec);
    u.metadata.namespace = Some("coffee".into());
    u.metadata.uid = Some(UID.into());
    u.metadata.finalizers = Some(vec![FINALIZER.into()]);
    u
}

fn spec(preset: Preset) -> DBUserSpec {
    DBUserSpec {
        db_instance_ref: Some(LocalRef {
            name: "coffee".into(),
        }),
        grants: vec![Grant {
            database: "COFFEE".into(),
            preset: Some(preset),
            privileges: vec![],
        }],
        ..Default::default()
    }
}

fn db() -> DatabaseFacts {
    DatabaseFacts {
        identifier: "coffee".into(),
        host: "coffee.example".into(),
        port: 3306,
        reader_host: None,
        engine: "mysql".into(),
        dbname: "COFFEE".into(),
        master_username: "admin".into(),
        master_password: Ok(Sensitive::new("master-pw")),
        iam_enabled: Some(false),
        arn: Some("arn:aws:rds:eu-west-1:123456789012:db:coffee".into()),
        resource_id: Some("db-ABCDEFGHIJ".into()),
    }
}

fn held(privileges: &[Privilege]) -> ObservedUser {
    ObservedUser {
        privileges: (privileges.iter())
            .map(|p| ("COFFEE".to_owned(), *p))
            .collect(),
        ..ObservedUser::default()
    }
}

/// A read-only user of the Coffee Manage database: its password Secret there, the database
/// reached, and no user yet.
fn facts() -> Facts {
    Facts {
        user: user(spec(Preset::ReadOnly)),
        database: Database::Found(Box::new(db())),
        found: Some(Found::User {
            user: None,
            password_logs_in: None,
        }),
        password: Password::Generated {
            existing: Some(Sensitive::new("user-pw")),
            exists: true,
            ours: true,
            candidate: Sensitive::new("fresh"),
        },
        secret: None,
        readers: None,
        clone: None,
        clone_password: None,
        pending_login: None,
        roll_readers: false,
        hash_key: Sensitive::new("key"),
        ca_bundle: None,
        token: None,
        token_refresh: Duration::from_secs(600),
        now: "2026-12-05T00:00:00Z".into(),
        epoch: EPOCH,
        busy: Duration::from_secs(5),
        settled: Duration::from_secs(60),
    }
}

/// The user as this DBUser made it: status says so, with the password's hash.
fn ours(mut f: Facts, privileges: &[Privilege]) -> Facts {
    let hash = password_hash(&f.hash_key, UID, "user-pw");
    f.user.status = Some(DBUserStatus {
        owner: Some(UID.into()),
        password_hash: Some(hash),
        ..Default::default()
    });
    f.found = Some(Found::User {
        user: Some(held(privileges)),
        password_logs_in: None,
    });
    f
}

fn sql(plan: &Plan) -> Vec<SqlStep> {
    (plan.steps.iter())
        .filter_map(|s| match s {
            Step::Sql(step, _) => Some(step.clone()),
            _ => None,
        })
        .collect()
}

fn synced(plan: &Plan) -> (bool, String) {
    let s = plan.status.as_ref().expect("a status");
    (s.synced.ok, s.synced.reason.clone())
}

fn grant(privileges: &[Privilege]) -> SqlStep {
    SqlStep::Grant {
        username: "reader".into(),
        database: "COFFEE".into(),
        privileges: privileges.to_vec(),
    }
}

use Privilege::*;

#[test]
fn a_new_user_is_created_with_its_password_and_granted_its_preset_as_the_master_user() {
    let plan = plan(&facts());
    assert_eq!(
        sql(&plan),
        vec![
            SqlStep::CreateUser {
                username: "reader".into(),
                password: Sensitive::new("user-pw"),
            },
            grant(&[Select, ShowView]),
        ]
    );
    // Claimed in status first: a crash after CREATE USER leaves a user the next pass knows.
    let Step::Claim(claimed) = &plan.steps[0] else {
        panic!("{:?}", plan.steps)
    };
    assert_eq!(claimed.owner.as_deref(), Some(UID));
    let Step::Sql(_, master) = &plan.steps[1] else {
        panic!("{:?}", plan.steps)
    };
    assert_eq!(
        (master.username.as_str(), master.host.as_str()),
        ("admin", "coffee.example")
    );
    let status = &plan.status.as_ref().unwrap().fields;
    assert_eq!(
        status.owner.as_deref(),
        Some(UID),
        "the user is recorded as this DBUser's"
    );
    assert_eq!(status.database.as_deref(), Some("coffee"));
}

#[test]
fn a_missing_generated_password_secret_is_written_before_the_user_is_made() {
    let mut f = facts();
    f.password = Password::Generated {
        existing: None,
        exists: false,
        ours: false,
        candidate: Sensitive::new("fresh"),
    };
    let plan = plan(&f);
    assert!(matches!(
        &plan.steps[0],
        Step::Secret(SecretStep::WritePassword { name, owner_reference: true, .. }) if name == "reader-password"
    ));
    assert_eq!(
        sql(&plan)[0],
        SqlStep::CreateUser {
            username: "reader".into(),
            password: Sensitive::new("fresh")
        }
    );
}

#[test]
fn the_rules_of_privileges_a_row_each() {
    // (what the user holds, the policy, the SQL, Synced's reason)
    type Row = (
        &'static str,
        ObservedUser,
        Preset,
        GrantPolicy,
        Vec<SqlStep>,
        &'static str,
    );
    let revoke = |privileges: &[Privilege]| SqlStep::Revoke {
        username: "reader".into(),
        database: "COFFEE".into(),
        privileges: privileges.to_vec(),
    };
    let global = ObservedUser {
        other: vec!["PROCESS on every database".into()],
        ..held(&[Select, ShowView])
    };
    let rows: Vec<Row> = vec![
        (
            "as granted",
            held(&[Select, ShowView]),
            Preset::ReadOnly,
            GrantPolicy::Enforce,
            vec![],
            "Synced",
        ),
        (
            "one missing",
            held(&[Select]),
            Preset::ReadOnly,
            GrantPolicy::Enforce,
            vec![grant(&[ShowView])],
            "Updating",
        ),
        (
            "INSERT granted by hand: revoked",
            held(&[Select, ShowView, Insert]),
            Preset::ReadOnly,
            GrantPolicy::Enforce,
            vec![revoke(&[Insert])],
            "Updating",
        ),
        (
            "INSERT granted by hand, grantPolicy Report: reported, kept",
            held(&[Select, ShowView, Insert]),
            Preset::ReadOnly,
            GrantPolicy::Report,
            vec![],
            "GrantDrift",
        ),
        (
            "a global privilege by hand: everything revoked, the spec's granted again",
            global,
            Preset::ReadOnly,
            GrantPolicy::Enforce,
            vec![
                SqlStep::RevokeAll {
                    username: "reader".into(),
                    databases: vec![],
                },
                grant(&[Select, ShowView]),
            ],
            "Updating",
        ),
        (
            "read-only to read-write",
            held(&[Select, ShowView]),
            Preset::ReadWrite,
            GrantPolicy::Enforce,
            vec![grant(&[
                Insert,
                Update,
                Delete,
                CreateTemporaryTables,
                LockTables,
                Execute,
            ])],
            "Updating",
        ),
    ];
    for (what, observed, preset, policy, steps, reason) in rows {
        let mut f = ours(facts(), &[]);
        f.user.spec = DBUserSpec {
            grant_policy: Some(policy),
            ..spec(preset)
        };
        f.found = Some(Found::User {
            user: Some(observed),
            password_logs_in: None,
        });
        let plan = plan(&f);
        assert_eq!(sql(&plan), steps, "{what}");
        assert_eq!(synced(&plan).1, reason, "{what}");
        let drift = plan.events.iter().any(|e| e.reason == "GrantDrift");
        assert_eq!(
            drift,
            reason == "GrantDrift" || what.contains("by hand"),
            "{what}: the Event"
        );
        let ready = &plan.status.as_ref().unwrap().ready;
        assert!(ready.ok, "{what}: the user can log in meanwhile");
        let grants = &plan.status.as_ref().unwrap().fields.grants;
        let extra = grants
            .iter()
            .any(|g| g.starts_with("INSERT") || g.starts_with("PROCESS"));
        assert_eq!(
            extra,
            policy == GrantPolicy::Report || preset == Preset::ReadWrite,
            "{what}: status lists what the user holds once the steps are done: {grants:?}"
        );
        let select = grants.iter().any(|g| g == "SELECT on COFFEE");
        assert!(select, "{what}: {grants:?}");
    }
}

#[test]
fn a_user_that_is_not_this_dbusers_is_refused_or_adopted_as_the_policy_says() {
    let foreign = |logs_in: bool, policy: UserAdoptionPolicy| {
        let mut f = facts();
        f.user.spec.adoption_policy = Some(policy);
        f.found = Some(Found::User {
            user: Some(held(&[Select, ShowView])),
            password_logs_in: Some(logs_in),
        });
        plan(&f)
    };
    let refused = foreign(false, UserAdoptionPolicy::Never);
    assert_eq!(sql(&refused), vec![], "nothing is done to another's user");
    assert_eq!(synced(&refused), (false, "UserExists".into()));
    assert!(refused.status.as_ref().unwrap().fields.owner.is_none());
    let adopted = foreign(false, UserAdoptionPolicy::Adopt);
    assert_eq!(
        sql(&adopted),
        vec![SqlStep::SetPassword {
            username: "reader".into(),
            password: Sensitive::new("user-pw")
        }]
    );
    assert_eq!(
        adopted.status.as_ref().unwrap().fields.owner.as_deref(),
        Some(UID)
    );
    // Made by this DBUser before its status was written (a crash): its password logs in.
    let made = foreign(true, UserAdoptionPolicy::Never);
    assert_eq!(sql(&made), vec![]);
    assert_eq!(synced(&made), (true, "Synced".into()));
    assert_eq!(
        made.status.as_ref().unwrap().fields.owner.as_deref(),
        Some(UID)
    );
}

#[test]
fn a_new_password_in_the_secret_is_set_on_the_user() {
    let mut f = ours(facts(), &[Select, ShowView]);
    f.password = Password::Generated {
        existing: Some(Sensitive::new("rotated")),
        exists: true,
        ours: true,
        candidate: Sensitive::new("fresh"),
    };
    assert_eq!(
        sql(&plan(&f)),
        vec![SqlStep::SetPassword {
            username: "reader".into(),
            password: Sensitive::new("rotated")
        }]
    );
}

#[test]
fn nothing_is_run_on_doubt_or_for_a_name_that_is_not_a_dbusers_to_make() {
    let mut master = facts();
    master.user.spec.username = Some("admin".into());
    let mut rds = facts();
    rds.user.spec.username = Some("rdsadmin".into());
    let mut root = facts();
    root.user.spec.username = Some("root".into());
    let mut pg_role = facts();
    pg_role.user.spec.username = Some("pg_monitor".into());
    let mut public = facts();
    public.user.spec.username = Some("PUBLIC".into());
    let mut unreachable = facts();
    unreachable.found = Some(Found::Unreachable("Access denied".into()));
    let mut unresolved = facts();
    unresolved.database = Database::Unresolved("DBInstance coffee is not Ready yet".into(), None);
    let mut no_master = facts();
    no_master.database = Database::Found(Box::new(DatabaseFacts {
        master_password: Err("not there yet".into()),
        ..db()
    }));
    let mut conflict = facts();
    conflict.password = Password::Generated {
        existing: None,
        exists: true,
        ours: false,
        candidate: Sensitive::new("fresh"),
    };
    for (what, f, reason) in [
        ("the master user", master, "InvalidSpec"),
        ("an RDS user", rds, "InvalidSpec"),
        ("MySQL's root", root, "InvalidSpec"),
        ("a PostgreSQL role", pg_role, "InvalidSpec"),
        ("PostgreSQL's public", public, "InvalidSpec"),
        (
            "the database unreachable",
            unreachable,
            "DatabaseUnreachable",
        ),
        ("the database not Ready", unresolved, "DatabaseNotReady"),
        ("no master password", no_master, "MasterPassword"),
        (
            "another's password Secret",
            conflict,
            "PasswordSecretConflict",
        ),
    ] {
        let plan = plan(&f);
        assert_eq!(sql(&plan), vec![], "{what}");
        assert!(
            !plan.steps.iter().any(|s| matches!(s, Step::Secret(_))),
            "{what}"
        );
        assert_eq!(synced(&plan), (false, reason.into()), "{what}");
    }
}

#[test]
fn the_connection_secret_holds_the_users_login_and_another_objects_secret_is_never_written() {
    let mut f = ours(facts(), &[Select, ShowView]);
    f.user.spec.connection_secret = Some(crate::database::parts::ConnectionSecretSpec {
        name: "reader-db".into(),
        extra_keys: [("APP_DB_USER".to_owned(), "{{ username }}".to_owned())].into(),
    });
    let plan = plan(&f);
    let Some(Step::Secret(SecretStep::WriteConnection { name, data, .. })) = plan.steps.first()
    else {
        panic!("{:?}", plan.steps)
    };
    assert_eq!(name, "reader-db");
    let value = |k: &str| data[k].expose().to_owned();
    assert_eq!(value("username"), "reader");
    assert_eq!(value("APP_DB_USER"), "reader");
    assert_eq!(value("password"), "user-pw");
    assert_eq!(value("dbname"), "COFFEE");
    let mut foreign = k8s_openapi::api::core::v1::Secret::default();
    foreign.metadata.name = Some("reader-db".into());
    f.secret = Some(foreign);
    let refused = super::plan(&f);
    assert!(refused.steps.is_empty(), "{:?}", refused.steps);
    assert_eq!(synced(&refused), (false, "ConnectionSecretConflict".into()));
}

#[test]
fn deletion_drops_only_its_own_user_keeps_a_retained_one_and_waits_on_doubt() {
    let deleting = |mut f: Facts| {
        f.user.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                "2026-12-05T00:00:00Z".parse().unwrap(),
            ));
        f
    };
    let drop = SqlStep::DropUser {
        username: "reader".into(),
        databases: vec![],
    };
    let mut retained = ours(facts(), &[Select]);
    retained.user.spec.deletion_policy = Some(UserDeletionPolicy::Retain);
    let mut unreachable = ours(facts(), &[Select]);
    unreachable.found = Some(Found::Unreachable("no answer".into()));
    let mut gone = ours(facts(), &[Select]);
    gone.database = Database::Gone;
    gone.found = None;
    let mut absent = ours(facts(), &[]);
    absent.found = Some(Found::User {
        user: None,
        password_logs_in: None,
    });
    // (what, the SQL, the finalizer removed)
    let rows: Vec<(&str, Facts, Vec<SqlStep>, bool)> = vec![
        (
            "its own user",
            ours(facts(), &[Select]),
            vec![drop.clone()],
            true,
        ),
        ("deletionPolicy Retain", retained, vec![], true),
        ("a user it never made", facts(), vec![], true),
        ("the database unreachable", unreachable, vec![], false),
        (
            "the database gone, and the user with it",
            gone,
            vec![],
            true,
        ),
        ("the user already gone", absent, vec![], true),
    ];
    for (what, f, steps, removed) in rows {
        let plan = plan(&deleting(f));
        assert_eq!(sql(&plan), steps, "{what}");
        let finalizer = plan.steps.contains(&Step::RemoveFinalizer);
        assert_eq!(finalizer, removed, "{what}");
        if let Some(i) = plan.steps.iter().position(|s| s == &Step::RemoveFinalizer) {
            assert_eq!(i, plan.steps.len() - 1, "{what}: the finalizer goes last");
        }
    }
    let mut retained = ours(facts(), &[Select]);
    retained.user.spec.deletion_policy = Some(UserDeletionPolicy::Retain);
    let kept = plan(&deleting(retained));
    assert!(
        kept.steps.contains(&Step::Secret(SecretStep::SetOwner {
            name: "reader-password".into(),
            owner_reference: false
        })),
        "the kept user's password Secret outlives the DBUser: {:?}",
        kept.steps
    );
}

#[test]
fn presets_give_what_their_docs_say() {
    let privileges = |preset| {
        Grant {
            database: "COFFEE".into(),
            preset: Some(preset),
            privileges: vec![],
        }
        .privileges()
    };
    assert_eq!(
        privileges(Preset::ReadOnly),
        BTreeSet::from([Select, ShowView])
    );
    assert!(privileges(Preset::ReadWrite).is_superset(&privileges(Preset::ReadOnly)));
    assert!(
        !privileges(Preset::ReadWrite).contains(&Drop),
        "no schema changes in ReadWrite"
    );
    for p in Privilege::ALL {
        assert_eq!(Privilege::parse(p.as_str()), Some(p));
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(
            json,
            format!("\"{}\"", p.as_str()),
            "the CRD names it as MySQL does"
        );
    }
}

/// An IAM token for `host` and the user `reader`, signed at `at` (seconds since the epoch).
fn token(host: &str, at: i64) -> String {
    let date = chrono::DateTime::from_timestamp(at, 0).unwrap();
    format!(
        "{host}:3306/?Action=connect&DBUser=reader&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date={}&X-Amz-Expires=900&X-Amz-Signature=ab",
        date.format("%Y%m%dT%H%M%SZ")
    )
}

/// A read-only user of this DBUser's with auth IAM, on a database with IAM authentication on,
/// with a connection Secret `reader-db` and a token made for this pass.
fn iam(user_iam: bool) -> Facts {
    let mut f = ours(facts(), &[Select, ShowView]);
    f.user.spec.auth = Some(UserAuth::Iam);
    f.user.spec.connection_secret = Some(crate::database::parts::ConnectionSecretSpec {
        name: "reader-db".into(),
        extra_keys: Default::default(),
    });
    if let Some(s) = f.user.status.as_mut() {
        s.password_hash = None;
    }
    f.password = Password::Generated {
        existing: None,
        exists: false,
        ours: false,
        candidate: Sensitive::new("fresh"),
    };
    if let Database::Found(db) = &mut f.database {
        db.iam_enabled = Some(true);
    }
    f.found = Some(Found::User {
        user: Some(ObservedUser {
            iam: user_iam,
            ..held(&[Select, ShowView])
        }),
        password_logs_in: None,
    });
    f.token = Some(Ok(Sensitive::new(token("coffee.example", EPOCH))));
    f
}

/// The connection Secret's data the plan writes, if it writes it.
fn written(plan: &Plan) -> Option<BTreeMap<String, String>> {
    plan.steps.iter().find_map(|s| match s {
        Step::Secret(SecretStep::WriteConnection { data, .. }) => Some(
            (data.iter())
                .map(|(k, v)| (k.clone(), v.expose().to_owned()))
                .collect(),
        ),
        _ => None,
    })
}

/// The Secret as this DBUser wrote it, with `password`.
fn secret_holding(f: &Facts, password: &str) -> k8s_openapi::api::core::v1::Secret {
    let mut fresh = f.clone();
    fresh.secret = None;
    let at = token_epoch(password);
    let made = at.map_or(token("coffee.example", EPOCH), |_| password.to_owned());
    fresh.token = Some(Ok(Sensitive::new(made)));
    fresh.epoch = at.unwrap_or(EPOCH);
    let mut data = written(&plan(&fresh)).expect("a Secret written");
    data.insert("password".into(), password.into());
    let mut s = k8s_openapi::api::core::v1::Secret::default();
    s.metadata.name = Some("reader-db".into());
    s.metadata.annotations = Some(
        [(
            crate::crd::SECRET_OWNER_ANNOTATION.to_owned(),
            UID.to_owned(),
        )]
        .into(),
    );
    s.metadata.owner_references = Some(vec![
        k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
            api_version: "rds.operator.rs/v1alpha1".into(),
            kind: "DBUser".into(),
            name: "reader".into(),
            uid: UID.into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        },
    ]);
    s.data = Some(
        (data.into_iter())
            .map(|(k, v)| (k, k8s_openapi::ByteString(v.into_bytes())))
            .collect(),
    );
    s
}

fn token_epoch(token: &str) -> Option<i64> {
    iam::signed_at(token, "coffee.example:3306/?Action=connect&DBUser=reader&")
}

#[test]
fn an_iam_user_waits_for_iam_authentication_on_its_database() {
    for (enabled, words) in [
        (Some(false), "has IAM database authentication off"),
        (None, "has not reported IAM database authentication yet"),
    ] {
        let mut f = iam(false);
        f.found = Some(Found::User {
            user: None,
            password_logs_in: None,
        });
        if let Database::Found(db) = &mut f.database {
            db.iam_enabled = enabled;
        }
        let plan = plan(&f);
        assert!(plan.steps.is_empty(), "{words}: {:?}", plan.steps);
        assert_eq!(synced(&plan), (false, "IAMAuthenticationOff".into()));
        let message = &plan.status.as_ref().unwrap().synced.message;
        assert!(message.contains(words), "{message}");
        assert!(message.contains("enableIAMDatabaseAuthentication: true"));
        assert_eq!(plan.requeue, Requeue::After(Duration::from_secs(60)));
    }
}

#[test]
fn an_iam_user_is_made_with_rds_plugin_and_no_password_and_its_secret_carries_the_token() {
    let mut f = iam(false);
    f.user.status = None;
    f.found = Some(Found::User {
        user: None,
        password_logs_in: None,
    });
    let plan = plan(&f);
    assert!(
        !(plan.steps.iter()).any(|s| matches!(s, Step::Secret(SecretStep::WritePassword { .. }))),
        "no password Secret for an IAM user: {:?}",
        plan.steps
    );
    let claim = (plan.steps.iter())
        .position(|s| matches!(s, Step::Claim(c) if c.owner.as_deref() == Some(UID)));
    let create =
        (plan.steps.iter()).position(|s| matches!(s, Step::Sql(SqlStep::CreateIamUser { .. }, _)));
    assert!(claim < create && claim.is_some(), "{:?}", plan.steps);
    assert_eq!(
        sql(&plan),
        vec![
            SqlStep::CreateIamUser {
                username: "reader".into()
            },
            grant(&[Select, ShowView]),
        ]
    );
    let data = written(&plan).expect("the connection Secret");
    assert_eq!(data["password"], token("coffee.example", EPOCH));
    assert_eq!(data["username"], "reader");
    let status = &plan.status.as_ref().unwrap().fields;
    assert_eq!(status.password_hash, None);
    assert_eq!(
        status.token_signed_at.as_deref(),
        Some("2026-12-05T00:00:00+00:00")
    );
    assert_eq!(
        status.iam_policy.as_deref(),
        Some(
            r#"{"Action":"rds-db:connect","Effect":"Allow","Resource":"arn:aws:rds-db:eu-west-1:123456789012:dbuser:db-ABCDEFGHIJ/reader"}"#
        )
    );
}

#[test]
fn the_token_in_the_secret_is_kept_until_it_is_due_and_then_replaced() {
    // (what, the token in the Secret, the time it was signed when kept)
    let rows = [
        (
            "a token of 5 minutes is kept",
            Some(token("coffee.example", EPOCH - 300)),
            Some(EPOCH - 300),
        ),
        (
            "a token of 10 minutes is replaced",
            Some(token("coffee.example", EPOCH - 600)),
            None,
        ),
        (
            "a token of another endpoint is replaced",
            Some(token("old.example", EPOCH - 10)),
            None,
        ),
        (
            "a token signed ahead of the clock is replaced",
            Some(token("coffee.example", EPOCH + 3600)),
            None,
        ),
        ("a password is replaced", Some("user-pw".to_owned()), None),
        ("no Secret yet", None, None),
    ];
    for (what, current, kept) in rows {
        let mut f = iam(true);
        f.settled = Duration::from_secs(3600);
        f.secret = current.map(|t| secret_holding(&f, &t));
        let plan = plan(&f);
        let signed = plan.status.as_ref().unwrap().fields.token_signed_at.clone();
        match kept {
            Some(at) => {
                assert_eq!(written(&plan), None, "{what}: {:?}", plan.steps);
                // Looked at again when it is due: 10 minutes after it was signed.
                let due = Duration::from_secs(u64::try_from(at + 600 - EPOCH).unwrap());
                assert_eq!(plan.requeue, Requeue::After(due), "{what}");
                let date = chrono::DateTime::from_timestamp(at, 0)
                    .unwrap()
                    .to_rfc3339();
                assert_eq!(signed, Some(date), "{what}");
                assert_eq!(synced(&plan), (true, "Synced".into()), "{what}");
            }
            None => {
                let data = written(&plan).unwrap_or_else(|| panic!("{what}: rewritten"));
                assert_eq!(data["password"], token("coffee.example", EPOCH), "{what}");
                assert_eq!(
                    signed.as_deref(),
                    Some("2026-12-05T00:00:00+00:00"),
                    "{what}"
                );
            }
        }
    }
}

#[test]
fn no_token_is_no_secret_written_and_a_wait() {
    let mut f = iam(true);
    f.token = Some(Err("no credentials to sign the token with".into()));
    let plan = plan(&f);
    assert_eq!(written(&plan), None);
    assert_eq!(synced(&plan), (false, "AuthToken".into()));
    let message = &plan.status.as_ref().unwrap().synced.message;
    assert!(message.contains("no credentials"), "{message}");
}

#[test]
fn a_change_between_a_password_and_iam_is_made_with_alter_user() {
    let to_iam = plan(&iam(false));
    assert_eq!(
        sql(&to_iam),
        vec![SqlStep::SetIam {
            username: "reader".into()
        }]
    );
    let mut to_password = ours(facts(), &[Select, ShowView]);
    if let Some(s) = to_password.user.status.as_mut() {
        s.password_hash = None;
    }
    to_password.found = Some(Found::User {
        user: Some(ObservedUser {
            iam: true,
            ..held(&[Select, ShowView])
        }),
        password_logs_in: None,
    });
    assert_eq!(
        sql(&plan(&to_password)),
        vec![SqlStep::SetPassword {
            username: "reader".into(),
            password: Sensitive::new("user-pw")
        }]
    );
    // An IAM user that is already one: nothing to run.
    assert_eq!(sql(&plan(&iam(true))), vec![]);
}

#[test]
fn a_failure_after_the_claim_keeps_the_user_this_dbusers() {
    use crate::managed::{Failure, Managed};
    let mut f = facts();
    f.user.status = None;
    let planned = plan(&f);
    let failure = Failure {
        reason: "SqlRefused",
        message: "GRANT refused",
        planned: Some(&planned),
        completed: 0,
        now: "2026-12-05T00:00:00Z",
    };
    let (status, _) = f.user.failed(&failure);
    assert_eq!(status.owner.as_deref(), Some(UID));
    assert_eq!(
        status.password_hash, None,
        "a password not set is set again"
    );
}

/// The read-only user of a PostgreSQL database, made by this DBUser.
fn postgres(held: ObservedUser) -> Facts {
    let mut f = ours(facts(), &[]);
    if let Database::Found(db) = &mut f.database {
        db.engine = "postgres".into();
        db.port = 5432;
    }
    f.found = Some(Found::User {
        user: Some(held),
        password_logs_in: None,
    });
    f
}

#[test]
fn in_postgresql_presets_are_its_table_privileges_and_a_privilege_it_lacks_is_refused() {
    use crate::dbuser::Grant;
    let mut f = postgres(ObservedUser::default());
    f.user.spec.grants[0].preset = Some(Preset::ReadWrite);
    let plan = plan(&f);
    let privileges = vec![Select, Insert, Update, Delete, CreateTemporaryTables];
    assert_eq!(sql(&plan), vec![grant(&privileges)]);
    let Step::Sql(_, master) = &plan.steps[0] else {
        panic!("{:?}", plan.steps)
    };
    assert_eq!(
        (master.engine, master.dbname.as_str()),
        (crate::dbuser::Engine::Postgres, "COFFEE")
    );
    f.user.spec.grants = vec![Grant {
        database: "COFFEE".into(),
        preset: None,
        privileges: vec![Select, Index, ShowView],
    }];
    let refused = super::plan(&f);
    assert!(sql(&refused).is_empty());
    assert_eq!(synced(&refused), (false, "InvalidSpec".into()));
    let message = &refused.status.as_ref().unwrap().synced.message;
    assert!(message.contains("no INDEX, SHOW VIEW"), "{message}");
}

#[test]
fn in_postgresql_a_privilege_held_in_part_is_granted_again_or_revoked() {
    let d = |p| ("COFFEE".to_owned(), p);
    // SELECT wanted, missing on a table made since; INSERT not wanted, on one table.
    let held = ObservedUser {
        privileges: [d(Select), d(Insert)].into(),
        incomplete: [d(Select), d(Insert)].into(),
        ..ObservedUser::default()
    };
    let plan = plan(&postgres(held));
    assert_eq!(
        sql(&plan),
        vec![
            SqlStep::Revoke {
                username: "reader".into(),
                database: "COFFEE".into(),
                privileges: vec![Insert],
            },
            grant(&[Select]),
        ]
    );
    // Deletion drops the role after its objects in its databases go to the master user.
    let mut f = postgres(held_in_postgres());
    f.user.metadata.deletion_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            "2026-12-05T00:00:00Z".parse().unwrap(),
        ));
    assert_eq!(
        sql(&super::plan(&f)),
        vec![SqlStep::DropUser {
            username: "reader".into(),
            databases: vec!["COFFEE".into()],
        }]
    );
}

fn held_in_postgres() -> ObservedUser {
    ObservedUser {
        privileges: [("COFFEE".to_owned(), Select)].into(),
        ..ObservedUser::default()
    }
}

/// The readers of a password user's changed connection Secret are rolled; an IAM user's never
/// are, though its Secret changes with every token (a volume brings each to its Pods).
#[test]
fn the_readers_of_a_password_users_secret_are_rolled_and_an_iam_users_are_not() {
    use crate::database::readers::{SECRET_VERSION, Workload, WorkloadKind};
    let reading = |mut f: Facts| {
        let mut secret = k8s_openapi::api::core::v1::Secret::default();
        secret.metadata.name = Some("reader-db".into());
        secret.metadata.annotations = Some([(SECRET_VERSION.into(), "4".into())].into());
        secret.metadata.owner_references = Some(vec![
            k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                uid: UID.into(),
                controller: Some(true),
                ..Default::default()
            },
        ]);
        f.secret = Some(secret);
        f.readers = Some(vec![Workload {
            kind: WorkloadKind::StatefulSet,
            name: "reports".into(),
            reads: ["reader-db".to_owned()].into(),
            opted_out: false,
            template: Default::default(),
            rolled_out: true,
        }]);
        f
    };
    let mut password = ours(facts(), &[Select, ShowView]);
    password.user.spec.connection_secret = iam(true).user.spec.connection_secret;
    let p = plan(&reading(password));
    let rolled = |p: &Plan| {
        (p.steps.iter())
            .filter_map(|s| match s {
                Step::Secret(SecretStep::RollReader(r)) => Some((r.name.clone(), r.version)),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(rolled(&p), [("reports".to_owned(), 4)]);
    let status = p.status.unwrap().fields.secret_readers.unwrap();
    assert_eq!(status.version, 4);
    let p = plan(&reading(iam(true)));
    assert_eq!(rolled(&p), []);
    assert_eq!(p.status.unwrap().fields.secret_readers, None);
}

mod rotation;
mod tokens;
