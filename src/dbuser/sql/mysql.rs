//! The SQL a DBUser runs in MySQL, MariaDB and Aurora MySQL, logged in as the master user (over
//! TLS, verified against the operator's CA bundle when it has one): read a user and its privileges
//! (information_schema), and the steps (CREATE USER, ALTER USER, GRANT, REVOKE, DROP USER). The
//! names in a statement are the spec's, held by the CRD's patterns to letters, digits, `_` and
//! `$`. A password can only be a string literal in CREATE USER and ALTER USER (MariaDB takes no
//! parameter there): it is escaped, and taken out of whatever the server answers. A user with auth
//! IAM is made with RDS's plugin, AWSAuthenticationPlugin, and no password.

use std::collections::BTreeSet;

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder, SslOpts};

use super::{Failure, LOGIN_TIMEOUT, Login};
use crate::dbuser::plan::SqlStep;
use crate::dbuser::{ObservedUser, Privilege};
use crate::sensitive::Sensitive;

/// A connection, or the engine's message why not (never with the password).
async fn connect(login: &Login<'_>) -> Result<Conn, String> {
    let mut opts = OptsBuilder::default()
        .ip_or_hostname(login.host)
        .tcp_port(u16::try_from(login.port).unwrap_or(3306))
        .user(Some(login.user))
        .pass(Some(login.password.expose()))
        .prefer_socket(false);
    if let Some(bundle) = login.ca_bundle {
        let root = bundle.as_bytes().to_vec().into();
        opts = opts.ssl_opts(SslOpts::default().with_root_certs(vec![root]));
    }
    match tokio::time::timeout(LOGIN_TIMEOUT, Conn::new(Opts::from(opts))).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "no answer from {}:{} within {}s",
            login.host,
            login.port,
            LOGIN_TIMEOUT.as_secs()
        )),
    }
}

/// Whether this login succeeds (the engine refusing it, or not answering, is false).
pub async fn logs_in(login: &Login<'_>) -> bool {
    try_login(login).await.is_ok()
}

/// This login, or the engine's message why not (never with the password).
pub async fn try_login(login: &Login<'_>) -> Result<(), String> {
    let conn = connect(login).await?;
    let _ = conn.disconnect().await;
    Ok(())
}

/// The user and its privileges, read over one login.
pub async fn read(login: &Login<'_>, username: &str) -> Result<Option<ObservedUser>, String> {
    let mut conn = connect(login).await?;
    let read = user(&mut conn, username).await;
    let _ = conn.disconnect().await;
    read
}

/// One step, over a login of its own.
pub async fn run(login: &Login<'_>, step: &SqlStep) -> Result<(), Failure> {
    let mut conn = connect(login).await.map_err(Failure::Unreachable)?;
    let done = act(&mut conn, step).await;
    let _ = conn.disconnect().await;
    done.map_err(Failure::Refused)
}

/// The user `username`@`%` and its privileges, or None when there is none.
async fn user(conn: &mut Conn, username: &str) -> Result<Option<ObservedUser>, String> {
    let err = |e: mysql_async::Error| e.to_string();
    let plugin: Option<Option<String>> = (conn.exec_first(
        "SELECT plugin FROM mysql.user WHERE User = ? AND Host = '%'",
        (username,),
    ))
    .await
    .map_err(err)?;
    let Some(plugin) = plugin else {
        return Ok(None);
    };
    let grantee = format!("'{username}'@'%'");
    let schema: Vec<(String, String)> = (conn.exec(
        "SELECT TABLE_SCHEMA, PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES \
         WHERE GRANTEE = ?",
        (&grantee,),
    ))
    .await
    .map_err(err)?;
    let global: Vec<String> = (conn.exec(
        "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES \
         WHERE GRANTEE = ? AND PRIVILEGE_TYPE <> 'USAGE'",
        (&grantee,),
    ))
    .await
    .map_err(err)?;
    let tables: Vec<(String, String, String)> = (conn.exec(
        "SELECT TABLE_SCHEMA, TABLE_NAME, PRIVILEGE_TYPE FROM information_schema.TABLE_PRIVILEGES \
         WHERE GRANTEE = ?",
        (&grantee,),
    ))
    .await
    .map_err(err)?;
    let iam = plugin.is_some_and(|p| p.eq_ignore_ascii_case(IAM_PLUGIN));
    Ok(Some(ObservedUser {
        iam,
        ..observed(schema, global, tables)
    }))
}

/// The plugin of a user that logs in with IAM tokens, on RDS for MySQL and MariaDB and Aurora
/// MySQL ("Creating a database account using IAM authentication",
/// https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/UsingWithRDS.IAMDBAuth.DBAccounts.html).
const IAM_PLUGIN: &str = "AWSAuthenticationPlugin";

/// The privileges as the plan reads them: a database's privileges it can name, and the rest in
/// words (global ones, one table's, and those MySQL has and a DBUser does not grant).
fn observed(
    schema: Vec<(String, String)>,
    global: Vec<String>,
    tables: Vec<(String, String, String)>,
) -> ObservedUser {
    let mut privileges = BTreeSet::new();
    let mut other = Vec::new();
    for (database, privilege) in schema {
        match Privilege::parse(&privilege) {
            Some(p) => {
                privileges.insert((database, p));
            }
            None => other.push(format!("{privilege} on {database}")),
        }
    }
    other.extend(global.into_iter().map(|p| format!("{p} on every database")));
    other.extend(
        tables
            .into_iter()
            .map(|(d, t, p)| format!("{p} on {d}.{t}")),
    );
    ObservedUser {
        privileges,
        other,
        ..ObservedUser::default()
    }
}

/// Runs one of the steps that change the database.
async fn act(conn: &mut Conn, step: &SqlStep) -> Result<(), String> {
    let err = |e: mysql_async::Error| e.to_string();
    let list = |privileges: &[Privilege]| {
        (privileges.iter().map(|p| p.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match step {
        SqlStep::CreateUser { username, password } => {
            let sql = format!(
                "CREATE USER `{username}`@'%' IDENTIFIED BY {}",
                literal(password.expose())
            );
            let done = conn.query_drop(sql).await;
            done.map_err(|e| scrubbed(e, password))
        }
        SqlStep::SetPassword { username, password } => {
            let sql = format!(
                "ALTER USER `{username}`@'%' IDENTIFIED BY {}",
                literal(password.expose())
            );
            let done = conn.query_drop(sql).await;
            done.map_err(|e| scrubbed(e, password))
        }
        SqlStep::CreateIamUser { username } => {
            let sql = format!("CREATE USER `{username}`@'%' IDENTIFIED WITH {IAM_PLUGIN} AS 'RDS'");
            conn.query_drop(sql).await.map_err(err)
        }
        SqlStep::SetIam { username } => {
            let sql = format!("ALTER USER `{username}`@'%' IDENTIFIED WITH {IAM_PLUGIN} AS 'RDS'");
            conn.query_drop(sql).await.map_err(err)
        }
        SqlStep::Grant {
            username,
            database,
            privileges,
        } => {
            let sql = format!(
                "GRANT {} ON `{database}`.* TO `{username}`@'%'",
                list(privileges)
            );
            conn.query_drop(sql).await.map_err(err)
        }
        SqlStep::Revoke {
            username,
            database,
            privileges,
        } => {
            let sql = format!(
                "REVOKE {} ON `{database}`.* FROM `{username}`@'%'",
                list(privileges)
            );
            conn.query_drop(sql).await.map_err(err)
        }
        SqlStep::RevokeAll { username, .. } => {
            let sql = format!("REVOKE ALL PRIVILEGES, GRANT OPTION FROM `{username}`@'%'");
            conn.query_drop(sql).await.map_err(err)
        }
        SqlStep::Lock { username } => {
            let sql = format!("ALTER USER `{username}`@'%' ACCOUNT LOCK");
            conn.query_drop(sql).await.map_err(err)
        }
        SqlStep::Unlock { username } => {
            let sql = format!("ALTER USER `{username}`@'%' ACCOUNT UNLOCK");
            conn.query_drop(sql).await.map_err(err)
        }
        SqlStep::DropUser { username, .. } => {
            let sql = format!("DROP USER IF EXISTS `{username}`@'%'");
            conn.query_drop(sql).await.map_err(err)
        }
    }
}

/// A string literal of MySQL's (with its default sql_mode: backslash escapes on).
fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\0' => out.push_str("\\0"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{1a}' => out.push_str("\\Z"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The server's answer to a statement that held `password`, without it (a syntax error quotes
/// the statement).
fn scrubbed(e: mysql_async::Error, password: &Sensitive) -> String {
    let text = e.to_string();
    match password.expose().is_empty() {
        true => text,
        false => text
            .replace(password.expose(), "****")
            .replace(&literal(password.expose()), "****"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_literal_is_escaped_as_mysql_reads_it() {
        for (password, quoted) in [
            ("plain", "'plain'"),
            ("it's", "'it\\'s'"),
            ("back\\slash", "'back\\\\slash'"),
            ("a'; DROP USER admin; --", "'a\\'; DROP USER admin; --'"),
        ] {
            assert_eq!(literal(password), quoted, "{password}");
        }
    }

    #[test]
    fn privileges_a_dbuser_cannot_name_are_kept_in_words() {
        let found = observed(
            vec![
                ("COFFEE".into(), "SELECT".into()),
                ("COFFEE".into(), "DELETE HISTORY".into()),
            ],
            vec!["PROCESS".into()],
            vec![("COFFEE".into(), "suppliers".into(), "UPDATE".into())],
        );
        assert_eq!(
            found.privileges,
            [("COFFEE".to_owned(), Privilege::Select)].into()
        );
        assert_eq!(
            found.other,
            vec![
                "DELETE HISTORY on COFFEE",
                "PROCESS on every database",
                "UPDATE on COFFEE.suppliers"
            ]
        );
    }
}
