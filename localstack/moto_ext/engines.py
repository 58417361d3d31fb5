"""Real database servers behind moto's RDS instances, as LocalStack Pro has them.

Opt-in: every mysql, mariadb and postgres instance when the moto run has ``MOTO_RDS_ENGINES=real``,
or one instance whose CreateDBInstance carries the tag ``moto-ext:real-engine=true``.

* mysql and mariadb instances get a MariaDB server (Debian ``mariadb-server``), postgres instances a
  PostgreSQL server (Debian ``postgresql``, run as the ``postgres`` user, since it refuses root);
* each listens on an address of its own in the loopback range (127.0.0.2, 127.0.0.3, ...; with
  ``MOTO_RDS_ENGINE_NETWORK=10.88.1``, in that /24, which tests/env/node.sh makes local to the host
  so Pods on its node reach them) on the
  port the instance asked for or the engine's default, which is the instance's endpoint: one host
  per instance on the usual port, as in RDS;
* the master user is created with the master password (MariaDB: ``mysql_native_password``, which
  Node's mysql2 speaks) and DBName, if any; the anonymous users ``mariadb-install-db`` creates are
  dropped;
* the instance stays ``creating`` until its server accepts connections; a new master password is
  set with ALTER USER/ROLE; a new port restarts the server on it; deletion stops it and removes
  its data;
* a DB snapshot (CreateDBSnapshot, or the final snapshot of DeleteDBInstance) keeps a consistent
  logical dump of the instance's database (``--single-transaction`` / ``pg_dump``), and
  RestoreDBInstanceFromDBSnapshot starts a new server loaded from it;
* small servers (16 MiB buffers, no performance schema); at most ``MOTO_RDS_MAX_ENGINES`` (8) run
  at once, past that CreateDBInstance fails with a clear error; every server is stopped when moto
  stops (``moto.sh stop`` also stops any a killed moto left).
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from typing import Any

ROOT = os.environ.get("MOTO_RDS_ENGINES_DIR") or f"/tmp/moto-rds-engines-{os.environ.get('MOTO_PORT', '4566')}"
MAX = int(os.environ.get("MOTO_RDS_MAX_ENGINES", "8") or 8)
ALL = os.environ.get("MOTO_RDS_ENGINES", "") == "real"
TAG = "moto-ext:real-engine"
NETWORK = os.environ.get("MOTO_RDS_ENGINE_NETWORK") or "127.0.0"
PG_BIN = "/usr/lib/postgresql/15/bin"

SNAPSHOTS = os.path.join(ROOT, "snapshots")

LOCK = threading.RLock()
SERVERS: dict[str, "Server"] = {}


def wanted(engine: str, tags: list[dict[str, str]] | None) -> bool:
    """Whether an instance of this engine, created with these tags, gets a real server."""
    if family(engine) is None:
        return False
    tagged = any(t.get("Key") == TAG and str(t.get("Value")).lower() == "true" for t in tags or [])
    return ALL or tagged


def family(engine: str) -> str | None:
    if engine in ("mysql", "mariadb"):
        return "mariadb"
    if engine == "postgres":
        return "postgres"
    return None


def default_port(engine: str) -> int:
    return 5432 if family(engine) == "postgres" else 3306


class EngineError(Exception):
    pass


def _sql_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def _pg_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _quote_ident(name: str, quote: str) -> str:
    return quote + name.replace(quote, quote + quote) + quote


class Server:
    def __init__(self, identifier: str, engine: str, address: str, port: int, user: str, password: str, dbname: str | None):
        self.identifier = identifier
        self.family = family(engine)
        self.address = address
        self.port = port
        self.user = user
        self.password = password
        self.dbname = dbname
        self.dir = os.path.join(ROOT, identifier)
        self.process: subprocess.Popen[bytes] | None = None
        self.ready = False
        self.error: str | None = None

    # --- lifecycle -----------------------------------------------------------------------------

    def create(self, snapshot: str | None = None) -> None:
        """Initialises the data directory, starts the server, creates the master user and, for a
        restore, loads the snapshot's data."""
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir, exist_ok=True)
        if self.family == "mariadb":
            # A temporary directory of its own: servers set up side by side share nothing in /tmp.
            os.makedirs(self.tmp, exist_ok=True)
            self._run(["mariadb-install-db", "--no-defaults", "--user=root", f"--datadir={self.data}",
                       "--skip-test-db", "--auth-root-authentication-method=socket"],
                      env={**os.environ, "TMPDIR": self.tmp})
        else:
            shutil.chown(self.dir, "postgres", "postgres")
            self._run([f"{PG_BIN}/initdb", "-D", self.data, "-U", "postgres", "--auth-local=trust",
                       "--auth-host=scram-sha-256"], user="postgres")
            # Password logins from any address, as on RDS: its users cannot edit pg_hba.conf, the
            # only method is a password, and the security groups decide who reaches the instance
            # (https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/Appendix.PostgreSQL.CommonDBATasks.html,
            # "Managing PostgreSQL database access"). initdb allows only 127.0.0.1; clients here
            # come from the instance's own address or from Pods on the test node.
            with open(os.path.join(self.data, "pg_hba.conf"), "a") as hba:
                hba.write("host all all 0.0.0.0/0 scram-sha-256\n")
        self.start()
        self._setup()
        if snapshot is not None:
            self.load(snapshot)
        self.ready = True

    @property
    def data(self) -> str:
        return os.path.join(self.dir, "data")

    @property
    def tmp(self) -> str:
        return os.path.join(self.dir, "tmp")

    def start(self) -> None:
        log = open(os.path.join(self.dir, "server.log"), "ab")
        if self.family == "mariadb":
            os.makedirs(self.tmp, exist_ok=True)
            cmd = ["mariadbd", "--no-defaults", "--user=root", f"--datadir={self.data}",
                   f"--socket={self.dir}/mysqld.sock", f"--pid-file={self.dir}/mysqld.pid",
                   f"--bind-address={self.address}", f"--port={self.port}", f"--tmpdir={self.tmp}",
                   "--innodb-buffer-pool-size=16M", "--performance-schema=OFF", "--skip-name-resolve",
                   "--max-connections=50", "--skip-log-bin"]
            self.process = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)
        else:
            cmd = [f"{PG_BIN}/postgres", "-D", self.data, "-c", f"listen_addresses={self.address}",
                   "-c", f"port={self.port}", "-c", f"unix_socket_directories={self.dir}",
                   "-c", "shared_buffers=16MB", "-c", "max_connections=20", "-c", "fsync=off"]
            self.process = subprocess.Popen(cmd, stdout=log, stderr=log, user="postgres", start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise EngineError(f"the {self.family} server of {self.identifier} exited; see {self.dir}/server.log")
            try:
                with socket.create_connection((self.address, self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        raise EngineError(f"the {self.family} server of {self.identifier} did not start within 60 s")

    def stop(self, remove: bool) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.process = None
        if remove:
            shutil.rmtree(self.dir, ignore_errors=True)

    # --- changes RDS makes -----------------------------------------------------------------------

    def dump(self, snapshot: str) -> None:
        """Keeps a consistent logical copy of the instance's database for a snapshot."""
        if not self.dbname:
            return
        os.makedirs(SNAPSHOTS, exist_ok=True)
        path = os.path.join(SNAPSHOTS, f"{snapshot.replace(':', '_')}.sql")
        if self.family == "mariadb":
            cmd = ["mariadb-dump", "--no-defaults", "-uroot", f"--socket={self.dir}/mysqld.sock",
                   "--single-transaction", "--databases", self.dbname]
            user = None
        else:
            cmd = [f"{PG_BIN}/pg_dump", "-h", self.dir, "-p", str(self.port), "-U", "postgres",
                   "--no-owner", self.dbname]
            user = "postgres"
        done = subprocess.run(cmd, capture_output=True, user=user, timeout=300)
        if done.returncode != 0:
            raise EngineError(f"dumping {self.identifier} failed: {done.stderr.decode(errors='replace')[-400:]}")
        with open(path, "wb") as f:
            f.write(done.stdout)

    def load(self, snapshot: str) -> None:
        """Loads a snapshot's dump into this (new) server's database."""
        path = os.path.join(SNAPSHOTS, f"{snapshot.replace(':', '_')}.sql")
        if not os.path.exists(path):
            return
        with open(path, "rb") as f:
            sql = f.read()
        if self.family == "mariadb":
            cmd = ["mariadb", "--no-defaults", "-uroot", f"--socket={self.dir}/mysqld.sock"]
            user = None
        else:
            cmd = [f"{PG_BIN}/psql", "-h", self.dir, "-p", str(self.port), "-U", "postgres", "-d", self.dbname or "postgres",
                   "-v", "ON_ERROR_STOP=1"]
            user = "postgres"
        done = subprocess.run(cmd, input=sql, capture_output=True, user=user, timeout=300)
        if done.returncode != 0:
            raise EngineError(f"restoring {self.identifier} failed: {done.stderr.decode(errors='replace')[-400:]}")

    def set_password(self, password: str) -> None:
        self.password = password
        if self.family == "mariadb":
            self._mariadb(f"ALTER USER {_sql_string(self.user)}@'%' IDENTIFIED BY {_sql_string(password)};")
        else:
            self._psql(f"ALTER ROLE {_quote_ident(self.user, chr(34))} PASSWORD {_pg_string(password)};")

    def set_port(self, port: int) -> None:
        if port == self.port:
            return
        self.stop(remove=False)
        self.port = port
        self.start()

    # --- helpers -------------------------------------------------------------------------------

    def _setup(self) -> None:
        if self.family == "mariadb":
            user = _sql_string(self.user)
            sql = [
                # mariadb-install-db's anonymous users would shadow 'admin'@'%' for loopback logins.
                "DELETE FROM mysql.global_priv WHERE User='';",
                "FLUSH PRIVILEGES;",
                f"CREATE USER {user}@'%' IDENTIFIED BY {_sql_string(self.password)};",
                f"GRANT ALL PRIVILEGES ON *.* TO {user}@'%' WITH GRANT OPTION;",
            ]
            if self.dbname:
                sql.append(f"CREATE DATABASE IF NOT EXISTS {_quote_ident(self.dbname, '`')};")
            self._mariadb(" ".join(sql))
        else:
            role = _quote_ident(self.user, '"')
            if self.user == "postgres":
                sql = [f"ALTER ROLE postgres PASSWORD {_pg_string(self.password)};"]
            else:
                sql = [f"CREATE ROLE {role} LOGIN SUPERUSER PASSWORD {_pg_string(self.password)};"]
            for statement in sql:
                self._psql(statement)
            if self.dbname:
                self._psql(f"CREATE DATABASE {_quote_ident(self.dbname, chr(34))} OWNER {role};")

    def _mariadb(self, sql: str) -> None:
        self._run(["mariadb", "--no-defaults", "-uroot", f"--socket={self.dir}/mysqld.sock", "-e", sql])

    def _psql(self, sql: str) -> None:
        self._run([f"{PG_BIN}/psql", "-h", self.dir, "-p", str(self.port), "-U", "postgres", "-d", "postgres",
                   "-v", "ON_ERROR_STOP=1", "-c", sql], user="postgres")

    def _run(self, cmd: list[str], user: str | None = None, env: dict[str, str] | None = None) -> None:
        done = subprocess.run(cmd, capture_output=True, user=user, timeout=120, env=env)
        if done.returncode != 0:
            raise EngineError(f"{os.path.basename(cmd[0])} failed for {self.identifier}: "
                              f"{done.stderr.decode(errors='replace')[-400:]}")


def _address() -> str:
    used = {s.address for s in SERVERS.values()}
    for n in range(2, 255):
        candidate = f"{NETWORK}.{n}"
        if candidate not in used:
            return candidate
    raise EngineError(f"no address left in {NETWORK}.0/24")


def create(identifier: str, engine: str, port: int | None, user: str, password: str, dbname: str | None,
           on_ready: Any, on_error: Any, snapshot: str | None = None) -> Server:
    """Starts a server for a new instance in the background; `on_ready` runs once it serves."""
    with LOCK:
        if len(SERVERS) >= MAX:
            raise EngineError(f"moto_ext runs at most {MAX} real database servers at once "
                              "(MOTO_RDS_MAX_ENGINES); delete an instance first")
        server = Server(identifier, engine, _address(), port or default_port(engine), user, password, dbname)
        SERVERS[identifier] = server

    def run() -> None:
        try:
            server.create(snapshot)
            on_ready()
        except Exception as e:  # reported as a failed instance, never silently without a server
            server.error = str(e)
            on_error(str(e))

    threading.Thread(target=run, name=f"engine-{identifier}", daemon=True).start()
    return server


def get(identifier: str) -> Server | None:
    with LOCK:
        return SERVERS.get(identifier)


def remove(identifier: str) -> None:
    with LOCK:
        server = SERVERS.pop(identifier, None)
    if server is not None:
        server.stop(remove=True)


def stop_all() -> None:
    with LOCK:
        servers = list(SERVERS.values())
        SERVERS.clear()
    for server in servers:
        server.stop(remove=True)


def _on_signal(signum: int, _frame: Any) -> None:
    stop_all()
    raise SystemExit(128 + signum)


def install_cleanup() -> None:
    atexit.register(stop_all)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)


def switch_over(blue: str, green: str, old: str) -> None:
    """A blue/green switchover: green's server takes blue's identifier and address (the endpoint's
    DNS name RDS moves to green), blue's server lives on as `old` at green's address. Blocks while
    both restart."""
    with LOCK:
        b, g = SERVERS.get(blue), SERVERS.get(green)
        if b is None or g is None:
            return
    # Both stay listed while they restart, so no new server is given either address meanwhile.
    b.stop(remove=False)
    g.stop(remove=False)
    b.address, g.address = g.address, b.address
    g.start()
    b.start()
    with LOCK:
        SERVERS.pop(green, None)
        SERVERS[blue], SERVERS[old] = g, b
