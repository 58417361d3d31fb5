//! What the DBUser plan decides on (the facts the read step gathers) and what it decides (its
//! steps and its plan).

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;

use crate::database::secret::SecretStep;
use crate::dbuser::{DBUser, DBUserStatus, Engine, ObservedUser, Privilege, UserAuth};
use crate::managed::plan::{KindPlan, KindStatus};
use crate::sensitive::Sensitive;

/// A step of a DBUser, each idempotent.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    AddFinalizer,
    RemoveFinalizer,
    /// The generated password Secret, or the connection Secret.
    Secret(SecretStep),
    /// The generated password Secret with both logins' passwords (passwordRotation).
    WritePasswords {
        base: Sensitive,
        clone: Sensitive,
    },
    /// The status written before the user is made, saying it is this DBUser's: a crash after
    /// CREATE USER leaves a user the next pass knows as its own.
    Claim(Box<DBUserStatus>),
    /// SQL run in the database, logged in as its master user.
    Sql(SqlStep, Box<Master>),
}

/// How the operator logs in to run a step: the database's endpoint and its master user.
#[derive(Clone, Debug, PartialEq)]
pub struct Master {
    pub engine: Engine,
    pub host: String,
    pub port: i32,
    pub username: String,
    pub password: Sensitive,
    /// The database to log in to (PostgreSQL): the database object's own.
    pub dbname: String,
}

/// A change in the database.
#[derive(Clone, Debug, PartialEq)]
pub enum SqlStep {
    CreateUser {
        username: String,
        password: Sensitive,
    },
    SetPassword {
        username: String,
        password: Sensitive,
    },
    Grant {
        username: String,
        database: String,
        privileges: Vec<Privilege>,
    },
    /// A user that logs in with IAM tokens.
    CreateIamUser { username: String },
    /// A user made to log in with IAM tokens from now on.
    SetIam { username: String },
    Revoke {
        username: String,
        database: String,
        privileges: Vec<Privilege>,
    },
    /// Every privilege, for privileges no grant gives beyond one database's (global, or on one
    /// table): the grants the spec gives follow as Grant steps.
    RevokeAll {
        username: String,
        /// PostgreSQL: the databases to revoke in (the grants' and the database object's).
        databases: Vec<String>,
    },
    /// The user may log in no more (MySQL's ACCOUNT LOCK, PostgreSQL's NOLOGIN).
    Lock { username: String },
    /// The user may log in again.
    Unlock { username: String },
    DropUser {
        username: String,
        /// PostgreSQL: the databases whose objects of the user's go to the master user first.
        databases: Vec<String>,
    },
}

pub type Plan = KindPlan<Step, KindStatus<DBUserStatus>>;

/// The database the user is in, as the read step found it.
#[derive(Clone, Debug, PartialEq)]
pub enum Database {
    /// Not there, not Ready, or not one a user can be made in: why, in words; and what is known
    /// of it while it is not Ready (its endpoint: an IAM user's token is still renewed for it).
    Unresolved(String, Option<Box<DatabaseFacts>>),
    /// The DBInstance or DBCluster is gone (at deletion: so is the user).
    Gone,
    Found(Box<DatabaseFacts>),
}

impl Database {
    /// What is known of the database: all of it when found, its endpoint while it is not Ready.
    pub fn known(&self) -> Option<&DatabaseFacts> {
        match self {
            Database::Found(db) | Database::Unresolved(_, Some(db)) => Some(db),
            Database::Unresolved(_, None) | Database::Gone => None,
        }
    }
}

/// A database the user can be made in.
#[derive(Clone, Debug, PartialEq)]
pub struct DatabaseFacts {
    /// The RDS identifier.
    pub identifier: String,
    /// The instance's endpoint, or the cluster's writer (a global database's writer endpoint, for
    /// a secondary cluster: the user is made on the primary, and replicated).
    pub host: String,
    pub port: i32,
    /// A secondary cluster's own reader endpoint (the connection Secret's readerHost).
    pub reader_host: Option<String>,
    pub engine: String,
    /// The database's own database name (the connection Secret's dbname when no grant names one).
    pub dbname: String,
    pub master_username: String,
    /// The master user's password, or why it cannot be had.
    pub master_password: Result<Sensitive, String>,
    /// Whether RDS has IAM database authentication on for it (None: not known yet).
    pub iam_enabled: Option<bool>,
    /// Its ARN, and its resource id (db-... or cluster-...): what an IAM policy names.
    pub arn: Option<String>,
    pub resource_id: Option<String>,
}

impl DatabaseFacts {
    pub(super) fn master(&self, password: &Sensitive) -> Box<Master> {
        Box::new(Master {
            engine: self.family(),
            host: self.host.clone(),
            port: self.port,
            username: self.master_username.clone(),
            password: password.clone(),
            dbname: self.login_database().to_owned(),
        })
    }

    /// Its engine family (the read step finds only a database of a family it knows).
    pub fn family(&self) -> Engine {
        Engine::of(&self.engine).unwrap_or(Engine::MySql)
    }

    /// Whether it is a PostgreSQL database (RDS for PostgreSQL or Aurora PostgreSQL).
    pub fn postgres(&self) -> bool {
        self.family() == Engine::Postgres
    }

    /// The database the master user logs in to: its own, or PostgreSQL's `postgres`.
    pub fn login_database(&self) -> &str {
        match (self.dbname.is_empty(), self.postgres()) {
            (true, true) => "postgres",
            _ => &self.dbname,
        }
    }
}

/// The user's password, as read.
#[derive(Clone, Debug, PartialEq)]
pub enum Password {
    /// spec.passwordSecretRef: its value, or why it cannot be read.
    Referenced(Result<Sensitive, String>),
    /// The generated Secret `<name>-password`: its value (None: absent, or without the key),
    /// whether a Secret of the name exists and is the DBUser's, and a fresh value to write.
    Generated {
        existing: Option<Sensitive>,
        exists: bool,
        ours: bool,
        candidate: Sensitive,
    },
}

/// What the read step found in the database, logged in as the master user.
#[derive(Clone, Debug, PartialEq)]
pub enum Found {
    /// The master user could not log in or the database did not answer: AWS's or the engine's
    /// message.
    Unreachable(String),
    /// The user, or None when there is none, and (when it exists and status does not say it is
    /// the DBUser's) whether the DBUser's password logs in as it: a user this DBUser made before
    /// its status was written.
    User {
        user: Option<ObservedUser>,
        password_logs_in: Option<bool>,
    },
}

/// Everything the plan decides on.
#[derive(Clone, Debug)]
pub struct Facts {
    pub user: DBUser,
    pub database: Database,
    /// None when the database was not reached (it is not resolved, or the object is deleted and
    /// keeps the user).
    pub found: Option<Found>,
    pub password: Password,
    /// The connection Secret as it is now.
    pub secret: Option<Secret>,
    /// The workloads of the namespace, when the connection Secret's readers are to be rolled or
    /// their rollout followed (`readers::to_list`); None otherwise.
    pub readers: Option<Vec<crate::database::readers::Workload>>,
    pub hash_key: Sensitive,
    pub ca_bundle: Option<String>,
    /// With passwordRotation, the database found: the `<username>_clone` login as the master
    /// login found it.
    pub clone: Option<Found>,
    /// Its password, under `clone-password` in the generated password Secret.
    pub clone_password: Option<Sensitive>,
    /// With a rotation pending: whether its login logs in with its stored password, or the
    /// engine's message why not (None: not tried).
    pub pending_login: Option<Result<(), String>>,
    /// Whether the operator rolls the readers of connection Secrets (`--roll-secret-readers`).
    pub roll_readers: bool,
    /// With auth IAM and the database found: a token made now for the user, or why none could be.
    pub token: Option<Result<Sensitive, String>>,
    /// How old the token in the connection Secret may grow before another replaces it.
    pub token_refresh: Duration,
    pub now: String,
    /// Now, in seconds since the epoch.
    pub epoch: i64,
    /// How soon to look again while something is waited for.
    pub busy: Duration,
    /// How often the user's privileges are read again.
    pub settled: Duration,
}

impl Facts {
    /// The user's name in the database.
    pub fn username(&self) -> String {
        self.user.username()
    }

    pub(super) fn uid(&self) -> String {
        self.user.metadata.uid.clone().unwrap_or_default()
    }

    pub(super) fn status(&self) -> DBUserStatus {
        self.user.status.clone().unwrap_or_default()
    }

    pub(super) fn ours(&self) -> bool {
        self.status().owner.is_some_and(|o| o == self.uid())
    }

    /// Whether the user logs in with IAM tokens.
    pub fn iam(&self) -> bool {
        self.user.spec.auth == Some(UserAuth::Iam)
    }
}

/// The name of the generated password Secret.
pub fn password_secret(user: &DBUser) -> String {
    format!("{}-password", user.name_any())
}
