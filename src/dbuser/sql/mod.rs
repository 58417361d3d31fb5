//! The SQL a DBUser runs, logged in as the database's master user: MySQL, MariaDB and Aurora MySQL
//! (`mysql.rs`), PostgreSQL and Aurora PostgreSQL (`postgres.rs`). Each call makes its own login
//! and ends it: reading the user, running one step, or trying a user's own password.

mod mysql;
mod postgres;

use std::time::Duration;

use super::plan::SqlStep;
use super::{Engine, ObservedUser};
use crate::sensitive::Sensitive;

/// How long a login may take before the database counts as unreachable.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(10);

/// A login to the database.
pub struct Login<'a> {
    pub engine: Engine,
    pub host: &'a str,
    pub port: i32,
    pub user: &'a str,
    pub password: &'a Sensitive,
    /// The database to log in to (PostgreSQL's logins are to one database).
    pub database: &'a str,
    pub ca_bundle: Option<&'a str>,
}

impl<'a> Login<'a> {
    /// The database's master login (None: its password is not known).
    pub fn master(
        db: &'a crate::dbuser::plan::DatabaseFacts,
        ca_bundle: Option<&'a str>,
    ) -> Option<Login<'a>> {
        Some(Login {
            engine: db.family(),
            host: &db.host,
            port: db.port,
            user: &db.master_username,
            password: db.master_password.as_ref().ok()?,
            database: db.login_database(),
            ca_bundle,
        })
    }
}

/// Why a step did not run: no login (retried), or the database refused a statement.
#[derive(Debug, PartialEq)]
pub enum Failure {
    Unreachable(String),
    Refused(String),
}

/// The user and its privileges on `databases` (PostgreSQL reads each; MySQL's are server-wide),
/// or None when there is no such user; Err: the engine's message (never a password).
pub async fn read(
    login: &Login<'_>,
    username: &str,
    databases: &[String],
) -> Result<Option<ObservedUser>, String> {
    match login.engine {
        Engine::MySql => mysql::read(login, username).await,
        Engine::Postgres => postgres::read(login, username, databases).await,
    }
}

/// Runs one step (PostgreSQL: logged in to the database the step is about).
pub async fn run(login: &Login<'_>, step: &SqlStep) -> Result<(), Failure> {
    match login.engine {
        Engine::MySql => mysql::run(login, step).await,
        Engine::Postgres => postgres::run(login, step).await,
    }
}

/// Whether this login succeeds (the engine refusing it, or not answering, is false).
pub async fn logs_in(login: &Login<'_>) -> bool {
    match login.engine {
        Engine::MySql => mysql::logs_in(login).await,
        Engine::Postgres => postgres::logs_in(login).await,
    }
}

/// This login, or the engine's message why not (never with the password).
pub async fn try_login(login: &Login<'_>) -> Result<(), String> {
    match login.engine {
        Engine::MySql => mysql::try_login(login).await,
        Engine::Postgres => postgres::try_login(login).await,
    }
}
