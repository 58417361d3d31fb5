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

/// Runs `sql` on a connection Secret's keys (with `host` instead of the Secret's host) until its
/// output contains `wanted`, for up to `within`; the last (succeeded, output).
pub async fn wait_sql(
    s: &BTreeMap<String, String>,
    host: &str,
    sql: &str,
    wanted: &str,
    within: std::time::Duration,
) -> (bool, String) {
    let mut keys = s.clone();
    keys.insert("host".into(), host.to_owned());
    let deadline = std::time::Instant::now() + within;
    loop {
        let (ok, out) = mariadb_keys(&keys, &s["password"], sql);
        if (ok && out.contains(wanted)) || std::time::Instant::now() >= deadline {
            return (ok, out);
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// A client that inserts a numbered row into `writes (n INT PRIMARY KEY)` every `every` through a
/// connection Secret's keys, as an app keeps writing through an upgrade: what it was told.
pub struct Writer {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    acknowledged: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    thread: Option<std::thread::JoinHandle<Vec<(u32, bool, String)>>>,
}

/// What a [`Writer`] was told: the rows acknowledged, and the longest run of refused writes.
pub struct Written {
    pub acknowledged: Vec<u32>,
    pub refused: usize,
    pub longest_refused_run: usize,
    pub first_refusal: Option<String>,
}

impl Writer {
    /// Creates the table, then writes until stopped.
    pub fn start(s: &BTreeMap<String, String>, every: std::time::Duration) -> Writer {
        let (ok, out) = mariadb_keys(s, &s["password"], "CREATE TABLE writes (n INT PRIMARY KEY)");
        assert!(ok, "create the writer's table: {out}");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let acknowledged = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (s, flag, count) = (s.clone(), stop.clone(), acknowledged.clone());
        let thread = std::thread::spawn(move || {
            let mut told = Vec::new();
            let mut n = 0;
            while !flag.load(std::sync::atomic::Ordering::SeqCst) {
                n += 1;
                let sql = format!("INSERT INTO writes VALUES ({n})");
                let (ok, out) = mariadb_keys(&s, &s["password"], &sql);
                if ok {
                    count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                told.push((n, ok, out));
                std::thread::sleep(every);
            }
            told
        });
        Writer {
            stop,
            acknowledged,
            thread: Some(thread),
        }
    }

    /// Waits (at most two minutes) until `more` rows are acknowledged beyond those so far.
    pub async fn keep_writing(&self, more: usize) {
        let target = self.acknowledged.load(std::sync::atomic::Ordering::SeqCst) + more;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while self.acknowledged.load(std::sync::atomic::Ordering::SeqCst) < target {
            assert!(
                std::time::Instant::now() < deadline,
                "the writer did not get {more} more rows acknowledged"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }

    pub fn stop(mut self) -> Written {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let told = self.thread.take().unwrap().join().expect("the writer");
        let (mut run, mut longest) = (0, 0);
        for (_, ok, _) in &told {
            run = if *ok { 0 } else { run + 1 };
            longest = longest.max(run);
        }
        Written {
            acknowledged: told.iter().filter(|t| t.1).map(|t| t.0).collect(),
            refused: told.iter().filter(|t| !t.1).count(),
            longest_refused_run: longest,
            first_refusal: told.iter().find(|t| !t.1).map(|t| t.2.trim().to_owned()),
        }
    }
}

impl Written {
    /// The acknowledged rows that `rows` lacks.
    pub fn lost(&self, rows: &std::collections::BTreeSet<u32>) -> Vec<u32> {
        (self.acknowledged.iter().copied())
            .filter(|n| !rows.contains(n))
            .collect()
    }

    /// What the writer was told, in a line.
    pub fn summary(&self) -> String {
        format!(
            "{} rows acknowledged, {} refused, the longest run of refused writes {} (first: {:?})",
            self.acknowledged.len(),
            self.refused,
            self.longest_refused_run,
            self.first_refusal
        )
    }
}

/// Stops the writer and asserts that every row it was told was written is there through the
/// Secret `s`, and that it kept writing (more than 20 rows acknowledged).
pub fn no_acknowledged_row_lost(writer: Writer, s: &BTreeMap<String, String>, what: &str) {
    let written = writer.stop();
    println!("{what} with a writer: {}", written.summary());
    let lost = written.lost(&written_rows(s));
    assert!(
        lost.is_empty(),
        "acknowledged rows lost by the {what}: {lost:?}"
    );
    assert!(written.acknowledged.len() > 20, "the writer kept writing");
}

/// The rows of `writes` on the server behind a Secret's keys.
pub fn written_rows(s: &BTreeMap<String, String>) -> std::collections::BTreeSet<u32> {
    let (ok, out) = mariadb_keys(s, &s["password"], "SELECT n FROM writes");
    assert!(ok, "read the writer's rows: {out}");
    out.split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect()
}

/// Stops `writer` after a switchover (`what`) and asserts that every row it was told was written
/// is there through the Secret `s`, and that it kept writing, and that the `suppliers` row written
/// before is there.
pub fn nothing_lost(writer: Writer, s: &BTreeMap<String, String>, what: &str) {
    no_acknowledged_row_lost(writer, s, what);
    let (ok, out) = mariadb_keys(s, &s["password"], "SELECT name FROM suppliers");
    assert!(
        ok && out.contains("Beans & Co"),
        "the rows after the switchover: {out}"
    );
}
