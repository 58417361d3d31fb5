//! The SQL clients the tests log in with, on the real engines behind the emulator.

use super::*;

/// Runs SQL with the `mariadb` client; (succeeded, stdout + stderr).
pub fn mariadb(
    host: &str,
    port: Option<&str>,
    user: &str,
    password: &str,
    db: &str,
    sql: &str,
) -> (bool, String) {
    let mut cmd = Command::new("mariadb");
    cmd.args([
        "--no-defaults",
        "--batch",
        "--skip-column-names",
        "-h",
        host,
        "-u",
        user,
        db,
        "-e",
        sql,
    ]);
    if let Some(port) = port {
        cmd.args(["-P", port]);
    }
    // The password through the environment, not the command line.
    run_client(
        cmd.env("MYSQL_PWD", password),
        "mariadb (Debian mariadb-client)",
    )
}

/// Runs SQL with the `mariadb` client on a connection Secret's standard keys (host, port,
/// username, dbname), logging in with `password`.
pub fn mariadb_keys(s: &BTreeMap<String, String>, password: &str, sql: &str) -> (bool, String) {
    mariadb(
        &s["host"],
        Some(&s["port"]),
        &s["username"],
        password,
        &s["dbname"],
        sql,
    )
}

/// Runs a client; (succeeded, stdout + stderr).
pub fn run_client(cmd: &mut Command, what: &str) -> (bool, String) {
    let out = cmd.output().unwrap_or_else(|e| panic!("run {what}: {e}"));
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}
