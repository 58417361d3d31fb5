//! `kubectl rds connect NAME [--reader] [-- ARGS...]`: the engine's client (`mariadb`, else
//! `mysql`; `psql`) on the database, with its connection Secret's values. The password is never
//! on the command line nor in the environment of other processes: it goes into a file readable by
//! the user alone, in a private temporary directory removed afterwards (MySQL's option file for
//! `--defaults-extra-file`, libpq's `PGPASSFILE`). With the Secret's `ca.crt`, the server's
//! certificate and name are verified against it; without it, the connection asks for TLS and
//! says it cannot verify.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One run of a client: the program, its arguments, its environment, and the private files it
/// reads (path, contents).
#[derive(Debug, PartialEq)]
pub struct Invocation {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub files: Vec<(PathBuf, String)>,
    /// What the user is told on stderr first (an unverified TLS connection).
    pub warning: Option<String>,
}

/// The client for the Secret's values (`data`), in the private directory `dir`, to the reader
/// endpoint with `reader`, with `extra` arguments; `mysql` is the MySQL client's name here
/// (`mariadb` where installed). Pure.
pub fn invocation(
    data: &BTreeMap<String, String>,
    reader: bool,
    extra: &[String],
    (dir, mysql): (&Path, &str),
) -> anyhow::Result<Invocation> {
    let key = |k: &str| {
        (data.get(k).filter(|v| !v.is_empty()))
            .ok_or_else(|| anyhow::anyhow!("the connection Secret has no {k}"))
    };
    let host = match reader {
        true => (data.get("readerHost").filter(|h| !h.is_empty())).ok_or_else(|| {
            anyhow::anyhow!("the connection Secret has no readerHost: --reader is for a DBCluster")
        })?,
        false => key("host")?,
    };
    let target = Target {
        host,
        port: key("port")?,
        user: key("username")?,
        password: key("password")?,
        dbname: data.get("dbname").filter(|d| !d.is_empty()),
        ca: (data.get("ca.crt").filter(|c| !c.is_empty())).map(|ca| (dir.join("ca.crt"), ca)),
    };
    let mut how = match data.get("engine").is_some_and(|e| e.contains("postgres")) {
        true => psql(&target, dir),
        false => mysql_client(&target, dir, mysql),
    };
    if let Some((path, ca)) = &target.ca {
        how.files.push((path.clone(), (*ca).clone()));
    } else {
        how.warning = Some(
            "the connection Secret has no ca.crt (the operator's --ca-bundle): TLS is asked for, \
             the server's certificate is not verified"
                .to_owned(),
        );
    }
    how.args.extend(extra.iter().cloned());
    Ok(how)
}

/// Where and as whom a client connects, from the Secret.
struct Target<'a> {
    host: &'a String,
    port: &'a String,
    user: &'a String,
    password: &'a String,
    dbname: Option<&'a String>,
    /// Where the CA goes, and the CA.
    ca: Option<(PathBuf, &'a String)>,
}

/// psql, the password in a PGPASSFILE, TLS by PGSSLMODE.
fn psql(t: &Target, dir: &Path) -> Invocation {
    let pgpass = dir.join("pgpass");
    // host:port:database:username:password, with : and \ escaped (libpq-pgpass.html).
    let escape = |s: &str| s.replace('\\', "\\\\").replace(':', "\\:");
    let line = [t.host, t.port, "*", t.user, t.password.as_str()]
        .map(escape)
        .join(":");
    let mut env = vec![("PGPASSFILE".to_owned(), path(&pgpass))];
    let mode = match &t.ca {
        Some((ca, _)) => {
            env.push(("PGSSLROOTCERT".into(), path(ca)));
            "verify-full"
        }
        None => "require",
    };
    env.push(("PGSSLMODE".into(), mode.into()));
    let mut args = vec!["-h".into(), t.host.clone(), "-p".into(), t.port.clone()];
    args.extend(["-U".into(), t.user.clone()]);
    args.extend((t.dbname.iter()).flat_map(|d| ["-d".to_owned(), (*d).clone()]));
    Invocation {
        program: "psql".into(),
        args,
        env,
        files: vec![(pgpass, format!("{line}\n"))],
        warning: None,
    }
}

/// mariadb or mysql, the password in an option file, TLS by --ssl-ca and
/// --ssl-verify-server-cert.
fn mysql_client(t: &Target, dir: &Path, program: &str) -> Invocation {
    let options = dir.join("my.cnf");
    // An option file's value in double quotes, with \ and " escaped (option-files.html).
    let quoted = t.password.replace('\\', "\\\\").replace('"', "\\\"");
    // --defaults-extra-file must come first.
    let mut args = vec![format!("--defaults-extra-file={}", path(&options))];
    args.extend(["-h".into(), t.host.clone(), "-P".into(), t.port.clone()]);
    args.extend(["-u".into(), t.user.clone()]);
    match &t.ca {
        Some((ca, _)) => {
            args.push(format!("--ssl-ca={}", path(ca)));
            args.push("--ssl-verify-server-cert".into());
        }
        None => args.push("--ssl".into()),
    }
    args.extend(t.dbname.cloned());
    Invocation {
        program: program.into(),
        args,
        env: Vec::new(),
        files: vec![(options, format!("[client]\npassword=\"{quoted}\"\n"))],
        warning: None,
    }
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// Runs the client: writes its files (mode 0600) into a private temporary directory (0700), waits
/// for it, removes them; its exit code.
pub fn run(data: &BTreeMap<String, String>, reader: bool, extra: &[String]) -> anyhow::Result<i32> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = std::env::temp_dir().join(format!("kubectl-rds-{}", std::process::id()));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    let guard = Removed(dir.clone());
    let mysql = match on_path("mariadb") {
        true => "mariadb",
        false => "mysql",
    };
    let how = invocation(data, reader, extra, (&dir, mysql))?;
    for (file, contents) in &how.files {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(file)?;
        std::io::Write::write_all(&mut f, contents.as_bytes())?;
    }
    if let Some(w) = &how.warning {
        eprintln!("kubectl rds: {w}");
    }
    let status = std::process::Command::new(&how.program)
        .args(&how.args)
        .envs(how.env.iter().map(|(k, v)| (k, v)))
        .status()
        .map_err(|e| anyhow::anyhow!("{} could not be run: {e}", how.program))?;
    drop(guard);
    Ok(status.code().unwrap_or(1))
}

fn on_path(program: &str) -> bool {
    (std::env::var_os("PATH").iter())
        .flat_map(std::env::split_paths)
        .any(|d| d.join(program).is_file())
}

/// A directory removed when dropped.
struct Removed(PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(engine: &str, ca: bool) -> BTreeMap<String, String> {
        let mut s: BTreeMap<String, String> = [
            ("host", "db.example"),
            ("readerHost", "db-ro.example"),
            ("port", "3306"),
            ("username", "admin"),
            ("password", "pa:ss\"w\\rd"),
            ("dbname", "COFFEE"),
            ("engine", engine),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .into();
        if ca {
            s.insert("ca.crt".into(), "-----BEGIN CERTIFICATE-----".into());
        }
        s
    }

    /// (engine, ca.crt, reader) -> the program, the host, TLS verified or not; the password in a
    /// private file only, never in the arguments or the environment.
    #[test]
    fn the_password_goes_into_a_private_file_and_tls_is_verified_with_the_secrets_ca() {
        let dir = Path::new("/tmp/private");
        let rows = [
            (
                "mysql",
                true,
                false,
                "mariadb",
                "db.example",
                "--ssl-verify-server-cert",
            ),
            ("mysql", false, true, "mariadb", "db-ro.example", "--ssl"),
            (
                "postgres",
                true,
                false,
                "psql",
                "db.example",
                "PGSSLMODE=verify-full",
            ),
            (
                "aurora-postgresql",
                false,
                false,
                "psql",
                "db.example",
                "PGSSLMODE=require",
            ),
        ];
        for (engine, ca, reader, program, host, tls) in rows {
            let how = invocation(
                &secret(engine, ca),
                reader,
                &["-e".into(), "SELECT 1".into()],
                (dir, "mariadb"),
            )
            .expect("an invocation");
            let case = format!("{engine} ca {ca} reader {reader}");
            assert_eq!(how.program, program, "{case}");
            assert!(
                how.args.contains(&host.to_owned()),
                "{case}: {:?}",
                how.args
            );
            let env: Vec<String> = how.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
            assert!(
                how.args.iter().chain(&env).any(|a| a == tls),
                "{case}: {:?} {env:?}",
                how.args
            );
            assert!(
                how.args.iter().chain(&env).all(|a| !a.contains("pa:ss")),
                "{case}"
            );
            let secret_file = how
                .files
                .iter()
                .find(|(_, c)| c.contains("pa"))
                .expect("the password file");
            assert!(secret_file.0.starts_with(dir), "{case}");
            assert_eq!(how.warning.is_some(), !ca, "{case}");
            assert_eq!(
                how.args.last().map(String::as_str),
                Some("SELECT 1"),
                "{case}"
            );
        }
    }

    /// The password is written escaped: an option file's quoted value, a pgpass line's fields.
    #[test]
    fn a_password_with_quotes_colons_and_backslashes_is_escaped() {
        let dir = Path::new("/tmp/private");
        let my = invocation(&secret("mysql", false), false, &[], (dir, "mysql")).unwrap();
        assert_eq!(my.files[0].1, "[client]\npassword=\"pa:ss\\\"w\\\\rd\"\n");
        let pg = invocation(&secret("postgres", false), false, &[], (dir, "mysql")).unwrap();
        assert_eq!(pg.files[0].1, "db.example:3306:*:admin:pa\\:ss\"w\\\\rd\n");
    }

    #[test]
    fn reader_without_a_reader_endpoint_is_refused() {
        let mut s = secret("mysql", false);
        s.remove("readerHost");
        let refused = invocation(&s, true, &[], (Path::new("/tmp"), "mysql")).unwrap_err();
        assert!(refused.to_string().contains("readerHost"), "{refused}");
    }
}
