"""Blue/green deployments of DB instances (and, with ``cluster_blue_green.py``, of Aurora DB
clusters) as RDS runs them, on moto's own.

moto 5.2.5 makes a deployment ``AVAILABLE`` at once, switches over at once and deletes at once,
with two tasks and no failures. This module follows the Amazon RDS API Reference
(API_BlueGreenDeployment.html, API_CreateBlueGreenDeployment.html,
API_SwitchoverBlueGreenDeployment.html, API_DeleteBlueGreenDeployment.html) and the user guide's
"Overview of Amazon RDS Blue/Green Deployments" (blue-green-deployments-overview.html):

* CreateBlueGreenDeployment needs an ``available`` source (InvalidDBInstanceState), refuses a
  source RDS does not support (SourceDatabaseNotSupportedFault: an Oracle, SQL Server or Db2
  engine, "Supported Regions and DB engines for Amazon RDS Blue/Green Deployments"; a master
  password managed in Secrets Manager, which moto refuses too, "Limitations and considerations for
  Amazon RDS blue/green deployments"), one that is not prepared as RDS asks
  (``blue_green_prerequisites.py``: automated backups for MySQL and MariaDB, logical replication for
  a PostgreSQL major upgrade) and a name in use (BlueGreenDeploymentAlreadyExistsFault); the green instance is ``<blue>-green-<6 letters>``, a copy
  of blue with the target engine version, parameter group and class; the deployment is
  ``PROVISIONING`` while green is created, then ``AVAILABLE``; its tasks are
  CREATING_READ_REPLICA_OF_SOURCE, DB_ENGINE_VERSION_UPGRADE (with a target version),
  CONFIGURE_BACKUPS and CREATING_TOPOLOGY_OF_SOURCE, each PENDING, IN_PROGRESS or COMPLETED;
* SwitchoverBlueGreenDeployment needs ``AVAILABLE`` (InvalidBlueGreenDeploymentStateFault); it is
  ``SWITCHOVER_IN_PROGRESS`` for ``modify_delay`` seconds, then blue is renamed ``<blue>-old1``,
  green takes blue's name (and endpoint), and the deployment is ``SWITCHOVER_COMPLETED`` with
  Source and Target naming the renamed instances; a switchover that fails (injected with
  ``POST /_rds_ext/blue-green?fail-switchover=<deployment id>``) is ``SWITCHOVER_FAILED``, with
  StatusDetails saying why, and renames nothing;
* ``POST /_rds_ext/blue-green?invalid=<deployment id>`` makes one ``INVALID_CONFIGURATION`` (the
  state RDS reports when green was changed so it cannot be switched over);
* DeleteBlueGreenDeployment refuses a deployment ``SWITCHOVER_IN_PROGRESS``
  (InvalidBlueGreenDeploymentStateFault) and DeleteTarget on one ``SWITCHOVER_COMPLETED``
  (InvalidParameterCombination: "You can't specify this option if the blue/green deployment status
  is SWITCHOVER_COMPLETED"); the deployment is ``DELETING`` for ``delete_delay`` seconds, then gone.

With real engines, green is a read-only replica of blue from the moment it is made ("the green
environment ... is kept in sync with the blue environment using logical replication" / "The
green environment is a copy ... kept in sync ... read-only by default", blue-green-deployments-overview.html),
and a switchover runs RDS's steps ("Switchover actions", blue-green-deployments-switching.html):
it stops writes on blue ("Stops new write operations on the primary DB instance in both
environments" and "drops connections"), waits until green has applied everything blue wrote, stops
the replication, makes green writable, then swaps the addresses and renames. When green cannot
catch up within the SwitchoverTimeout ("If the switchover doesn't complete within the specified
timeout, then any changes are rolled back and no changes are made to either environment"), blue
takes writes again and the deployment is ``SWITCHOVER_FAILED``. ``fail-switchover`` injects that
case by stopping green's replication at the switchover, so green really lags.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from . import blue_green_prerequisites, cluster_blue_green, engines, scope

# Deployments whose next switchover fails, and those to report INVALID_CONFIGURATION.
FAIL_SWITCHOVER: set[str] = set()
INVALID: set[str] = set()
FAILED_DETAILS = "Switchover failed: the green environment did not catch up with blue within the switchover timeout"
# Green instance identifier -> blue's, for the green server to replicate (__init__.start_engine).
REPLICA_OF: dict[str, str] = scope.Scoped()
HEARTBEAT = {
    "mariadb": "CREATE TABLE IF NOT EXISTS mysql.rds_heartbeat2 (id INT PRIMARY KEY, value BIGINT); "
               "REPLACE INTO mysql.rds_heartbeat2 VALUES (1, UNIX_TIMESTAMP(NOW(6)) * 1000)",
    "postgres": "CREATE TABLE IF NOT EXISTS rds_heartbeat2 (id INT PRIMARY KEY, value BIGINT); "
                "INSERT INTO rds_heartbeat2 VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET value = rds_heartbeat2.value + 1",
}


def _state(bg: Any) -> str:
    return bg.__dict__.get("_ext_state", "AVAILABLE")


def install(lock: Any, config: dict[str, float], restoring: dict[str, str], advance_all: Any) -> None:
    from moto.rds import models
    from moto.rds.exceptions import InvalidParameterCombination, RDSClientError

    Backend = models.RDSBackend
    Deployment = models.BlueGreenDeployment
    orig_create = Backend.create_blue_green_deployment
    orig_describe = Backend.describe_blue_green_deployments
    orig_switchover = Deployment.switchover
    orig_green_id = Deployment._generate_green_id

    def invalid_state(identifier: str, state: str) -> Exception:
        return RDSClientError(
            "InvalidBlueGreenDeploymentStateFault",
            f"The blue/green deployment {identifier} can't be switched over or deleted in its current state {state}.")

    def green_id(self: Any, db_identifier: str) -> str:
        # Green is a replica of blue, with a real engine.
        green = orig_green_id(self, db_identifier)
        cluster_blue_green.named_green(db_identifier, green)
        server = engines.get(db_identifier)
        if server is not None and server.ready:
            REPLICA_OF[green] = db_identifier
        return green

    def green_of(bg: Any) -> Any:
        if cluster_blue_green.is_cluster(bg.target):
            return cluster_blue_green.green_of(bg.backend, bg)
        try:
            return bg.backend.find_db_from_id(bg.target)
        except Exception:
            return None

    def advance(bg: Any) -> None:
        """The deployment's state follows its green instance and its timed phases."""
        d = bg.__dict__
        state = _state(bg)
        if state == "PROVISIONING":
            green = green_of(bg)
            if bg.blue_green_deployment_identifier in INVALID:
                d["_ext_state"] = "INVALID_CONFIGURATION"
                bg.status_details = "Resources in the green environment are invalid"
            elif green is not None and (cluster_blue_green.ready(green)
                                        if cluster_blue_green.is_cluster(bg.target)
                                        else green.status == "available"):
                d["_ext_state"] = "AVAILABLE"
        elif state == "SWITCHOVER_IN_PROGRESS" and time.monotonic() >= d.get("_ext_until", 0.0) \
                and not d.get("_ext_switching"):
            start_switch(bg)
        elif state == "DELETING" and time.monotonic() >= d.get("_ext_until", 0.0):
            bg.backend.blue_green_deployments.pop(bg.blue_green_deployment_identifier, None)
        bg.set_status(getattr(Deployment.SupportedStates, _state(bg)))
        bg.tasks = tasks(bg)

    def fail(bg: Any) -> None:
        bg.__dict__["_ext_state"] = "SWITCHOVER_FAILED"
        bg.status_details = FAILED_DETAILS

    def start_switch(bg: Any) -> None:
        """The switchover's steps, on the real servers in a thread of their own (they take as long
        as green takes to catch up); the deployment is SWITCHOVER_IN_PROGRESS meanwhile."""
        injected = bg.blue_green_deployment_identifier in FAIL_SWITCHOVER
        FAIL_SWITCHOVER.discard(bg.blue_green_deployment_identifier)
        if cluster_blue_green.is_cluster(bg.source):
            b, g, names = cluster_blue_green.servers(bg)
        else:
            blue = bg.backend.find_db_from_id(bg.source)
            green = green_of(bg)
            names = (blue.db_instance_identifier, green.db_instance_identifier if green else None)
            b, g = engines.get(names[0]), engines.get(names[1])
        if b is None or g is None:
            # No real servers: the renames alone, or the injected failure.
            if injected:
                fail(bg)
            else:
                renames(bg)
                bg.__dict__["_ext_state"] = "SWITCHOVER_COMPLETED"
            return
        bg.__dict__["_ext_switching"] = True
        timeout = float(bg.__dict__.get("_ext_timeout") or 300)
        threading.Thread(target=scope.carry(switch), args=(bg, b, g, names, injected, timeout),
                         name=f"switchover-{names[0]}", daemon=True).start()

    def switch(bg: Any, b: Any, g: Any, names: tuple[str, str], injected: bool, timeout: float) -> None:
        caught_up = False
        try:
            if injected:
                g.query("STOP SLAVE SQL_THREAD" if g.family == "mariadb" else "SELECT pg_wal_replay_pause()")
            # RDS's own heartbeat write on blue (mysql.rds_heartbeat2 on RDS for MySQL), which green
            # must have applied too before it can take over.
            b.query(HEARTBEAT[b.family])
            b.set_read_only(True)
            caught_up = g.caught_up(b.position(), timeout)
            if caught_up:
                g.promote()
        except engines.EngineError as e:
            print(f"moto_ext: switchover of {names[0]}: {e}", flush=True)
        if not caught_up:
            # Rolled back: blue takes writes again, nothing is renamed.
            try:
                b.set_read_only(False)
                if injected:
                    g.query("START SLAVE SQL_THREAD" if g.family == "mariadb" else "SELECT pg_wal_replay_resume()")
            finally:
                with lock:
                    fail(bg)
                    bg.__dict__["_ext_switching"] = False
            return
        with lock:
            renames(bg)
            bg.__dict__["_ext_state"] = "SWITCHOVER_COMPLETED"
        if not cluster_blue_green.is_cluster(bg.source):
            engines.switch_over(names[0], names[1], f"{names[0]}-old1")
        with lock:
            bg.__dict__["_ext_switching"] = False

    def renames(bg: Any) -> None:
        """The switchover's renames: an instance's through moto's (ModifyDBInstance, which refuses
        a busy instance), a cluster's with its members (cluster_blue_green.py)."""
        if cluster_blue_green.is_cluster(bg.source):
            cluster_blue_green.switch(bg.backend, bg)
            bg.set_status(Deployment.SupportedStates.SWITCHOVER_COMPLETED)
            bg.status_details = "Switchover completed"
        else:
            orig_switchover(bg)

    def tasks(bg: Any) -> list[Any]:
        state = _state(bg)
        done = "PENDING" if state == "PROVISIONING" else "COMPLETED"
        names = ["CREATING_READ_REPLICA_OF_SOURCE"]
        if bg.__dict__.get("_ext_target_version"):
            names.append("DB_ENGINE_VERSION_UPGRADE")
        names += ["CONFIGURE_BACKUPS", "CREATING_TOPOLOGY_OF_SOURCE"]
        out = []
        for i, name in enumerate(names):
            status = done
            if state == "PROVISIONING" and i == 0:
                status = "IN_PROGRESS"
            out.append(models.BlueGreenDeploymentTask(name, status))
        return out

    def found(backend: Any, identifier: str) -> Any:
        """The deployment, its state brought up to date; BlueGreenDeploymentNotFoundFault when
        there is none."""
        advance_all(backend)
        bg = backend.blue_green_deployments.get(identifier)
        if bg is None:
            return orig_describe(backend, identifier)[0]  # raises BlueGreenDeploymentNotFoundFault
        advance(bg)
        return bg

    def create_blue_green_deployment(self: Any, bg_kwargs: dict[str, Any]) -> Any:
        with lock:
            advance_all(self)
            source = bg_kwargs.get("source", "")
            if cluster_blue_green.is_cluster(source):
                cluster_blue_green.check(self, source, bg_kwargs)
                try:
                    answer = orig_create(self, bg_kwargs)
                finally:
                    cluster_blue_green.done()
                bg = self.blue_green_deployments[answer.blue_green_deployment_identifier]
                cluster_blue_green.made(self, bg)
                return started(self, answer, bg_kwargs)
            blue = self.find_db_from_id(source)
            if str(blue.engine).startswith(("oracle", "sqlserver", "db2")):
                raise RDSClientError(
                    "SourceDatabaseNotSupportedFault",
                    f"The source DB instance {blue.db_instance_identifier} isn't supported for a blue/green "
                    f"deployment: engine {blue.engine}.")
            if blue.status != "available":
                raise RDSClientError(
                    "InvalidDBInstanceState",
                    f"DB Instance {blue.db_instance_identifier} is not in available state.")
            refused = None if hasattr(blue, "master_user_secret") else \
                blue_green_prerequisites.instance(self, blue, bg_kwargs.get("target_engine_version"))
            if refused:
                raise RDSClientError("SourceDatabaseNotSupportedFault", refused)
            return started(self, orig_create(self, bg_kwargs), bg_kwargs)

    def started(self: Any, answer: Any, bg_kwargs: dict[str, Any]) -> Any:
        bg = self.blue_green_deployments[answer.blue_green_deployment_identifier]
        bg.__dict__["_ext_state"] = "PROVISIONING"
        bg.__dict__["_ext_target_version"] = bg_kwargs.get("target_engine_version")
        advance(bg)
        return bg

    def describe_blue_green_deployments(self: Any, *args: Any, **kwargs: Any) -> Any:
        with lock:
            advance_all(self)
            for bg in list(self.blue_green_deployments.values()):
                advance(bg)
            return orig_describe(self, *args, **kwargs)

    def switchover_blue_green_deployment(self: Any, blue_green_deployment_identifier: str,
                                         switchover_timeout: int | None = 300, **_: Any) -> Any:
        with lock:
            bg = found(self, blue_green_deployment_identifier)
            if _state(bg) != "AVAILABLE":
                raise invalid_state(blue_green_deployment_identifier, _state(bg))
            bg.__dict__["_ext_state"] = "SWITCHOVER_IN_PROGRESS"
            bg.__dict__["_ext_until"] = time.monotonic() + config["modify_delay"]
            bg.__dict__["_ext_timeout"] = switchover_timeout
            bg.status_details = None
            advance(bg)
            return bg

    def delete_blue_green_deployment(self: Any, blue_green_deployment_identifier: str,
                                     delete_target: Any = False, **_: Any) -> Any:
        with lock:
            bg = found(self, blue_green_deployment_identifier)
            state = _state(bg)
            delete_target = str(delete_target).lower() == "true"
            if state in ("SWITCHOVER_IN_PROGRESS", "DELETING"):
                raise invalid_state(blue_green_deployment_identifier, state)
            if delete_target and state == "SWITCHOVER_COMPLETED":
                raise InvalidParameterCombination(
                    "You can't specify this option if the blue/green deployment status is SWITCHOVER_COMPLETED")
            if delete_target:
                green = green_of(bg)
                if green is not None and cluster_blue_green.is_cluster(bg.target):
                    for member in list(green._members):
                        self.delete_db_instance(member.db_instance_identifier, None, True)
                    self.delete_db_cluster(green.db_cluster_identifier, None)
                elif green is not None:
                    self.delete_db_instance(green.db_instance_identifier, None, True)
            bg.__dict__["_ext_state"] = "DELETING"
            bg.__dict__["_ext_until"] = time.monotonic() + config["delete_delay"]
            advance(bg)
            return bg

    Deployment._generate_green_id = green_id
    Backend.create_blue_green_deployment = create_blue_green_deployment
    Backend.describe_blue_green_deployments = describe_blue_green_deployments
    Backend.switchover_blue_green_deployment = switchover_blue_green_deployment
    Backend.delete_blue_green_deployment = delete_blue_green_deployment


def control(query: dict[str, str]) -> dict[str, Any]:
    """``POST /_rds_ext/blue-green``: inject a failed switchover or an invalid configuration."""
    if "fail-switchover" in query:
        FAIL_SWITCHOVER.add(query["fail-switchover"])
    if "invalid" in query:
        INVALID.add(query["invalid"])
    return {"fail-switchover": sorted(FAIL_SWITCHOVER), "invalid": sorted(INVALID)}
