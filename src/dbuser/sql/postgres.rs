//! The SQL a DBUser runs in PostgreSQL and Aurora PostgreSQL, logged in as the master user over TLS
//! (verified against the operator's CA bundle when it has one; without one, encrypted and not
//! verified, as libpq's `sslmode=require`): RDS for PostgreSQL 15 and later refuses plain
//! connections (`rds.force_ssl`).
//!
//! A user is a role that logs in: `CREATE ROLE "u" WITH LOGIN PASSWORD '…'`, or for IAM with no
//! password and `GRANT rds_iam` ("Creating a database account using IAM authentication",
//! https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/UsingWithRDS.IAMDBAuth.DBAccounts.html).
//! A grant on a database is made logged in to that database: CONNECT on it, USAGE on schema
//! public, and the privileges: the table ones (SELECT, INSERT, UPDATE, DELETE, REFERENCES,
//! TRIGGER) on every table of schema public and, by default privileges, on the tables the master
//! user makes there later; CREATE on schema public; TEMPORARY on the database. They are read back
//! from the catalogs' ACLs (`aclexplode`), granted to the user itself, never through PUBLIC: a table
//! privilege is held when every table of schema public the master user can grant on has it and
//! the default privileges do, partly held when some do. Dropping the user first takes it out of
//! rds_iam (the master user becomes its member for what follows, and a member of rds_iam, even
//! through another role, logs in by IAM only), gives what it owns in each of its databases to the
//! master user (REASSIGN OWNED: no data goes) and revokes what it was granted (DROP OWNED), then
//! DROP ROLE.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::Client;
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::{Failure, LOGIN_TIMEOUT, Login};
use crate::dbuser::plan::SqlStep;
use crate::dbuser::{ObservedUser, Privilege};
use crate::sensitive::Sensitive;

const TABLE_PRIVILEGES: [Privilege; 6] = Privilege::POSTGRES_TABLE;

async fn connect(login: &Login<'_>) -> Result<Client, String> {
    let mut config = tokio_postgres::Config::new();
    config
        .host(login.host)
        .port(u16::try_from(login.port).unwrap_or(5432))
        .user(login.user)
        .password(login.password.expose())
        .dbname(login.database)
        .ssl_mode(SslMode::Require)
        .connect_timeout(LOGIN_TIMEOUT);
    let tls = MakeRustlsConnect::new(tls(login.ca_bundle)?);
    let connected = tokio::time::timeout(LOGIN_TIMEOUT, config.connect(tls)).await;
    let (client, connection) = match connected {
        Ok(Ok(made)) => made,
        Ok(Err(e)) => return Err(message(&e, Some(login.password))),
        Err(_) => {
            let (host, port, s) = (login.host, login.port, LOGIN_TIMEOUT.as_secs());
            return Err(format!("no answer from {host}:{port} within {s}s"));
        }
    };
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// The TLS settings: the CA bundle's roots, or (without one) no verification of the server.
fn tls(ca_bundle: Option<&str>) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = (ClientConfig::builder_with_provider(provider.clone()))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    Ok(match ca_bundle {
        Some(pem) => {
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                let cert = cert.map_err(|e| format!("the CA bundle: {e}"))?;
                roots.add(cert).map_err(|e| format!("the CA bundle: {e}"))?;
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        None => (builder.dangerous())
            .with_custom_certificate_verifier(Arc::new(Unverified(provider)))
            .with_no_client_auth(),
    })
}

/// Encrypts without verifying the server (no CA bundle to verify it with), as libpq's
/// `sslmode=require`: the handshake's signatures are still checked.
#[derive(Debug)]
struct Unverified(Arc<rustls::crypto::CryptoProvider>);

impl Unverified {
    fn algorithms(&self) -> &rustls::crypto::WebPkiSupportedAlgorithms {
        &self.0.signature_verification_algorithms
    }
}

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, self.algorithms())
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, self.algorithms())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The server's message (its SQLSTATE and words; tokio-postgres's own text says only "db
/// error"), without the password.
fn message(e: &tokio_postgres::Error, password: Option<&Sensitive>) -> String {
    let text = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => e.to_string(),
    };
    match password.map(Sensitive::expose).filter(|p| !p.is_empty()) {
        Some(password) => text.replace(password, "****"),
        None => text,
    }
}

/// Whether this login succeeds (the engine refusing it, or not answering, is false).
pub async fn logs_in(login: &Login<'_>) -> bool {
    try_login(login).await.is_ok()
}

/// This login, or the engine's message why not (never with the password).
pub async fn try_login(login: &Login<'_>) -> Result<(), String> {
    connect(login).await.map(|_| ())
}

/// The user, whether it is a member of rds_iam, and its privileges on each of `databases` (each
/// once: the plan's list).
pub async fn read(
    login: &Login<'_>,
    username: &str,
    databases: &[String],
) -> Result<Option<ObservedUser>, String> {
    let client = connect(login).await?;
    let err = |e: tokio_postgres::Error| message(&e, Some(login.password));
    let row = (client.query_opt(
        "SELECT EXISTS (SELECT 1 FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid \
         WHERE m.member = r.oid AND g.rolname = 'rds_iam') FROM pg_roles r WHERE r.rolname = $1",
        &[&username],
    ))
    .await
    .map_err(err)?;
    let Some(row) = row else {
        return Ok(None);
    };
    let mut user = ObservedUser {
        iam: row.get(0),
        ..ObservedUser::default()
    };
    for database in databases {
        let rows = match database == login.database {
            true => privileges(&client, username).await,
            false => {
                let elsewhere = connect(&Login { database, ..*login }).await?;
                privileges(&elsewhere, username).await
            }
        };
        observed(&mut user, database, &rows.map_err(err)?);
    }
    Ok(Some(user))
}

/// One ACL entry of the user's: (where: table, default, schema or database; the privilege; on how
/// many tables; of how many).
type Acl = (String, String, i64, i64);

/// The user's own ACL entries in the database logged in to, on schema public and its tables.
async fn privileges(client: &Client, username: &str) -> Result<Vec<Acl>, tokio_postgres::Error> {
    let sql = "WITH u AS (SELECT oid FROM pg_roles WHERE rolname = $1), \
         t AS (SELECT c.relacl FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
               WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'm', 'f', 'p') \
               AND pg_has_role(current_user, c.relowner, 'MEMBER')), \
         total AS (SELECT count(*) AS n FROM t) \
         SELECT 'table', a.privilege_type, count(*), (SELECT n FROM total) \
           FROM t, aclexplode(t.relacl) a, u WHERE a.grantee = u.oid GROUP BY 2 \
         UNION ALL SELECT 'default', a.privilege_type, 0::bigint, (SELECT n FROM total) \
           FROM pg_default_acl d JOIN pg_namespace n ON n.oid = d.defaclnamespace, \
           aclexplode(d.defaclacl) a, u \
           WHERE n.nspname = 'public' AND d.defaclobjtype = 'r' AND a.grantee = u.oid \
         UNION ALL SELECT 'schema', a.privilege_type, 0::bigint, 0::bigint \
           FROM pg_namespace n, aclexplode(n.nspacl) a, u \
           WHERE n.nspname = 'public' AND a.grantee = u.oid \
         UNION ALL SELECT 'database', a.privilege_type, 0::bigint, 0::bigint \
           FROM pg_database d, aclexplode(d.datacl) a, u \
           WHERE d.datname = current_database() AND a.grantee = u.oid";
    let rows = client.query(sql, &[&username]).await?;
    Ok((rows.iter())
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect())
}

/// The privileges as the plan reads them, from the user's ACL entries in `database`: a table
/// privilege held on every table and by default is held; one held on some is held and
/// incomplete; what a DBUser does not grant is in words.
fn observed(user: &mut ObservedUser, database: &str, rows: &[Acl]) {
    let find = |kind: &str, p: &str| rows.iter().find(|r| r.0 == kind && r.1 == p);
    for p in TABLE_PRIVILEGES {
        let on_tables = find("table", p.as_str()).map_or(0, |r| r.2);
        let total = (rows.iter().find(|r| r.0 == "table" || r.0 == "default")).map_or(0, |r| r.3);
        let by_default = find("default", p.as_str()).is_some();
        let full = by_default && on_tables == total;
        if full || on_tables > 0 || by_default {
            user.privileges.insert((database.to_owned(), p));
        }
        if !full && (on_tables > 0 || by_default) {
            user.incomplete.insert((database.to_owned(), p));
        }
    }
    for (kind, privilege, _, _) in rows {
        let known = match (kind.as_str(), privilege.as_str()) {
            ("schema", "CREATE") => Some(Privilege::Create),
            ("database", "TEMPORARY") => Some(Privilege::CreateTemporaryTables),
            ("schema", "USAGE") | ("database", "CONNECT") => continue,
            ("table" | "default", p) => match Privilege::parse(p).filter(|p| p.in_postgres()) {
                Some(_) => continue,
                None => None,
            },
            _ => None,
        };
        match known {
            Some(p) => {
                user.privileges.insert((database.to_owned(), p));
            }
            None => user
                .other
                .push(format!("{privilege} on {database} ({kind})")),
        }
    }
}

/// One step, logged in to the database it is about (the master user's for the role itself).
pub async fn run(login: &Login<'_>, step: &SqlStep) -> Result<(), Failure> {
    let batches = statements(step, login.user);
    for (database, sql) in batches {
        let here = Login {
            database: database.as_deref().unwrap_or(login.database),
            ..*login
        };
        let client = connect(&here).await.map_err(Failure::Unreachable)?;
        (client.batch_execute(&sql).await)
            .map_err(|e| Failure::Refused(message(&e, secret_of(step))))?;
    }
    Ok(())
}

/// The password a step's statements hold, if any.
fn secret_of(step: &SqlStep) -> Option<&Sensitive> {
    match step {
        SqlStep::CreateUser { password, .. } | SqlStep::SetPassword { password, .. } => {
            Some(password)
        }
        _ => None,
    }
}

/// The statements of a step, each batch with the database to log in to (None: the login's own).
fn statements(step: &SqlStep, master: &str) -> Vec<(Option<String>, String)> {
    match step {
        SqlStep::Grant {
            username,
            database,
            privileges,
        }
        | SqlStep::Revoke {
            username,
            database,
            privileges,
        } => {
            let granting = matches!(step, SqlStep::Grant { .. });
            let sql = privilege_statements(granting, username, database, privileges);
            vec![(Some(database.clone()), sql)]
        }
        SqlStep::RevokeAll {
            username,
            databases,
        } => (databases.iter())
            .map(|database| {
                let (u, d) = (ident(username), ident(database));
                let sql = format!(
                    "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {u}; \
                     ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE ALL ON TABLES FROM {u}; \
                     REVOKE ALL ON SCHEMA public FROM {u}; REVOKE ALL ON DATABASE {d} FROM {u}"
                );
                (Some(database.clone()), sql)
            })
            .collect(),
        SqlStep::DropUser {
            username,
            databases,
        } => {
            let (u, m) = (ident(username), ident(master));
            let mut batches: Vec<(Option<String>, String)> = (databases.iter())
                .map(|database| {
                    // The user leaves rds_iam first: the master user, made a member of the user
                    // for REASSIGN OWNED, would otherwise log in by IAM only from then on.
                    let sql = format!(
                        "REVOKE rds_iam FROM {u}; GRANT {u} TO {m}; REASSIGN OWNED BY {u} TO {m}; \
                         DROP OWNED BY {u}"
                    );
                    (Some(database.clone()), sql)
                })
                .collect();
            batches.push((None, format!("DROP ROLE IF EXISTS {u}")));
            batches
        }
        role => vec![(None, role_statements(role))],
    }
}

/// The statements that make or change the role itself.
fn role_statements(step: &SqlStep) -> String {
    match step {
        SqlStep::CreateUser { username, password } => format!(
            "CREATE ROLE {} WITH LOGIN PASSWORD {}",
            ident(username),
            literal(password.expose())
        ),
        SqlStep::SetPassword { username, password } => format!(
            "ALTER ROLE {u} WITH PASSWORD {}; REVOKE rds_iam FROM {u}",
            literal(password.expose()),
            u = ident(username)
        ),
        SqlStep::CreateIamUser { username } => {
            format!(
                "CREATE ROLE {u} WITH LOGIN; GRANT rds_iam TO {u}",
                u = ident(username)
            )
        }
        SqlStep::SetIam { username } => format!(
            "GRANT rds_iam TO {u}; ALTER ROLE {u} WITH PASSWORD NULL",
            u = ident(username)
        ),
        SqlStep::Lock { username } => format!("ALTER ROLE {} WITH NOLOGIN", ident(username)),
        SqlStep::Unlock { username } => format!("ALTER ROLE {} WITH LOGIN", ident(username)),
        _ => String::new(),
    }
}

/// A quoted identifier.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The table privileges among these, as a GRANT lists them.
fn tables(privileges: &[Privilege]) -> String {
    (privileges.iter())
        .filter(|p| TABLE_PRIVILEGES.contains(p))
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A grant on a database (CONNECT, USAGE on schema public, and the privileges), or a revoke of
/// the privileges.
fn privilege_statements(
    granting: bool,
    username: &str,
    database: &str,
    privileges: &[Privilege],
) -> String {
    let (u, d) = (ident(username), ident(database));
    let (verb, to) = match granting {
        true => ("GRANT", "TO"),
        false => ("REVOKE", "FROM"),
    };
    let mut sql = Vec::new();
    if granting {
        sql.push(format!("GRANT CONNECT ON DATABASE {d} TO {u}"));
        sql.push(format!("GRANT USAGE ON SCHEMA public TO {u}"));
    }
    if privileges.contains(&Privilege::Create) {
        sql.push(format!("{verb} CREATE ON SCHEMA public {to} {u}"));
    }
    if privileges.contains(&Privilege::CreateTemporaryTables) {
        sql.push(format!("{verb} TEMPORARY ON DATABASE {d} {to} {u}"));
    }
    let t = tables(privileges);
    if !t.is_empty() {
        sql.push(format!(
            "{verb} {t} ON ALL TABLES IN SCHEMA public {to} {u}"
        ));
        sql.push(format!(
            "ALTER DEFAULT PRIVILEGES IN SCHEMA public {verb} {t} ON TABLES {to} {u}"
        ));
    }
    sql.join("; ")
}

/// A string literal of PostgreSQL's, as libpq's PQescapeLiteral writes it: quotes doubled, and
/// with a backslash, an E'' literal with backslashes doubled.
fn literal(text: &str) -> String {
    let quoted = text.replace('\'', "''");
    match text.contains('\\') {
        true => format!("E'{}'", quoted.replace('\\', "\\\\")),
        false => format!("'{quoted}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_literal_is_escaped_as_libpq_escapes_it() {
        for (password, quoted) in [
            ("plain", "'plain'"),
            ("it's", "'it''s'"),
            ("back\\slash", "E'back\\\\slash'"),
            ("a'; DROP ROLE admin; --", "'a''; DROP ROLE admin; --'"),
        ] {
            assert_eq!(literal(password), quoted, "{password}");
        }
    }

    #[test]
    fn a_table_privilege_is_held_on_every_table_and_by_default_else_incomplete() {
        let acl = |kind: &str, p: &str, n: i64, total: i64| (kind.into(), p.into(), n, total);
        let mut user = ObservedUser::default();
        let rows = vec![
            acl("table", "SELECT", 3, 3),
            acl("default", "SELECT", 0, 3),
            acl("table", "INSERT", 1, 3),
            acl("default", "UPDATE", 0, 3),
            acl("table", "TRUNCATE", 2, 3),
            acl("schema", "USAGE", 0, 0),
            acl("schema", "CREATE", 0, 0),
            acl("database", "CONNECT", 0, 0),
            acl("database", "TEMPORARY", 0, 0),
            acl("database", "CREATE", 0, 0),
        ];
        observed(&mut user, "COFFEE", &rows);
        let d = |p| ("COFFEE".to_owned(), p);
        use Privilege::*;
        assert_eq!(
            user.privileges,
            [
                d(Select),
                d(Insert),
                d(Update),
                d(Create),
                d(CreateTemporaryTables)
            ]
            .into()
        );
        assert_eq!(user.incomplete, [d(Insert), d(Update)].into());
        assert_eq!(
            user.other,
            vec!["TRUNCATE on COFFEE (table)", "CREATE on COFFEE (database)"]
        );
    }

    #[test]
    fn grants_are_made_in_their_database_and_a_drop_keeps_what_the_user_owned() {
        let grant = SqlStep::Grant {
            username: "app".into(),
            database: "COFFEE".into(),
            privileges: vec![Privilege::Select, Privilege::CreateTemporaryTables],
        };
        assert_eq!(
            statements(&grant, "postgres"),
            vec![(
                Some("COFFEE".to_owned()),
                "GRANT CONNECT ON DATABASE \"COFFEE\" TO \"app\"; GRANT USAGE ON SCHEMA public TO \"app\"; \
                 GRANT TEMPORARY ON DATABASE \"COFFEE\" TO \"app\"; GRANT SELECT ON ALL TABLES IN SCHEMA public TO \"app\"; \
                 ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO \"app\""
                    .to_owned()
            )]
        );
        let drop = SqlStep::DropUser {
            username: "app".into(),
            databases: vec!["COFFEE".into()],
        };
        let made = statements(&drop, "postgres");
        // Out of rds_iam before the master user becomes its member (or it would log in by IAM).
        let first = "REVOKE rds_iam FROM \"app\"; GRANT \"app\" TO \"postgres\"; REASSIGN OWNED BY";
        assert!(made[0].1.starts_with(first), "{}", made[0].1);
        assert_eq!(made[1], (None, "DROP ROLE IF EXISTS \"app\"".to_owned()));
    }
}
