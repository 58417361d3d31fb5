"""Real database servers behind moto's RDS instances, as LocalStack Pro has them.

Opt-in: every mysql, mariadb and postgres instance when the moto run has ``MOTO_RDS_ENGINES=real``,
or one instance whose CreateDBInstance carries the tag ``moto-ext:real-engine=true``.

* mysql and mariadb instances get a MariaDB server (Debian ``mariadb-server``), postgres instances a
  PostgreSQL server (Debian ``postgresql``, run as the ``postgres`` user, since it refuses root);
* every server listens on an address of its own in the loopback range (127.0.0.2, 127.0.0.3, ...;
  with ``MOTO_RDS_ENGINE_NETWORK=10.88.1``, in that /24, which tests/env/node.sh makes local to the
  host so Pods on its node reach them) on the port the instance asked for or the engine's default,
  which is the instance's endpoint: one host per instance on the usual port, as in RDS. So does
  every endpoint that is not an instance's (an Aurora cluster's writer and reader endpoints,
  ``endpoints.Endpoint``), which forwards each connection to the server of the role it names;
* the master user is created with the master password (MariaDB: ``mysql_native_password``, which
  Node's mysql2 speaks) and DBName, if any, with the privileges RDS gives it and no more: not
  SUPER, so a read-only server refuses its writes as RDS's replicas do ("Master user account
  privileges", https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/UsingWithRDS.MasterAccounts.html);
  on PostgreSQL no superuser but a member of ``rds_superuser`` (``PG_MASTER_ROLES``), the server's
  own superuser being ``rdsadmin``, as on RDS; the anonymous users ``mariadb-install-db`` creates are dropped;
* a server can replicate another (:meth:`Server.create` with ``source``): MariaDB by binlog
  replication with global transaction ids, started from a consistent dump of the source; PostgreSQL
  by streaming replication from a ``pg_basebackup`` of it, as a hot standby. A replica is read-only
  (MariaDB ``read_only``, PostgreSQL's standby), its state is watched (:meth:`Server.replication`),
  it can be promoted (replication stopped, writable, no dump) or pointed at a new source, and a
  caller can wait until it has all of its source's writes (:meth:`Server.caught_up`);
* the instance stays ``creating`` until its server accepts connections; a new master password is
  set with ALTER USER/ROLE; a new port restarts the server on it; deletion stops it and removes
  its data;
* a DB snapshot (CreateDBSnapshot, or the final snapshot of DeleteDBInstance) keeps a consistent
  logical dump of the instance's database (``--single-transaction`` / ``pg_dump``), and
  RestoreDBInstanceFromDBSnapshot starts a new server loaded from it;
* every server serves TLS with a certificate of the test bed's own CA (``tls.files``, served at
  ``GET /_rds_ext/ca.pem``), in the role of RDS's CA bundle ("Using SSL/TLS to encrypt a connection
  to a DB instance", UsingWithRDS.SSL.html; see ``tls.py``); a server refuses plain connections when its
  parameter group says so: ``require_secure_transport`` (MySQL and MariaDB, default 0 up to MySQL
  8.4, mysql-ssl-connections.require-ssl.html) or ``rds.force_ssl`` (PostgreSQL, "The default
  value of rds.force_ssl is 1 (on) for RDS for PostgreSQL version 15 and later",
  PostgreSQL.Concepts.General.SSL.html), and follows a change of it at once (both are dynamic);
* IAM database authentication (``iam_auth.py``): every MariaDB server loads ``iam/rds_iam.c`` as
  its AWSAuthenticationPlugin, and every PostgreSQL server sends members of ``rds_iam`` through
  PAM to the same object; both ask ``iam/check.py``, which asks the emulator;
* small servers (16 MiB buffers, no performance schema); at most ``MOTO_RDS_MAX_ENGINES`` (16) run
  at once, past that a create is refused with a clear error before anything is made
  (:func:`reserve`); every server is stopped when moto stops (``moto.sh stop`` also stops any a
  killed moto left).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import threading
import time
from typing import Any

from . import scope, tls

ROOT = os.environ.get("MOTO_RDS_ENGINES_DIR") or f"/tmp/moto-rds-engines-{os.environ.get('MOTO_PORT', '4566')}"
MAX = int(os.environ.get("MOTO_RDS_MAX_ENGINES", "16") or 16)
ALL = os.environ.get("MOTO_RDS_ENGINES", "") == "real"
TAG = "moto-ext:real-engine"
NETWORK = os.environ.get("MOTO_RDS_ENGINE_NETWORK") or "127.0.0"
PG_BIN = "/usr/lib/postgresql/15/bin"
# PostgreSQL: the server's own superuser, as RDS has one its users cannot log in as ("rdsadmin",
# Appendix.PostgreSQL.CommonDBATasks.Roles.html); it logs in only by the server's own socket. The
# master user is not a superuser (below).
PG_ADMIN = "rdsadmin"
# What RDS makes of the master user: ``CREATE ROLE postgres WITH LOGIN NOSUPERUSER INHERIT CREATEDB
# CREATEROLE NOREPLICATION VALID UNTIL 'infinity'``, granted rds_superuser
# (Appendix.PostgreSQL.CommonDBATasks.Roles.rds_superuser.html); rds_superuser is a member of
# pg_monitor and pg_signal_backend and may grant rds_replication and rds_password. So ALTER SYSTEM,
# COPY ... PROGRAM, untrusted languages and ending a superuser's session are refused, as on RDS.
PG_MASTER_ROLES = (
    "CREATE ROLE rds_superuser NOLOGIN;",
    "CREATE ROLE rds_replication NOLOGIN;",
    "CREATE ROLE rds_password NOLOGIN;",
    "GRANT pg_monitor, pg_signal_backend TO rds_superuser;",
    "GRANT rds_replication, rds_password TO rds_superuser WITH ADMIN OPTION;",
    # A user granted rds_iam logs in with an IAM authentication token only (iam_auth.py); the
    # master user grants it by its CREATEROLE, and is no member (pg_hba's +rds_iam would match it).
    "CREATE ROLE rds_iam NOLOGIN;",
)

SNAPSHOTS = os.path.join(ROOT, "snapshots")
# IAM database authentication (iam_auth.py): the MariaDB plugin built here, the checker both
# engines run, and the emulator they ask.
IAM_DIR = os.path.join(ROOT, "iam")
IAM_SOURCE = os.path.join(os.path.dirname(__file__), "iam")
IAM_URL = f"http://127.0.0.1:{os.environ.get('MOTO_PORT', '4566')}"
PAM_DIR = "/etc/pam.d"

LOCK = threading.RLock()
# By identifier within the account and region (scope.py).
SERVERS: dict[str, "Server"] = scope.Scoped()
# Addresses in use by servers and endpoints (and those held while a switchover restarts servers).
ADDRESSES: set[str] = set()
# Servers being made, counted against MAX from the call that asked for them.
RESERVED: set[str] = scope.ScopedSet()

# The user replicas log in to their source with: RDS's own name for it (rdsrepladmin), one password
# for the whole test bed, so any server can be pointed at any other.
REPL_USER = "rdsrepladmin"
REPL_PASSWORD = secrets.token_hex(16)
# What RDS grants the master user of RDS for MySQL and MariaDB: no SUPER, no READ_ONLY ADMIN
# (UsingWithRDS.MasterAccounts.html).
MASTER_PRIVILEGES = ("SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, RELOAD, PROCESS, REFERENCES, INDEX, "
                     "ALTER, SHOW DATABASES, CREATE TEMPORARY TABLES, LOCK TABLES, EXECUTE, "
                     "REPLICATION SLAVE, BINLOG MONITOR, CREATE VIEW, SHOW VIEW, CREATE ROUTINE, "
                     "ALTER ROUTINE, CREATE USER, EVENT, TRIGGER")
SYSTEM_DATABASES = {"mysql", "information_schema", "performance_schema", "sys"}
_SERVER_IDS = iter(range(1, 1 << 31))
def wanted(engine: str, tags: list[dict[str, str]] | None) -> bool:
    """Whether an instance of this engine, created with these tags, gets a real server."""
    if family(engine) is None:
        return False
    tagged = any(t.get("Key") == TAG and str(t.get("Value")).lower() == "true" for t in tags or [])
    return ALL or tagged


def iam_files() -> tuple[str, str]:
    """The checker (``iam/check.py``) and the directory of ``rds_iam.so`` (``iam/rds_iam.c``, built
    with gcc on first use): MariaDB's plugin AWSAuthenticationPlugin and PostgreSQL's PAM module,
    both where the servers' users (root, postgres) can run them."""
    checker = os.path.join(IAM_DIR, "check.py")
    plugin_dir = os.path.join(IAM_DIR, "plugin")
    plugin = os.path.join(plugin_dir, "rds_iam.so")
    with LOCK:
        if not os.path.exists(plugin):
            os.makedirs(plugin_dir, exist_ok=True)
            shutil.copyfile(os.path.join(IAM_SOURCE, "check.py"), checker)
            os.chmod(checker, 0o755)
            done = subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", plugin + ".tmp",
                                   os.path.join(IAM_SOURCE, "rds_iam.c")],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise EngineError(f"building the IAM authentication plugin failed: {done.stderr.strip()}")
            # MariaDB loads plugins from one directory: this one holds the server's own too (the
            # audit plugin an option group installs, say), as links.
            own = _mariadb_plugin_dir()
            for name in os.listdir(own):
                link = os.path.join(plugin_dir, name)
                if not os.path.lexists(link):
                    os.symlink(os.path.join(own, name), link)
            os.replace(plugin + ".tmp", plugin)
    return checker, plugin_dir


def _mariadb_plugin_dir() -> str:
    """The MariaDB server's own plugin directory (Debian's /usr/lib/mysql/plugin)."""
    done = subprocess.run(["mariadbd", "--no-defaults", "--verbose", "--help"], capture_output=True, text=True)
    found = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("plugin-dir ")]
    return found[0] if found else "/usr/lib/mysql/plugin"


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
    def __init__(self, identifier: str, engine: str, address: str, port: int, user: str, password: str,
                 dbname: str | None):
        self.identifier = identifier
        self.family = family(engine)
        self.address = address
        self.port = port
        self.user = user
        self.password = password
        self.dbname = dbname
        self.dir = os.path.join(ROOT, f"{identifier}-{secrets.token_hex(3)}")
        self.server_id = next(_SERVER_IDS)
        self.process: subprocess.Popen[bytes] | None = None
        self.ready = False
        self.error: str | None = None
        # The server this one replicates, while it does; a replica is read-only.
        self.source: Server | None = None
        self.read_only = False
        # Plain connections refused (require_secure_transport / rds.force_ssl).
        self.tls_required = False

    # --- lifecycle -----------------------------------------------------------------------------

    def create(self, snapshot: str | None = None, source: "Server | None" = None) -> None:
        """Initialises the data directory, starts the server, creates the master user and, for a
        restore, loads the snapshot's data; with `source`, makes it a read-only replica of that
        server instead."""
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir, exist_ok=True)
        deadline = time.monotonic() + 120
        while source is not None and not source.ready and time.monotonic() < deadline:
            if source.error:
                raise EngineError(f"the source of {self.identifier} failed: {source.error}")
            time.sleep(0.2)
        if source is not None and self.family == "postgres":
            self._pg_base_backup(source)
            self._write_hba()
            self.source, self.read_only = source, True
            self.start()
            self.ready = True
            return
        self._init_data()
        self.read_only = source is not None
        self.start()
        self._setup()
        if source is not None:
            self._replicate_from_dump(source)
        elif snapshot is not None:
            self.load(snapshot)
        self.ready = True

    def _init_data(self) -> None:
        if self.family == "mariadb":
            # A temporary directory of its own: servers set up side by side share nothing in /tmp.
            os.makedirs(self.tmp, exist_ok=True)
            self._run(["mariadb-install-db", "--no-defaults", "--user=root", f"--datadir={self.data}",
                       "--skip-test-db", "--auth-root-authentication-method=socket"],
                      env={**os.environ, "TMPDIR": self.tmp})
            return
        shutil.chown(self.dir, "postgres", "postgres")
        self._run([f"{PG_BIN}/initdb", "-D", self.data, "-U", PG_ADMIN, "--auth-local=trust",
                   "--auth-host=scram-sha-256"], user="postgres")
        # Password logins from any address, as on RDS: its users cannot edit pg_hba.conf, the only
        # method is a password, and the security groups decide who reaches the instance
        # (https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/Appendix.PostgreSQL.CommonDBATasks.html,
        # "Managing PostgreSQL database access"). initdb allows only 127.0.0.1; clients here come
        # from the instance's own address or from Pods on the test node.
        with open(os.path.join(self.data, "pg_hba.conf"), "a") as hba:
            hba.write("host all all 0.0.0.0/0 scram-sha-256\n")
        self._write_hba()

    @property
    def pam_service(self) -> str:
        return f"rds-iam-{os.path.basename(self.dir)}"

    def _write_hba(self) -> None:
        """PostgreSQL: members of rds_iam log in through PAM, which runs the IAM token check, and
        by no password (UsingWithRDS.IAMDBAuth.DBAccounts.html); with rds.force_ssl, a first line
        that refuses every plain TCP connection."""
        path = os.path.join(self.data, "pg_hba.conf")
        with open(path) as f:
            lines = [line for line in f if not line.startswith(("hostnossl all all all reject", "host all +rds_iam "))]
        checker, plugin_dir = iam_files()
        module = os.path.join(plugin_dir, "rds_iam.so")
        try:
            with open(os.path.join(PAM_DIR, self.pam_service), "w") as pam:
                pam.write(f"auth required {module} {checker} {IAM_URL} {os.path.basename(self.dir)}\n"
                          f"account required {module}\n")
            lines.insert(0, f"host all +rds_iam all pam pamservice={self.pam_service}\n")
        except PermissionError:
            pass  # not root: no PAM service, and members of rds_iam log in by no method at all
        if self.tls_required:
            lines.insert(0, "hostnossl all all all reject\n")
        with open(path, "w") as f:
            f.writelines(lines)

    def set_tls_required(self, on: bool) -> None:
        """The parameter changed: plain connections refused (or taken again) from now on."""
        if on == self.tls_required or not self.ready:
            self.tls_required = on
            return
        self.tls_required = on
        if self.family == "postgres":
            self._write_hba()
            self._psql("SELECT pg_reload_conf();")
        else:
            self._mariadb(f"SET GLOBAL require_secure_transport = {'ON' if on else 'OFF'};")

    def _tls_options(self) -> list[str]:
        files = tls.files()
        if self.family == "mariadb":
            out = [f"--ssl-ca={files['ca']}", f"--ssl-cert={files['server']}", f"--ssl-key={files['server-key']}"]
            return out + (["--require-secure-transport=ON"] if self.tls_required else [])
        # PostgreSQL wants its key private to it.
        key = os.path.join(self.dir, "server-key.pem")
        shutil.copyfile(files["server-key"], key)
        shutil.chown(key, "postgres", "postgres")
        os.chmod(key, 0o600)
        return ["-c", "ssl=on", "-c", f"ssl_cert_file={files['server']}", "-c", f"ssl_key_file={key}",
                "-c", f"ssl_ca_file={files['ca']}"]

    @property
    def data(self) -> str:
        return os.path.join(self.dir, "data")

    @property
    def tmp(self) -> str:
        return os.path.join(self.dir, "tmp")

    @property
    def socket(self) -> str:
        return f"{self.dir}/mysqld.sock"

    def start(self) -> None:
        log = open(os.path.join(self.dir, "server.log"), "ab")
        if self.family == "mariadb":
            os.makedirs(self.tmp, exist_ok=True)
            # Every server keeps a binlog with global transaction ids, so any of them can be a
            # source, and a replica logs what it applies, so it can become one.
            cmd = ["mariadbd", "--no-defaults", "--user=root", f"--datadir={self.data}",
                   f"--socket={self.socket}", f"--pid-file={self.dir}/mysqld.pid",
                   f"--bind-address={self.address}", f"--port={self.port}", f"--tmpdir={self.tmp}",
                   "--innodb-buffer-pool-size=16M", "--performance-schema=OFF", "--skip-name-resolve",
                   "--aria-pagecache-buffer-size=1M", "--key-buffer-size=1M", "--innodb-log-buffer-size=1M",
                   "--table-open-cache=100", "--table-definition-cache=200", "--thread-cache-size=2",
                   "--max-connections=50", f"--server-id={self.server_id}", f"--log-bin={self.dir}/binlog",
                   f"--relay-log={self.dir}/relay", "--binlog-format=ROW", "--log-slave-updates",
                   "--slave-net-timeout=10"]
            if self.read_only:
                cmd.append("--read-only")
            cmd += self._tls_options()
            checker, plugin_dir = iam_files()
            cmd += [f"--plugin-dir={plugin_dir}", "--plugin-load-add=rds_iam.so"]
            env = {**os.environ, "RDS_IAM_CHECKER": checker, "RDS_IAM_URL": IAM_URL,
                   "RDS_IAM_SERVER": os.path.basename(self.dir)}
            self.process = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True, env=env)
        else:
            cmd = [f"{PG_BIN}/postgres", "-D", self.data, "-c", f"listen_addresses={self.address}",
                   "-c", f"port={self.port}", "-c", f"unix_socket_directories={self.dir}",
                   "-c", "shared_buffers=16MB", "-c", "max_connections=20", "-c", "fsync=off",
                   "-c", "wal_level=replica", "-c", "max_wal_senders=10", "-c", "hot_standby=on",
                   *self._tls_options()]
            self.process = subprocess.Popen(cmd, stdout=log, stderr=log, user="postgres", start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                # Its last words in the message: the directory goes with a failed instance.
                with open(os.path.join(self.dir, "server.log"), "rb") as told:
                    last = told.read()[-600:].decode(errors="replace")
                raise EngineError(f"the {self.family} server of {self.identifier} exited: {last}")
            # Its own socket too: a TCP answer alone may come from another process still on the
            # address. Connected to, not only present: the file exists from its bind, and a
            # connection before its listen is refused (a loaded machine widened that gap until
            # the first statement on it failed).
            own = self.socket if self.family == "mariadb" else os.path.join(self.dir, f".s.PGSQL.{self.port}")
            try:
                with socket.create_connection((self.address, self.port), timeout=0.5), \
                        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix:
                    unix.settimeout(0.5)
                    unix.connect(own)
                if self._accepting():
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise EngineError(f"the {self.family} server of {self.identifier} did not start within 60 s")

    def _accepting(self) -> bool:
        """Whether the server takes a session: PostgreSQL answers its socket while it is still
        starting up, and refuses a session then ("the database system is starting up")."""
        if self.family == "mariadb":
            return True
        done = subprocess.run([f"{PG_BIN}/pg_isready", "-q", "-h", self.dir, "-p", str(self.port)],
                              capture_output=True, timeout=10)
        return done.returncode == 0

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
            if self.family == "postgres":
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(PAM_DIR, self.pam_service))

    # --- replication ---------------------------------------------------------------------------

    def _replicate_from_dump(self, source: "Server") -> None:
        """MariaDB: loads a consistent dump of the source's databases, taken with the source's
        global transaction id at that point, and replicates from there."""
        databases = [d for d in source.query("SHOW DATABASES").split() if d not in SYSTEM_DATABASES]
        position = source.query("SELECT @@GLOBAL.gtid_binlog_pos").strip()
        if databases:
            done = subprocess.run(
                ["mariadb-dump", "--no-defaults", "-uroot", f"--socket={source.socket}", "--single-transaction",
                 "--master-data=2", "--gtid", "--routines", "--triggers", "--events", "--databases", *databases],
                capture_output=True, timeout=300)
            if done.returncode != 0:
                raise EngineError(f"dumping {source.identifier} for {self.identifier} failed: "
                                  f"{done.stderr.decode(errors='replace')[-400:]}")
            found = re.search(rb"SET GLOBAL gtid_slave_pos\s*=\s*'([^']*)'", done.stdout)
            position = found.group(1).decode() if found else position
            loaded = subprocess.run(["mariadb", "--no-defaults", "-uroot", f"--socket={self.socket}",
                                     "--init-command=SET sql_log_bin=0"], input=done.stdout,
                                    capture_output=True, timeout=300)
            if loaded.returncode != 0:
                raise EngineError(f"loading {self.identifier} failed: {loaded.stderr.decode(errors='replace')[-400:]}")
        self._mariadb(f"SET GLOBAL gtid_slave_pos = {_sql_string(position)};")
        self.follow(source, "slave_pos")

    def _pg_base_backup(self, source: "Server") -> None:
        """PostgreSQL: a base backup of the source, written as a standby of it (-R)."""
        shutil.chown(self.dir, "postgres", "postgres")
        self._run([f"{PG_BIN}/pg_basebackup", "-D", self.data, "-h", source.dir, "-p", str(source.port),
                   "-U", PG_ADMIN, "-X", "stream", "-R", "-c", "fast"], user="postgres")

    def follow(self, source: "Server", position: str = "current_pos") -> None:
        """Replicates `source` from now on, read-only (a new replica, or a writer demoted after a
        failover: `current_pos` goes on from what this server has)."""
        if self.family == "postgres":
            # A standby of the new source: its data again from a base backup of it.
            self.stop(remove=False)
            shutil.rmtree(self.data, ignore_errors=True)
            self._pg_base_backup(source)
            self._write_hba()
            self.source, self.read_only = source, True
            self.start()
            return
        self.source, self.read_only = source, True
        self._mariadb(
            "SET GLOBAL read_only = ON; STOP SLAVE; "
            f"CHANGE MASTER TO MASTER_HOST={_sql_string(source.address)}, MASTER_PORT={source.port}, "
            f"MASTER_USER={_sql_string(REPL_USER)}, MASTER_PASSWORD={_sql_string(REPL_PASSWORD)}, "
            f"MASTER_CONNECT_RETRY=1, MASTER_USE_GTID={position}; START SLAVE;")

    def promote(self) -> None:
        """Stops replicating and takes writes: the promotion of a replica, with no dump."""
        if self.family == "postgres":
            if self.source is not None:
                self._run([f"{PG_BIN}/pg_ctl", "promote", "-w", "-D", self.data], user="postgres")
        else:
            self._mariadb("STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = OFF;")
        self.source, self.read_only = None, False

    def set_read_only(self, on: bool) -> None:
        """Refuses (or takes again) writes from clients, as a switchover does to blue."""
        self.read_only = on
        if self.family == "postgres":
            value = "on" if on else "off"
            self._psql(f"ALTER SYSTEM SET default_transaction_read_only = {value};")
            self._psql("SELECT pg_reload_conf();")
            if on:
                # Sessions already open keep their setting: end them, as RDS drops connections.
                self._psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid();")
        else:
            self._mariadb(f"SET GLOBAL read_only = {'ON' if on else 'OFF'};")

    def position(self) -> str:
        """How far this server's data goes: its binlog position (MariaDB) or WAL location (PostgreSQL)."""
        if self.family == "postgres":
            return self.query("SELECT pg_current_wal_lsn()").strip()
        return self.query("SELECT @@GLOBAL.gtid_binlog_pos").strip()

    def caught_up(self, position: str, timeout: float) -> bool:
        """Whether this replica has applied everything up to its source's `position` within
        `timeout` seconds."""
        if self.family == "mariadb":
            answer = self.query(f"SELECT MASTER_GTID_WAIT({_sql_string(position)}, {max(timeout, 0.1)})",
                                timeout=timeout + 30)
            return answer.strip() == "0"
        deadline = time.monotonic() + timeout
        while True:
            done = self.query(f"SELECT pg_last_wal_replay_lsn() >= {_pg_string(position)}::pg_lsn").strip()
            if done == "t":
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)

    def replication(self) -> tuple[str, str | None]:
        """The replica's state as RDS names it in StatusInfos: ``replicating``, or ``error`` with
        the reason (DBInstanceStatusInfo, API_DBInstanceStatusInfo.html); read at most once a
        second."""
        cached = getattr(self, "_replication", None)
        if cached is not None and time.monotonic() - cached[0] < 1.0:
            return cached[1]
        state = self._replication_now()
        self._replication = (time.monotonic(), state)
        return state

    def _replication_now(self) -> tuple[str, str | None]:
        try:
            if self.family == "postgres":
                state = self.query("SELECT status FROM pg_stat_wal_receiver").strip()
                return ("replicating", None) if state in ("streaming", "catchup", "startup") else \
                    ("error", f"the WAL receiver is {state or 'not running'}")
            lines = self.query("SHOW SLAVE STATUS", names=True).splitlines()
            rows = dict(zip(lines[0].split("\t"), lines[1].split("\t"))) if len(lines) > 1 else {}
        except EngineError as e:
            return "error", str(e)
        if rows.get("Slave_SQL_Running") == "Yes" and rows.get("Slave_IO_Running") in ("Yes", "Connecting"):
            return "replicating", None
        return "error", rows.get("Last_SQL_Error") or rows.get("Last_IO_Error") or "replication is stopped"

    # --- changes RDS makes -----------------------------------------------------------------------

    def dump(self, snapshot: str) -> None:
        """Keeps a consistent logical copy of the instance's database for a snapshot."""
        if not self.dbname:
            return
        os.makedirs(SNAPSHOTS, exist_ok=True)
        path = os.path.join(SNAPSHOTS, f"{snapshot.replace(':', '_')}.sql")
        if self.family == "mariadb":
            cmd = ["mariadb-dump", "--no-defaults", "-uroot", f"--socket={self.socket}",
                   "--single-transaction", "--databases", self.dbname]
            user = None
        else:
            cmd = [f"{PG_BIN}/pg_dump", "-h", self.dir, "-p", str(self.port), "-U", PG_ADMIN,
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
            cmd = ["mariadb", "--no-defaults", "-uroot", f"--socket={self.socket}"]
            user = None
        else:
            cmd = [f"{PG_BIN}/psql", "-h", self.dir, "-p", str(self.port), "-U", PG_ADMIN, "-d", self.dbname or "postgres",
                   "-v", "ON_ERROR_STOP=1"]
            user = "postgres"
            # What the restore makes belongs to the master user, as the snapshot's did (the dump
            # names no owner): the master user is no superuser, and must reach its own tables.
            sql = f"SET ROLE {_quote_ident(self.user, chr(34))};\n".encode() + sql
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
        """The master user and database, and the replication user; none of it goes into the
        binlog, so every server's transaction history holds only what clients wrote."""
        if self.family == "mariadb":
            user = _sql_string(self.user)
            sql = [
                "SET sql_log_bin = 0;",
                # mariadb-install-db's anonymous users would shadow 'admin'@'%' for loopback logins.
                "DELETE FROM mysql.global_priv WHERE User='';",
                "FLUSH PRIVILEGES;",
                f"CREATE USER {user}@'%' IDENTIFIED BY {_sql_string(self.password)};",
                f"GRANT {MASTER_PRIVILEGES} ON *.* TO {user}@'%' WITH GRANT OPTION;",
                f"CREATE USER {_sql_string(REPL_USER)}@'%' IDENTIFIED BY {_sql_string(REPL_PASSWORD)};",
                f"GRANT REPLICATION SLAVE ON *.* TO {_sql_string(REPL_USER)}@'%';",
            ]
            if self.dbname:
                sql.append(f"CREATE DATABASE IF NOT EXISTS {_quote_ident(self.dbname, '`')};")
            self._mariadb(" ".join(sql))
        else:
            role = _quote_ident(self.user, '"')
            for statement in (*PG_MASTER_ROLES,
                              f"CREATE ROLE {role} WITH LOGIN NOSUPERUSER INHERIT CREATEDB CREATEROLE "
                              f"NOREPLICATION VALID UNTIL 'infinity' PASSWORD {_pg_string(self.password)};",
                              f"GRANT rds_superuser TO {role} WITH ADMIN OPTION;"):
                self._psql(statement)
            if self.dbname:
                self._psql(f"CREATE DATABASE {_quote_ident(self.dbname, chr(34))} OWNER {role};")

    def query(self, sql: str, timeout: float = 30, names: bool = False) -> str:
        """One statement as the server's own superuser; its rows, tab-separated (MariaDB: after a
        line of column names, with `names`)."""
        if self.family == "mariadb":
            cmd = ["mariadb", "--no-defaults", "-uroot", f"--socket={self.socket}", "--batch",
                   *([] if names else ["--skip-column-names"]), "-e", sql]
            user = None
        else:
            cmd = [f"{PG_BIN}/psql", "-h", self.dir, "-p", str(self.port), "-U", PG_ADMIN, "-d", "postgres",
                   "-At", "-v", "ON_ERROR_STOP=1", "-c", sql]
            user = "postgres"
        try:
            done = subprocess.run(cmd, capture_output=True, user=user, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise EngineError(f"{sql[:40]} timed out on {self.identifier}")
        if done.returncode != 0:
            raise EngineError(f"{sql[:40]} failed on {self.identifier}: {done.stderr.decode(errors='replace')[-400:]}")
        return done.stdout.decode(errors="replace")

    def _mariadb(self, sql: str) -> None:
        self._run(["mariadb", "--no-defaults", "-uroot", f"--socket={self.socket}", "-e", sql])

    def _psql(self, sql: str) -> None:
        self._run([f"{PG_BIN}/psql", "-h", self.dir, "-p", str(self.port), "-U", PG_ADMIN, "-d", "postgres",
                   "-v", "ON_ERROR_STOP=1", "-c", sql], user="postgres")

    def _run(self, cmd: list[str], user: str | None = None, env: dict[str, str] | None = None) -> None:
        done = subprocess.run(cmd, capture_output=True, user=user, timeout=120, env=env)
        if done.returncode != 0:
            raise EngineError(f"{os.path.basename(cmd[0])} failed for {self.identifier}: "
                              f"{done.stderr.decode(errors='replace')[-400:]}")


def _address(port: int | None = None) -> str:
    """A free address of the engine network; with `port`, one where nothing listens on it still
    (a server of a deleted instance whose process outlived its registry entry, or one of another
    test bed on this host's network: a server given its address failed at start with "could not
    bind IPv4 address ...: Address already in use")."""
    used = {s.address for s in SERVERS.values()} | ADDRESSES
    for n in range(2, 255):
        candidate = f"{NETWORK}.{n}"
        if candidate not in used and (port is None or _bindable(candidate, port)):
            return candidate
    raise EngineError(f"no address left in {NETWORK}.0/24")


def _bindable(address: str, port: int) -> bool:
    """Whether a server could listen on (address, port) now."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((address, port))
        return True
    return False


def callbacks(lock: Any, model: Any) -> tuple[Any, Any]:
    """What an instance or cluster that waits in its timed phase (``creating``, ``modifying``) for
    its server does when the server serves (the phase ends at the next request), or fails (it is
    ``failed``, the test bed's own fault, and says why in moto's log)."""

    def ready() -> None:
        with lock:
            model.__dict__["_ext_until"] = 0.0

    def failed(message: str) -> None:
        with lock:
            model.__dict__["_ext_phase"] = None
            model.status = "failed"
        print(f"moto_ext: {message}", flush=True)

    return ready, failed


def reserve(identifier: str) -> None:
    """Counts a server to be made against MAX before anything is created, so a create past the
    limit is refused whole (InsufficientDBInstanceCapacity) and never made with an endpoint that
    reaches nothing."""
    with LOCK:
        if identifier in RESERVED:
            return
        if len(SERVERS) + len(RESERVED) >= MAX:
            raise EngineError(f"moto_ext runs at most {MAX} real database servers at once "
                              "(MOTO_RDS_MAX_ENGINES); delete an instance first")
        RESERVED.add(identifier)


def release(identifier: str) -> None:
    with LOCK:
        RESERVED.discard(identifier)


def create(identifier: str, engine: str, port: int | None, user: str, password: str, dbname: str | None,
           on_ready: Any, on_error: Any, snapshot: str | None = None, source: Server | None = None,
           tls_required: bool = False) -> Server:
    """Starts a server for a new instance in the background (a replica of `source`, if given);
    `on_ready` runs once it serves."""
    with LOCK:
        reserve(identifier)  # passes at once when the caller reserved it
        RESERVED.discard(identifier)
        port = port or default_port(engine)
        server = Server(identifier, engine, _address(port), port, user, password, dbname)
        server.tls_required = tls_required
        SERVERS[identifier] = server

    def run() -> None:
        try:
            server.create(snapshot, source)
            on_ready()
        except Exception as e:  # reported as a failed instance, never silently without a server
            server.error = str(e)
            on_error(str(e))

    threading.Thread(target=scope.carry(run), name=f"engine-{identifier}", daemon=True).start()
    return server


def get(identifier: str | None) -> Server | None:
    if not identifier:
        return None
    with LOCK:
        return SERVERS.get(identifier)


def rename(old: str, new: str) -> None:
    """An instance renamed (ModifyDBInstance NewDBInstanceIdentifier) keeps its server."""
    with LOCK:
        server = SERVERS.pop(old, None)
        if server is not None:
            SERVERS[new] = server
            server.identifier = new


def remove(identifier: str) -> None:
    with LOCK:
        server = SERVERS.pop(identifier, None)
        if server is not None:
            # Held until the process is gone, so no new server or endpoint is given it meanwhile.
            ADDRESSES.add(server.address)
    if server is not None:
        try:
            server.stop(remove=True)
        finally:
            with LOCK:
                ADDRESSES.discard(server.address)


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
    """A blue/green switchover's renames: green's server takes blue's identifier and address (the
    endpoint's DNS name RDS moves to green), blue's server lives on as `old` at green's address.
    Blocks while both restart."""
    with LOCK:
        b, g = SERVERS.get(blue), SERVERS.get(green)
        if b is None or g is None:
            return
        # Both addresses stay held while the servers restart, so no new server is given either.
        ADDRESSES.update({b.address, g.address})
    try:
        b.stop(remove=False)
        g.stop(remove=False)
        b.address, g.address = g.address, b.address
        g.start()
        b.start()
    finally:
        with LOCK:
            ADDRESSES.difference_update({b.address, g.address})
            SERVERS.pop(green, None)
            SERVERS[blue], SERVERS[old] = g, b
            g.identifier, b.identifier = blue, old
