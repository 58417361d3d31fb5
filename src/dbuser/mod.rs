//! The `DBUser` kind: a user inside the database of a DBInstance or DBCluster of the namespace,
//! with a password of its own and its grants as data, kept as the spec says (a grant added by
//! hand is reported, and revoked unless `grantPolicy` is Report), with a connection Secret in the
//! database's keys, and dropped (or kept) with the object. The operator logs in as the database's
//! master user to make it. MySQL, MariaDB and PostgreSQL engines (and Aurora, through the cluster's
//! writer). Read (`controller.rs`), plan (pure, `plan.rs`), act (`sql/`), report.

pub mod controller;
pub mod plan;
pub mod rotation;
pub mod sql;

use std::collections::BTreeSet;

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::crd::LocalRef;
use crate::database::parts::{ConnectionSecretSpec, SecretKeyReference};

/// A user inside a database managed by rds-operator.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "DBUser",
    plural = "dbusers",
    shortname = "dbu",
    category = "rds",
    namespaced,
    status = "DBUserStatus",
    doc = "A user inside the database of a DBInstance or DBCluster, managed by rds-operator.",
    printcolumn(name = "User", type_ = "string", json_path = ".status.username"),
    printcolumn(name = "Database", type_ = "string", json_path = ".status.database"),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Ready\")].status"
    ),
    printcolumn(
        name = "Synced",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Synced\")].status"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[x_kube(
    validation = kube::core::Rule::new("has(self.dbInstanceRef) != has(self.dbClusterRef)").message("name the user's database: exactly one of dbInstanceRef and dbClusterRef"),
    validation = kube::core::Rule::new("(has(self.dbInstanceRef) ? self.dbInstanceRef.name : '') == (has(oldSelf.dbInstanceRef) ? oldSelf.dbInstanceRef.name : '') && (has(self.dbClusterRef) ? self.dbClusterRef.name : '') == (has(oldSelf.dbClusterRef) ? oldSelf.dbClusterRef.name : '')").message("the user's database is immutable: make another DBUser"),
    validation = kube::core::Rule::new("has(self.username) == has(oldSelf.username) && (!has(self.username) || self.username == oldSelf.username)").message("username is immutable").field_path(".username"),
    validation = kube::core::Rule::new("!has(self.auth) || self.auth != 'IAM' || !has(self.passwordSecretRef)").message("a user with auth IAM logs in with a token, not a password: leave passwordSecretRef out"),
    validation = kube::core::Rule::new("!has(self.passwordRotation) || !has(self.auth) || self.auth != 'IAM'").message("a user with auth IAM has no password to rotate: leave passwordRotation out").field_path(".passwordRotation"),
    validation = kube::core::Rule::new("!has(self.passwordRotation) || !has(self.passwordSecretRef)").message("a rotated user's passwords are made by the operator: leave passwordSecretRef out").field_path(".passwordRotation"),
    validation = kube::core::Rule::new("!has(self.passwordRotation) || !has(self.username) || size(self.username) <= 26").message("with passwordRotation the username is at most 26 characters: its second login is <username>_clone").field_path(".username"),
)]
#[serde(rename_all = "camelCase")]
pub struct DBUserSpec {
    /// The DBInstance of this namespace whose database the user is in (a database of another
    /// namespace cannot be named). Immutable.
    pub db_instance_ref: Option<LocalRef>,
    /// The DBCluster of this namespace whose database the user is in, reached through its writer.
    /// Immutable.
    pub db_cluster_ref: Option<LocalRef>,
    /// The user's name in the database; defaults to metadata.name. Letters, digits and
    /// underscores, a letter or underscore first, at most 32 characters (MySQL's limit). The
    /// master user and the users RDS makes (rdsadmin, rdsrepladmin, mysql.*) are refused.
    /// Immutable.
    #[schemars(
        length(min = 1, max = 32),
        regex(pattern = r"^[a-zA-Z_][a-zA-Z0-9_]*$")
    )]
    pub username: Option<String>,
    /// How the user logs in: Password (default), or IAM: with an IAM authentication token, which
    /// the connection Secret carries in place of a password, made again every 10 minutes
    /// (`--iam-token-refresh`) of the 15 it is valid. The database must have
    /// enableIAMDatabaseAuthentication on; the IAM policy statement an app's role needs is in
    /// status.iamPolicy.
    pub auth: Option<UserAuth>,
    /// The user's password, from a key of a Secret of the namespace; by default one is generated
    /// into the Secret `<name>-password` (key `password`), owned by the DBUser. A new value in the
    /// Secret is set on the user (ALTER USER).
    pub password_secret_ref: Option<SecretKeyReference>,
    /// Rotate the user's password on a schedule, or at once when the annotation
    /// rds.operator.rs/rotate-now takes a new value, so that running apps survive it
    /// (docs/rotation.md). The passwords are then generated into `<name>-password`.
    pub password_rotation: Option<PasswordRotation>,
    /// What the user may do, a grant per database. A privilege the user holds that no grant gives
    /// (one granted by hand) is reported, and revoked unless grantPolicy is Report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    pub grants: Vec<Grant>,
    /// Enforce (default): a privilege no grant gives is revoked, and reported; Report: it is only
    /// reported (condition Synced False, reason GrantDrift, and an Event).
    pub grant_policy: Option<GrantPolicy>,
    /// What deleting the DBUser does to the user: Delete (default) drops it; Retain keeps it
    /// (and its password Secret, without its ownerReference).
    pub deletion_policy: Option<UserDeletionPolicy>,
    /// Whether a user of this name that exists and is not this object's is taken over (its
    /// password is then set to this object's): Never (default) refuses it, Adopt takes it over.
    pub adoption_policy: Option<UserAdoptionPolicy>,
    /// The Secret to write the user's connection details to: the database's keys (host, port,
    /// username, password, dbname, engine, uri, and ca.crt with sslmode when the operator has a
    /// CA bundle) and extraKeys, so an app switches from the master user by naming this Secret.
    pub connection_secret: Option<ConnectionSecretSpec>,
}

/// How a user's password is rotated.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasswordRotation {
    /// AlternatingUsers: two logins with the same grants, `<username>` and `<username>_clone`.
    /// A rotation sets a new password on the one the connection Secret does not hold, checks that
    /// it logs in, then switches the Secret to it (and rolls its readers, with the operator's
    /// --roll-secret-readers); the other keeps logging in until retireAfter has passed and every
    /// reader has the new Secret, then it is locked.
    pub strategy: RotationStrategy,
    /// When to rotate: a cron expression in UTC (five fields, or six with seconds first), such as
    /// "0 3 * * 0" for Sundays at 03:00. Unset: only when asked (rds.operator.rs/rotate-now).
    #[schemars(length(min = 1, max = 128))]
    pub schedule: Option<String>,
    /// How long the login the Secret left keeps logging in after a rotation, at least: it is
    /// locked then, once the Secret holds the new login and every reader has rolled out the new
    /// Secret, never in the pass that switches it. With rolling off nothing tells when an app
    /// that read the Secret at start has the new one: retireAfter is then all there is, so give
    /// it the time your apps take. Default: 1h when the operator rolls the Secret's readers
    /// (--roll-secret-readers); never retired when it does not (a rotation then waits for it).
    #[x_kube(validation = kube::core::Rule::new("duration(self) >= duration('0s')").message("retireAfter must be a duration, such as 30m or 1h"))]
    pub retire_after: Option<kube::core::Duration>,
}

/// The rotation strategies.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum RotationStrategy {
    /// Two logins, the Secret switched between them.
    #[default]
    AlternatingUsers,
}

/// Where the rotations of a user's password stand.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RotationStatus {
    /// The login the connection Secret holds.
    pub active: String,
    /// A rotation under way: the login given a new password, not yet checked to log in with it.
    pub pending: Option<String>,
    /// The keyed hash (HMAC under the operator's key) of the pending login's new password: a
    /// stored password without it was not stored by this rotation.
    pub pending_hash: Option<String>,
    /// When the last rotation switched the connection Secret (RFC 3339).
    pub last_rotated: Option<String>,
    /// The rds.operator.rs/rotate-now value last acted on.
    pub last_request: Option<String>,
    /// The login the last rotation left, still able to log in until it is retired (locked).
    pub retiring: Option<String>,
    /// When the retiring login may be locked, once every reader has the new Secret (RFC 3339).
    pub retire_at: Option<String>,
    /// Whether this DBUser made (or took over) the `<username>_clone` login: the only one it
    /// alters, locks or drops.
    pub clone_made: Option<bool>,
}

/// The engine families a DBUser makes users in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    MySql,
    Postgres,
}

impl Engine {
    /// The family of an RDS engine name; None for one a DBUser does not make users in.
    pub fn of(engine: &str) -> Option<Engine> {
        match engine {
            "mysql" | "mariadb" | "aurora-mysql" => Some(Engine::MySql),
            "postgres" | "aurora-postgresql" => Some(Engine::Postgres),
            _ => None,
        }
    }
}

impl DBUser {
    /// The user's name in the database: spec.username, or metadata.name.
    pub fn username(&self) -> String {
        (self.spec.username.clone()).unwrap_or_else(|| kube::ResourceExt::name_any(self))
    }

    /// With passwordRotation: the second login, `<username>_clone`.
    pub fn clone_username(&self) -> Option<String> {
        (self.spec.password_rotation.as_ref()).map(|_| format!("{}_clone", self.username()))
    }
}

/// How a user logs in.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum UserAuth {
    /// With a password (MySQL's default plugin).
    #[default]
    Password,
    /// With an IAM authentication token (`IDENTIFIED WITH AWSAuthenticationPlugin AS 'RDS'`).
    #[serde(rename = "IAM")]
    Iam,
}

/// The privileges of a user on one database.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[x_kube(validation = kube::core::Rule::new("has(self.preset) != (size(self.privileges) > 0)").message("a grant takes a preset or privileges, not both"))]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    /// The database (a MySQL schema; in PostgreSQL, a database, whose schema public the
    /// privileges are on) the privileges are on.
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[a-zA-Z0-9_$]+$"))]
    pub database: String,
    /// ReadOnly (SELECT, SHOW VIEW) or ReadWrite (ReadOnly's, and INSERT, UPDATE, DELETE, CREATE
    /// TEMPORARY TABLES, LOCK TABLES, EXECUTE). In PostgreSQL, on every table of schema public:
    /// ReadOnly is SELECT, ReadWrite adds INSERT, UPDATE, DELETE and TEMPORARY on the database.
    pub preset: Option<Preset>,
    /// Or these privileges. PostgreSQL has SELECT, INSERT, UPDATE, DELETE, REFERENCES and TRIGGER
    /// (on every table of schema public), CREATE (on schema public) and CREATE TEMPORARY TABLES.
    #[serde(default)]
    #[schemars(length(max = 20))]
    pub privileges: Vec<Privilege>,
}

/// A grant's preset.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum Preset {
    ReadOnly,
    ReadWrite,
}

/// A privilege on a database's objects, as MySQL names it.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum Privilege {
    #[serde(rename = "SELECT")]
    Select,
    #[serde(rename = "INSERT")]
    Insert,
    #[serde(rename = "UPDATE")]
    Update,
    #[serde(rename = "DELETE")]
    Delete,
    #[serde(rename = "CREATE")]
    Create,
    #[serde(rename = "DROP")]
    Drop,
    #[serde(rename = "INDEX")]
    Index,
    #[serde(rename = "ALTER")]
    Alter,
    #[serde(rename = "REFERENCES")]
    References,
    #[serde(rename = "CREATE TEMPORARY TABLES")]
    CreateTemporaryTables,
    #[serde(rename = "LOCK TABLES")]
    LockTables,
    #[serde(rename = "EXECUTE")]
    Execute,
    #[serde(rename = "CREATE VIEW")]
    CreateView,
    #[serde(rename = "SHOW VIEW")]
    ShowView,
    #[serde(rename = "CREATE ROUTINE")]
    CreateRoutine,
    #[serde(rename = "ALTER ROUTINE")]
    AlterRoutine,
    #[serde(rename = "EVENT")]
    Event,
    #[serde(rename = "TRIGGER")]
    Trigger,
}

impl Privilege {
    pub const ALL: [Privilege; 18] = [
        Privilege::Select,
        Privilege::Insert,
        Privilege::Update,
        Privilege::Delete,
        Privilege::Create,
        Privilege::Drop,
        Privilege::Index,
        Privilege::Alter,
        Privilege::References,
        Privilege::CreateTemporaryTables,
        Privilege::LockTables,
        Privilege::Execute,
        Privilege::CreateView,
        Privilege::ShowView,
        Privilege::CreateRoutine,
        Privilege::AlterRoutine,
        Privilege::Event,
        Privilege::Trigger,
    ];

    /// The privilege as MySQL writes it in GRANT and in information_schema.
    pub fn as_str(self) -> &'static str {
        match self {
            Privilege::Select => "SELECT",
            Privilege::Insert => "INSERT",
            Privilege::Update => "UPDATE",
            Privilege::Delete => "DELETE",
            Privilege::Create => "CREATE",
            Privilege::Drop => "DROP",
            Privilege::Index => "INDEX",
            Privilege::Alter => "ALTER",
            Privilege::References => "REFERENCES",
            Privilege::CreateTemporaryTables => "CREATE TEMPORARY TABLES",
            Privilege::LockTables => "LOCK TABLES",
            Privilege::Execute => "EXECUTE",
            Privilege::CreateView => "CREATE VIEW",
            Privilege::ShowView => "SHOW VIEW",
            Privilege::CreateRoutine => "CREATE ROUTINE",
            Privilege::AlterRoutine => "ALTER ROUTINE",
            Privilege::Event => "EVENT",
            Privilege::Trigger => "TRIGGER",
        }
    }

    pub fn parse(text: &str) -> Option<Privilege> {
        Privilege::ALL.into_iter().find(|p| p.as_str() == text)
    }

    /// The privileges a DBUser grants in PostgreSQL on every table of schema public, as
    /// PostgreSQL names them.
    pub const POSTGRES_TABLE: [Privilege; 6] = [
        Privilege::Select,
        Privilege::Insert,
        Privilege::Update,
        Privilege::Delete,
        Privilege::References,
        Privilege::Trigger,
    ];

    /// Whether PostgreSQL has the privilege as a DBUser grants it: a table privilege, CREATE on
    /// schema public, or CREATE TEMPORARY TABLES (TEMPORARY on the database).
    pub fn in_postgres(self) -> bool {
        Privilege::POSTGRES_TABLE.contains(&self)
            || matches!(self, Privilege::Create | Privilege::CreateTemporaryTables)
    }
}

impl Grant {
    /// The privileges the grant gives in MySQL.
    pub fn privileges(&self) -> BTreeSet<Privilege> {
        self.privileges_in(false)
    }

    /// The privileges the grant gives, in PostgreSQL (`postgres`) or MySQL: a preset is what the
    /// engine has of it (PostgreSQL: ReadOnly is SELECT; ReadWrite adds INSERT, UPDATE, DELETE
    /// and CREATE TEMPORARY TABLES, as TEMPORARY on the database).
    pub fn privileges_in(&self, postgres: bool) -> BTreeSet<Privilege> {
        use Privilege::*;
        match (self.preset, postgres) {
            (Some(Preset::ReadOnly), true) => [Select].into(),
            (Some(Preset::ReadWrite), true) => {
                [Select, Insert, Update, Delete, CreateTemporaryTables].into()
            }
            _ => self.mysql_privileges(),
        }
    }

    fn mysql_privileges(&self) -> BTreeSet<Privilege> {
        use Privilege::*;
        match self.preset {
            Some(Preset::ReadOnly) => [Select, ShowView].into(),
            Some(Preset::ReadWrite) => [
                Select,
                ShowView,
                Insert,
                Update,
                Delete,
                CreateTemporaryTables,
                LockTables,
                Execute,
            ]
            .into(),
            None => self.privileges.iter().copied().collect(),
        }
    }
}

/// What is done with privileges no grant gives.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum GrantPolicy {
    /// Revoke them, and report them.
    #[default]
    Enforce,
    /// Only report them.
    Report,
}

/// What deleting the DBUser does to the user.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum UserDeletionPolicy {
    /// DROP USER.
    #[default]
    Delete,
    /// Keep the user and its password Secret.
    Retain,
}

/// Whether an existing user that is not the object's is taken over.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum UserAdoptionPolicy {
    /// Refuse it.
    #[default]
    Never,
    /// Take it over: its password becomes this object's, its grants the spec's.
    Adopt,
}

/// What the operator observed of the user.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DBUserStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// The user's name in the database.
    pub username: Option<String>,
    /// The RDS identifier of the instance or cluster the user is in.
    pub database: Option<String>,
    /// The DBUser's uid, once it made or adopted the user: the only user it alters or drops.
    pub owner: Option<String>,
    /// A keyed hash of the password last set on the user (HMAC under the operator's key): a new
    /// one in the Secret is set again.
    pub password_hash: Option<String>,
    /// The privileges the user holds, as `PRIVILEGE on database` (the last read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grants: Vec<String>,
    /// The last privileges found that no grant gives, in words, and when.
    pub last_drift: Option<String>,
    /// Name of the connection Secret last written.
    pub connection_secret: Option<String>,
    /// The workloads of the namespace that read the connection Secret, rolled to its version when
    /// its data changes (with the operator's --roll-secret-readers; not for auth IAM, whose
    /// tokens a volume brings), and their rollouts.
    pub secret_readers: Option<crate::database::readers::SecretReaders>,
    /// With passwordRotation: the logins, which one the connection Secret holds, and the last
    /// rotation.
    pub rotation: Option<RotationStatus>,
    /// With auth IAM: when the token in the connection Secret was signed (RFC 3339); it is valid
    /// 15 minutes from then.
    pub token_signed_at: Option<String>,
    /// With auth IAM: the IAM policy statement a role needs to log in as the user (rds-db:connect
    /// on the user of the database's resource id), as JSON.
    pub iam_policy: Option<String>,
}

/// The user as the database shows it: the privileges it holds, as (database, privilege); a
/// privilege the operator cannot name (global, on a table, USAGE aside) as its words.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedUser {
    /// Whether it logs in with IAM tokens (its plugin is AWSAuthenticationPlugin).
    pub iam: bool,
    pub privileges: BTreeSet<(String, Privilege)>,
    /// Of those, the ones held only in part (PostgreSQL: on some tables of schema public, or not
    /// by default on the tables made later): granted again when wanted.
    pub incomplete: BTreeSet<(String, Privilege)>,
    /// Privileges beyond what a DBUser grants (global or on one table), in words: always
    /// unwanted.
    pub other: Vec<String>,
}
