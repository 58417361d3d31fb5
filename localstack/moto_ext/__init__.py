"""Time-faithful RDS for moto server.

Out of the box moto makes a DB instance `available` the moment it is created and applies every
modification at once. Real RDS takes minutes, and an operator has to wait through `creating`,
`modifying` and `deleting`. This extension, loaded by ``run_moto.py``, makes moto's RDS do the same:

* CreateDBInstance -> ``creating`` for ``create_delay`` seconds (no endpoint yet), then ``available``;
* ModifyDBInstance -> ``modifying`` for ``modify_delay`` seconds, the changes shown in
  PendingModifiedValues meanwhile, then applied; a change sent without ApplyImmediately waits in
  PendingModifiedValues (the maintenance window) until a later immediate modification or
  ``POST /_rds_ext/apply-pending?identifier=...``;
* DeleteDBInstance -> ``deleting`` for ``delete_delay`` seconds (and while its final snapshot is
  taken: ``snapshots.py``), then gone;
* a modification or deletion while the instance is busy is refused with InvalidDBInstanceState,
  as RDS does;
* a DB subnet group an instance uses cannot be deleted (InvalidDBSubnetGroupStateFault), and
  ModifyDBSubnetGroup keeps the group (moto loses it);
* DB parameter groups have engine default catalogs, resets, and ``pending-reboot`` until a
  RebootDBInstance: see ``parameters.py``;
* DB cluster parameter groups have the same, with ``pending-reboot`` on the clusters' members:
  see ``cluster_parameters.py``;
* after every mutating RDS call, the EventBridge event CloudTrail would send goes on moto's event
  bus: see ``cloudtrail.py``;
* Performance Insights, the network type, the lifecycle support and the certificate details are
  kept and shown: see ``features.py``;
* STS AssumeRole needs the role to exist and its trust policy to let the caller in (the principal,
  ``sts:ExternalId``, ``sts:TagSession``): see ``trust.py``. moto's own accounts follow: the
  credentials AssumeRole returns act in the role's account, in every region;
* the Resource Groups Tagging API lists DB subnet and parameter groups with their tags, as AWS's
  does: see ``tagging.py``;
* read replicas are instances of their own, with lifecycle states, StatusInfos and promotion:
  see ``replicas.py``;
* blue/green deployments of instances go through PROVISIONING, AVAILABLE, SWITCHOVER_IN_PROGRESS and
  SWITCHOVER_COMPLETED (or fail), with the renames and a copy of blue's data: see ``blue_green.py``;
* cross-region automated backup replication of an instance: see ``backup_replication.py``;
* a manual DB snapshot or DB cluster snapshot is ``creating``, with its progress, for
  ``snapshot_delay`` seconds, and copies keep their source's dump: see ``snapshots.py``;
* global clusters take tags, ModifyGlobalCluster and their deletion protection: see
  ``global_clusters.py``; custom cluster endpoints: ``cluster_endpoints.py``;
* an encrypted source in another GovCloud (or, for replicas, China) region needs a PreSignedUrl
  that is that call signed there: see ``presigned.py``;
* engine versions and DB instance classes come from a catalog, which DescribeDBEngineVersions and
  DescribeOrderableDBInstanceOptions answer and the creates and modifies are held to: see
  ``catalog.py``;
* identifiers are unique per account and region, as RDS's are: the emulator's own tables (real
  servers, topologies, endpoints) are keyed within the request's account and region, see
  ``scope.py``;
* Aurora DB clusters have the same lifecycle, busy errors and pages, their members take the
  cluster's settings, and real engines serve their endpoints: see ``clusters.py``.

It also counts the RDS API calls it serves, per action and DB instance identifier (or DB subnet
or parameter group name), so tests can
assert on what reached "AWS": ``GET /_rds_ext/calls[?identifier=ID]`` (and the parameter names,
never values, of each mutating call: ``GET /_rds_ext/call-parameters?action=A&identifier=ID``),
with the time of every
mutating call (``GET /_rds_ext/mutations?since=EPOCH``, for latency figures); and it shows the master
password an instance was last given (``GET /_rds_ext/master-password?identifier=ID``), which real
RDS never would, so tests can check that the password an application gets is the database's.

With ``MOTO_RDS_ENGINES=real`` (or the tag ``moto-ext:real-engine=true`` on one instance), mysql,
mariadb and postgres instances are backed by real database servers: see ``engines.py``.

Delays come from the environment (MOTO_RDS_CREATE_DELAY, MOTO_RDS_MODIFY_DELAY,
MOTO_RDS_DELETE_DELAY, seconds, default 0) and can be changed on a running server with
``POST /_rds_ext/config`` and a JSON body such as ``{"create_delay": 3}`` (or the query
``?create_delay=3``). ``iam_token_life`` (MOTO_RDS_IAM_TOKEN_LIFE, seconds, default 900) is how long
an IAM authentication token logs in (``iam_auth.py``). ``auto_start_after``
(MOTO_RDS_AUTO_START_AFTER, seconds, default 7 days) is how long a stopped instance stays stopped
before it starts by itself (``activation.py``). ``iopt_switch_after`` (MOTO_RDS_IOPT_SWITCH_AFTER,
seconds, default 30 days) is how long an Aurora cluster waits between switches to I/O-Optimized
(``storage.py``).

An outage of one account (every RDS call answered as throttled or failing, for a while) is
``POST /_rds_ext/outage``: see ``outage.py``. ``/_rds_ext/maintenance``: see ``maintenance.py``.

The patches target moto's internals, so the extension refuses to load on any moto version other
than the pinned one (see requirements.txt).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter, deque
from typing import Any
from urllib.parse import parse_qs

from . import access, activation, backup_replication, blue_green, catalog, clones, cloudtrail, cluster_endpoints, cluster_parameters, clusters, data_api, endpoints, engines, event_subscriptions, export_tasks, features, global_clusters, iam_auth, insights, integrations, maintenance, managed_secrets, metrics, model_check, multi_az, option_groups, outage, parameters, presigned, proxies, replicas, roles, rpc_cbor, s3_import, scope, shard_groups, snapshots, storage, tagging, tls, trust

PINNED_MOTO = "5.2.5"

LOCK = threading.RLock()
CONFIG: dict[str, float] = {"create_delay": 0.0, "modify_delay": 0.0, "delete_delay": 0.0, "snapshot_delay": 0.0,
                            "iam_token_life": 900.0, "auto_start_after": 7 * 24 * 3600.0,
                            "iopt_switch_after": 30 * 24 * 3600.0}
# (action, identifier) -> count
CALLS: Counter[tuple[str, str]] = Counter()
# The parameter names (never their values) of each mutating call served, per (action, identifier).
PARAMETERS: dict[tuple[str, str], list[list[str]]] = {}
# (time.time(), action, identifier) of every call that is not a read, for latency measurements;
# bounded so a long benchmark cannot eat the memory.
MUTATIONS: deque[tuple[float, str, str]] = deque(maxlen=200_000)
READS = ("Describe", "List")

# Fields that RDS applies at the next maintenance window unless ApplyImmediately is set, and their
# names in PendingModifiedValues.
DEFERRABLE = {
    "db_instance_class": "DBInstanceClass",
    "allocated_storage": "AllocatedStorage",
    "storage_type": "StorageType",
    "iops": "Iops",
    "engine_version": "EngineVersion",
    "multi_az": "MultiAZ",
    "storage_throughput": "StorageThroughput",
    "db_subnet_group_name": "DBSubnetGroupName",
    "license_model": "LicenseModel",
    "ca_certificate_identifier": "CACertificateIdentifier",
}
# Request parameters that steer the call and are not instance attributes to set.
CONTROL = {"db_instance_identifier", "apply_immediately", "allow_major_version_upgrade"}
BUSY = {"creating", "modifying", "deleting", "rebooting"}


def _now() -> float:
    return time.monotonic()


def _normalise(key: str, value: Any) -> Any:
    if key in ("allocated_storage", "iops", "storage_throughput") and value is not None:
        return int(value)
    return value


def _advance(db: Any) -> None:
    """Finish a timed phase whose time has come."""
    d = db.__dict__
    phase = d.get("_ext_phase")
    if phase is None:
        PHASED.pop(id(db), None)
        return
    if _now() < d.get("_ext_until", 0.0):
        return
    PHASED.pop(id(db), None)
    d["_ext_phase"] = None
    if phase == "modifying":
        inflight = d.pop("_ext_inflight", {})
        _apply(db, inflight)
    elif phase == "deleting":
        # A cluster says where it is kept (clusters.py); an instance is in its backend's databases.
        table, key = d.get("_ext_gone") or (getattr(d.get("_ext_backend"), "databases", {}),
                                            getattr(db, "db_instance_identifier", None))
        if table.get(key) is db:
            del table[key]


def _apply(db: Any, changes: dict[str, Any]) -> None:
    for key, value in changes.items():
        setattr(db, key, _normalise(key, value))


# Phases advance only when a request comes in (see _purge_deleted in every entry point), never while
# a response is being serialised: otherwise a phase ending half-way through a response would show
# some fields before the change and some after.


def _get_status(self: Any) -> str:
    with LOCK:
        phase = self.__dict__.get("_ext_phase")
        return phase or self.__dict__.get("_ext_status", "available")


def _set_status(self: Any, value: str) -> None:
    self.__dict__["_ext_status"] = value


def _pending_modified_values(self: Any) -> dict[str, Any] | None:
    with LOCK:
        merged = dict(self.__dict__.get("_ext_pending", {}))
        merged.update(self.__dict__.get("_ext_inflight", {}))
        out = {DEFERRABLE[k]: _normalise(k, v) for k, v in merged.items() if k in DEFERRABLE}
        if self.__dict__.get("_ext_password_change") and self.__dict__.get("_ext_phase") == "modifying":
            out["MasterUserPassword"] = "****"
        return out or None


def _start_phase(db: Any, phase: str, delay: float) -> None:
    PHASED[id(db)] = db
    db.__dict__["_ext_phase"] = phase
    db.__dict__["_ext_until"] = _now() + delay


# Restores under way: new instance identifier -> the snapshot its server loads.
RESTORING: dict[str, str] = scope.Scoped()


def _password(db: Any) -> str | None:
    """The master password the instance was given, or the one in its RDS-managed secret."""
    password = db.__dict__.get("_master_user_password")
    if password:
        return password
    secret = getattr(db, "master_user_secret", None)
    if getattr(db, "manage_master_user_password", False) and secret is not None:
        return json.loads(secret.secret.secret_string).get("password")
    return None


def _tags(db_kwargs: dict[str, Any]) -> list[dict[str, str]]:
    tags = db_kwargs.get("tags") or []
    # moto hands over its own Mapping type, whose keys read in either case.
    return [{"Key": t.get("Key"), "Value": t.get("Value")} for t in tags if hasattr(t, "get")]


# The instances in a timed phase, which each request advances: only those, so a request costs the
# same with 10 000 instances as with one.
PHASED: dict[int, Any] = {}


def _purge_deleted(backend: Any) -> None:
    for db in list(PHASED.values()):
        # In the object's own account and region, whatever the request's (scope.py).
        with scope.of(db):
            _advance(db)


def install() -> None:
    import moto
    from moto.rds import models, responses
    from moto.rds.exceptions import RDSClientError

    if moto.__version__ != PINNED_MOTO:
        raise SystemExit(
            f"moto_ext is written against moto {PINNED_MOTO} but moto {moto.__version__} is installed; "
            "reinstall with: localstack/moto.sh install"
        )

    for key, env in (
        ("create_delay", "MOTO_RDS_CREATE_DELAY"),
        ("modify_delay", "MOTO_RDS_MODIFY_DELAY"),
        ("delete_delay", "MOTO_RDS_DELETE_DELAY"),
        ("snapshot_delay", "MOTO_RDS_SNAPSHOT_DELAY"),
        ("iam_token_life", "MOTO_RDS_IAM_TOKEN_LIFE"),
        ("auto_start_after", "MOTO_RDS_AUTO_START_AFTER"),
        ("iopt_switch_after", "MOTO_RDS_IOPT_SWITCH_AFTER"),
    ):
        CONFIG[key] = float(os.environ.get(env, "") or CONFIG[key])

    DBInstance = models.DBInstance
    DBInstance.status = property(_get_status, _set_status)
    DBInstance.pending_modified_values = property(_pending_modified_values)
    features.install(DBInstance)

    original_endpoint = DBInstance.endpoint

    def endpoint(self: Any) -> dict[str, Any] | None:
        # RDS has no endpoint to report until the instance is first up.
        if self.status == "creating":
            return None
        found = original_endpoint.fget(self)
        # A cluster member reaches the server of its role (clusters.py).
        server = engines.get(self.db_instance_identifier) or clusters.member_server(self)
        if server is not None and found is not None:
            # A real server: its own loopback address, on the instance's port.
            found = {**found, "Address": server.address, "Port": server.port}
        return found

    DBInstance.endpoint = property(endpoint)

    Backend = models.RDSBackend
    orig_create = Backend.create_db_instance
    orig_modify = Backend.modify_db_instance
    orig_delete = Backend.delete_db_instance
    orig_describe = Backend.describe_db_instances

    def busy_error(identifier: str, status: str) -> Exception:
        return RDSClientError(
            "InvalidDBInstanceState",
            f"Instance {identifier} is in {status} state and cannot be modified or deleted now.",
        )

    def create_db_instance(self: Any, db_kwargs: dict[str, Any]) -> Any:
        # A create RDS refuses leaves nothing behind (moto adds the instance, then may fail on its
        # first automated snapshot), and one that needs a real server past the limit is refused
        # before anything is made: CreateDBInstance is one call that succeeds or fails
        # (API_CreateDBInstance.html, "Errors").
        identifier = db_kwargs["db_instance_identifier"]
        real = not db_kwargs.get("db_cluster_identifier") and engines.wanted(
            db_kwargs.get("engine") or "", _tags(db_kwargs))
        with LOCK:
            _purge_deleted(self)
            if real and identifier not in self.databases:
                try:
                    engines.reserve(identifier)
                except engines.EngineError as e:
                    raise RDSClientError("InsufficientDBInstanceCapacity", str(e))
            before = self.databases.get(identifier)
            try:
                db = orig_create(self, db_kwargs)
                db.__dict__["_ext_backend"] = self
                features.on_create(db, db_kwargs)
                if real and _password(db):
                    start_engine(self, db)
                elif CONFIG["create_delay"] > 0:
                    _start_phase(db, "creating", CONFIG["create_delay"])
                return db
            except Exception:
                made = self.databases.get(identifier)
                if made is not None and made is not before:
                    del self.databases[identifier]
                    for name, snap in list(self.database_snapshots.items()):
                        if getattr(snap, "database", None) is made:
                            del self.database_snapshots[name]
                raise
            finally:
                engines.release(identifier)

    def save_automated_backup(self: Any) -> None:
        # RDS names automated snapshots rds:<instance>-<yyyy-mm-dd-hh-mm> and never refuses an
        # instance for its name (a retained automated backup of an earlier instance of the same
        # identifier may hold it: DeleteAutomatedBackups, API_DeleteDBInstance.html). moto
        # refuses the create with DBSnapshotAlreadyExists; here the new one takes a suffix.
        base = f"rds:{self.db_instance_identifier}-{models.utcnow().strftime('%Y-%m-%d-%H-%M')}"
        name, n = base, 1
        while name in self.backend.database_snapshots:
            n += 1
            name = f"{base}-{n}"
        self.add_event("DB_INSTANCE_BACKUP_START")
        self.backend.create_auto_snapshot(self.db_instance_identifier, name)
        self.add_event("DB_INSTANCE_BACKUP_FINISH")

    DBInstance.save_automated_backup = save_automated_backup

    def start_engine(backend: Any, db: Any) -> None:
        """A real server: the instance is creating until it serves (or failed, with the reason).
        Green of a blue/green deployment is a replica of blue (blue_green.py)."""

        on_ready, on_error = engines.callbacks(LOCK, db)
        snapshot = RESTORING.pop(db.db_instance_identifier, None)
        source = engines.get(blue_green.REPLICA_OF.pop(db.db_instance_identifier, None))
        try:
            engines.create(db.db_instance_identifier, db.engine, db.port, db.master_username,
                           _password(db), getattr(db, "db_name", None), on_ready, on_error, snapshot,
                           source, parameters.tls_required(backend, db))
        except engines.EngineError as e:
            raise RDSClientError("InsufficientDBInstanceCapacity", str(e))
        _start_phase(db, "creating", float("inf"))

    def describe_db_instances(
        self: Any, db_instance_identifier: str | None = None, filters: Any = None
    ) -> Any:
        with LOCK:
            _purge_deleted(self)
            # One instance by its identifier: a lookup, where moto filters all of them (and works
            # out each one's ARN), which made every such describe cost O(N).
            if db_instance_identifier and not filters and not db_instance_identifier.startswith("arn:"):
                db = self.databases.get(db_instance_identifier)
                if db is None:
                    raise models.DBInstanceNotFoundError(db_instance_identifier)
                return [db]
            return orig_describe(self, db_instance_identifier, filters)

    def modify_db_instance(self: Any, db_instance_identifier: str, db_kwargs: Any) -> Any:
        with LOCK:
            _purge_deleted(self)
            db = orig_describe(self, db_instance_identifier)[0]
            if db.status in BUSY:
                raise busy_error(db.db_instance_identifier, db.status)
            # moto takes the port as DBPortNumber but never applies it; RDS changes it at once.
            if db_kwargs.get("db_port_number") is not None:
                db_kwargs["port"] = int(db_kwargs["db_port_number"])
                del db_kwargs["db_port_number"]
            apply_now = bool(db_kwargs.get("apply_immediately"))
            deferred = {}
            for key in list(db_kwargs.keys()):
                if key in DEFERRABLE and db_kwargs[key] is not None:
                    deferred[key] = db_kwargs[key]
                    del db_kwargs[key]
            immediate = [k for k, v in db_kwargs.items() if k not in CONTROL and v is not None]
            # Everything else (windows, retention, protection, groups, password...) applies now, and
            # moto validates it here.
            db = orig_modify(self, db_instance_identifier, db_kwargs)
            db.__dict__["_ext_password_change"] = db_kwargs.get("master_user_password") is not None
            server = engines.get(db.db_instance_identifier)
            if server is not None:
                # The real server follows at once: ALTER USER, a restart on the new port.
                if db_kwargs.get("master_user_password") is not None:
                    server.set_password(db_kwargs["master_user_password"])
                if db_kwargs.get("port") is not None:
                    server.set_port(int(db_kwargs["port"]))
            pending = db.__dict__.setdefault("_ext_pending", {})
            if not apply_now:
                pending.update(deferred)
                deferred = {}
            else:
                # An immediate modification also applies what was waiting for the window.
                deferred = {**pending, **deferred}
                pending.clear()
            if CONFIG["modify_delay"] > 0 and (immediate or deferred):
                db.__dict__["_ext_inflight"] = deferred
                _start_phase(db, "modifying", CONFIG["modify_delay"])
            else:
                _apply(db, deferred)
            return db

    def delete_db_instance(self: Any, db_instance_identifier: str, *args: Any, **kwargs: Any) -> Any:
        with LOCK:
            _purge_deleted(self)
            db = self.databases.get(db_instance_identifier)
            if db is not None and db.status in ("deleting", "modifying"):
                raise busy_error(db_instance_identifier, db.status)
            db = orig_delete(self, db_instance_identifier, *args, **kwargs)
            engines.remove(db_instance_identifier)
            # Deleting until its final snapshot is taken (snapshots.final_snapshot_delay).
            # (moto's signature: final_db_snapshot_identifier, skip_final_snapshot, by position or name)
            named = dict(zip(("final_db_snapshot_identifier", "skip_final_snapshot"), args), **kwargs)
            final = None if named.get("skip_final_snapshot") else named.get("final_db_snapshot_identifier")
            delay = CONFIG["delete_delay"] + snapshots.final_snapshot_delay(CONFIG, self.database_snapshots, final)
            if delay > 0:
                db.__dict__["_ext_backend"] = self
                self.databases[db_instance_identifier] = db
                _start_phase(db, "deleting", delay)
            return db

    orig_snapshot = Backend.create_db_snapshot
    orig_restore = Backend.restore_db_instance_from_db_snapshot

    def create_db_snapshot(self: Any, db_instance_identifier: str, db_snapshot_identifier: str,
                           *args: Any, **kwargs: Any) -> Any:
        with LOCK:
            snapshot = orig_snapshot(self, db_instance_identifier, db_snapshot_identifier, *args, **kwargs)
            server = engines.get(db_instance_identifier)
            if server is not None and server.ready:
                server.dump(db_snapshot_identifier)
            return snapshot

    def restore_db_instance_from_db_snapshot(self: Any, from_snapshot_id: str, overrides: dict[str, Any]) -> Any:
        with LOCK:
            snapshot_id = from_snapshot_id.split(":snapshot:")[-1]
            RESTORING[overrides["db_instance_identifier"]] = snapshot_id
            try:
                return orig_restore(self, from_snapshot_id, overrides)
            finally:
                RESTORING.pop(overrides["db_instance_identifier"], None)

    orig_modify_group = Backend.modify_db_subnet_group
    orig_delete_group = Backend.delete_subnet_group

    def modify_db_subnet_group(self: Any, subnet_name: str, description: str, subnets: Any) -> Any:
        with LOCK:
            group = orig_modify_group(self, subnet_name, description, subnets)
            # moto takes the group out of its table to modify it and does not put it back.
            self.subnet_groups[subnet_name] = group
            return group

    def delete_subnet_group(self: Any, subnet_name: str) -> Any:
        # As RDS: a group an instance uses (deleting ones included) cannot be deleted.
        with LOCK:
            _purge_deleted(self)
            users = sorted(identifier for identifier, db in self.databases.items()
                           if db.__dict__.get("_db_subnet_group_name") == subnet_name)
            if users:
                raise RDSClientError(
                    "InvalidDBSubnetGroupStateFault",
                    f"Cannot delete the subnet group '{subnet_name}' because at least one database "
                    f"instance: {users[0]} is still using it.")
            return orig_delete_group(self, subnet_name)

    # moto copies an instance whole (copy.deepcopy) for a point-in-time restore or a snapshot; an
    # instance refers to its backend (_ext_backend), and the backend to the endpoints' listening
    # sockets: the copy is of the instance, never of the backend or an endpoint, which stay shared
    # (a copy failed with "cannot pickle 'socket' object" whenever another test had an endpoint
    # open, and the restore's answer was empty).
    Backend.__deepcopy__ = lambda self, memo: self
    endpoints.Endpoint.__deepcopy__ = lambda self, memo: self
    engines.Server.__deepcopy__ = lambda self, memo: self
    engines.install_cleanup()
    trust.install()
    tagging.install()
    parameters.install(LOCK, CONFIG, _start_phase, _purge_deleted)
    cluster_parameters.install(LOCK)
    Backend.modify_db_subnet_group = modify_db_subnet_group

    def rds_subnet_error(orig: Any) -> Any:
        # moto looks each subnet up in EC2 and lets EC2's InvalidSubnetID.NotFound through; RDS
        # answers InvalidSubnet ("The requested subnet is invalid, or multiple subnets were
        # requested that are not all in a common VPC", API_CreateDBSubnetGroup.html and
        # API_ModifyDBSubnetGroup.html, Errors).
        from moto.ec2.exceptions import InvalidSubnetIdError
        from moto.rds.exceptions import DBSubnetGroupNotFoundError

        def call(self: Any) -> Any:
            # The group named is looked up before the subnets: a modification of a group that is
            # not there is DBSubnetGroupNotFoundFault (API_ModifyDBSubnetGroup.html, Errors),
            # whatever subnets it names.
            name = self._get_param("DBSubnetGroupName")
            modify = self._get_action() == "ModifyDBSubnetGroup"
            if modify and name not in self.backend.subnet_groups:
                raise DBSubnetGroupNotFoundError(name)
            try:
                return orig(self)
            except InvalidSubnetIdError as e:
                raise RDSClientError("InvalidSubnet", f"The requested subnet is invalid: {e.message}")
        return call

    responses.RDSResponse.create_db_subnet_group = rds_subnet_error(responses.RDSResponse.create_db_subnet_group)
    responses.RDSResponse.modify_db_subnet_group = rds_subnet_error(responses.RDSResponse.modify_db_subnet_group)
    Backend.delete_subnet_group = delete_subnet_group
    Backend.create_db_snapshot = create_db_snapshot
    Backend.restore_db_instance_from_db_snapshot = restore_db_instance_from_db_snapshot
    Backend.create_db_instance = create_db_instance
    Backend.describe_db_instances = describe_db_instances
    Backend.modify_db_instance = modify_db_instance
    Backend.delete_db_instance = delete_db_instance
    # After the instances' patches, which its own wrap.
    replicas.install(LOCK, CONFIG, _start_phase, _purge_deleted)
    blue_green.install(LOCK, CONFIG, RESTORING, _purge_deleted)
    s3_import.install(LOCK, RESTORING)
    clusters.install(LOCK, CONFIG, _start_phase, _purge_deleted, _apply, _get_status, _set_status)
    snapshots.install(LOCK, CONFIG)
    export_tasks.install(LOCK, CONFIG)
    event_subscriptions.install(LOCK)
    integrations.install(LOCK, CONFIG)
    shard_groups.install(LOCK, CONFIG)
    backup_replication.install(LOCK)
    # Around the snapshots' and replicas' own handlers.
    presigned.install(LOCK)
    global_clusters.install(LOCK, CONFIG)
    cluster_endpoints.install(LOCK, CONFIG)
    option_groups.install(LOCK)
    maintenance.install(LOCK, CONFIG, _start_phase)
    proxies.install(LOCK, CONFIG)
    managed_secrets.install(LOCK)
    activation.install(LOCK, CONFIG, _start_phase)
    activation.install_clusters(LOCK, CONFIG, _start_phase, _purge_deleted)
    insights.install(LOCK)
    metrics.install()
    # CloudWatch's calls are counted too (the health poll's cost, tests/bench/health.rs).
    from moto.cloudwatch.responses import CloudWatchResponse

    orig_cloudwatch_action = CloudWatchResponse.call_action

    def cloudwatch_action(self: Any) -> Any:
        try:
            with LOCK:
                CALLS[(self._get_action(), "")] += 1
        except Exception:  # counting must never break serving
            pass
        return orig_cloudwatch_action(self)

    CloudWatchResponse.call_action = cloudwatch_action
    storage.install(LOCK, CONFIG)
    roles.install(LOCK)
    clones.install(LOCK)
    data_api.install(LOCK)
    # Around the clusters' and instances' calls: a Multi-AZ DB cluster makes its own instances.
    multi_az.install(LOCK)
    # Last: what RDS does not offer is refused before any other extension acts on the call.
    catalog.install(LOCK)
    # Every reply held to RDS's service model (MOTO_EXT_STRICT=1, as the test bed runs).
    model_check.fix_moto()
    model_check.install()

    # Count the calls served.
    Response = responses.RDSResponse
    orig_call_action = Response.call_action

    def call_action(self: Any) -> Any:
        try:
            action = self._get_action()
            # moto's own dict: it answers RDS's parameter names (DBInstanceIdentifier) for the
            # snake_case keys it holds.
            params = getattr(self, "params", None) or {}
            identifier = (params.get("DBInstanceIdentifier") or params.get("DBSubnetGroupName")
                          or params.get("DBParameterGroupName")
                          or params.get("TargetDBInstanceIdentifier")
                          or params.get("DBClusterEndpointIdentifier")
                          or params.get("DBShardGroupIdentifier")
                          or params.get("DBClusterIdentifier")
                          or params.get("DBClusterParameterGroupName")
                          or params.get("BlueGreenDeploymentIdentifier")
                          or params.get("DBSnapshotIdentifier")
                          or params.get("TargetDBSnapshotIdentifier")
                          or params.get("DBClusterSnapshotIdentifier")
                          or params.get("TargetDBClusterSnapshotIdentifier")
                          or params.get("GlobalClusterIdentifier")
                          or params.get("OptionGroupName")
                          or params.get("DBProxyName")
                          or params.get("DBProxyEndpointName")
                          or params.get("SubscriptionName") or params.get("IntegrationName") or "")
            # An integration named by its ARN is counted under its name.
            if not identifier and params.get("IntegrationIdentifier"):
                given = str(params["IntegrationIdentifier"])
                identifier = integrations.NAMES.get(given, given)
            # A new deployment is counted under its source instance.
            if not identifier and ":db:" in (params.get("Source") or ""):
                identifier = params["Source"].split(":db:", 1)[1]
            if not identifier and ":cluster:" in (params.get("Source") or ""):
                identifier = params["Source"].split(":cluster:", 1)[1]
            # A backup replication under its source instance.
            if not identifier and ":db:" in (params.get("SourceDBInstanceArn") or ""):
                identifier = params["SourceDBInstanceArn"].split(":db:", 1)[1]
            # A pending maintenance action under the instance or cluster its ARN names.
            resource = str(params.get("ResourceIdentifier") or "")
            if not identifier and (":db:" in resource or ":cluster:" in resource):
                identifier = resource.rsplit(":", 1)[1]
            # A cluster named by its ARN (RemoveFromGlobalCluster's DbClusterIdentifier) is counted
            # under its identifier.
            if ":cluster:" in identifier:
                identifier = identifier.split(":cluster:", 1)[1]
            # An export task under the snapshot its SourceArn names.
            arn = params.get("ResourceName") or params.get("ResourceArn") or params.get("SourceArn") or ""
            for kind in (":db:", ":subgrp:", ":pg:", ":cluster:", ":cluster-pg:", ":snapshot:",
                         ":cluster-snapshot:"):
                if not identifier and kind in arn:
                    identifier = arn.split(kind, 1)[1]
            with LOCK:
                CALLS[(action, identifier.lower())] += 1
                if not action.startswith(READS):
                    MUTATIONS.append((time.time(), action, identifier.lower()))
                    names = sorted(str(k) for k in params)
                    PARAMETERS.setdefault((action, identifier.lower()), []).append(names)
        except Exception:  # counting must never break serving
            action, params = "", {}
        # Served in the request's account and region: identifiers are unique within them only.
        try:
            where = (self.current_account, self.region)
        except Exception:  # no credentials to read an account of: moto's default
            where = (None, None)
        with scope.within(*where):
            served = orig_call_action(self)
        if action:
            model_check.check_served(action, served)
        if action and not action.startswith(READS):
            status = served[0] if isinstance(served, tuple) else 200
            cloudtrail.record(self, action, dict(params), int(status))
        return served

    Response.call_action = call_action

    # A request signed by an IAM principal's own key is held to its identity-based policies
    # (access.py): after moto's own check, which passes every request while its switch is off.
    orig_authorize = Response._authenticate_and_authorize_normal_action

    def authorize(self: Any, resource: str = "*") -> None:
        orig_authorize(self, resource)
        params = getattr(self, "params", None) or {}
        refused = access.check(self, self._get_action(), params)
        if refused is not None:
            raise access.refusal(*refused)

    Response._authenticate_and_authorize_normal_action = authorize


def master_password(identifier: str) -> str | None:
    from moto.rds.models import rds_backends

    with LOCK:
        for account in rds_backends.values():
            for backend in account.values():
                db = backend.databases.get(identifier)
                if db is not None:
                    return db.__dict__.get("_master_user_password")
    return None


def apply_pending(identifier: str, table: str = "databases") -> bool:
    """Applies what an instance (or, with `table` "clusters", a cluster) holds for the
    maintenance window; False when no backend has it."""
    from moto.core import DEFAULT_ACCOUNT_ID  # noqa: F401  (imported for its side effects)
    from moto.rds.models import rds_backends

    with LOCK:
        for account in rds_backends.values():
            for backend in account.values():
                found = getattr(backend, table).get(identifier)
                if found is not None:
                    with scope.of(found):
                        _apply(found, found.__dict__.pop("_ext_pending", {}))
                    return True
    return False


class ControlMiddleware:
    """Serves /_rds_ext/* in front of moto's WSGI app."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        path = environ.get("PATH_INFO", "")
        if not path.startswith("/_rds_ext/"):
            failed = outage.answer(environ, start_response, self.app)
            if failed is not None:
                return failed
            served = rpc_cbor.serve(self.app, environ, start_response)
            return served if served is not None else self.app(environ, start_response)
        query = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        method = environ.get("REQUEST_METHOD", "GET")
        status, body = "404 Not Found", {"error": f"unknown path {path}"}
        if path == "/_rds_ext/config":
            if method == "POST":
                size = int(environ.get("CONTENT_LENGTH") or 0)
                update = json.loads(environ["wsgi.input"].read(size) or b"{}")
                update.update(query)
                unknown = set(update) - set(CONFIG)
                if unknown:
                    status, body = "400 Bad Request", {"error": f"unknown keys {sorted(unknown)}"}
                    return _reply(start_response, status, body)
                with LOCK:
                    CONFIG.update({k: float(v) for k, v in update.items()})
            status, body = "200 OK", dict(CONFIG)
        elif path == "/_rds_ext/outage":
            status, body = "200 OK", outage.control(method, query)
        elif path == "/_rds_ext/calls":
            wanted = query.get("identifier", "").lower()
            with LOCK:
                counts: Counter[str] = Counter()
                for (action, identifier), n in CALLS.items():
                    if not wanted or identifier == wanted:
                        counts[action] += n
            status, body = "200 OK", dict(counts)
        elif path == "/_rds_ext/call-parameters":
            # The parameter names of each call of an action for an identifier, in order: what was
            # sent, never a value.
            key = (query.get("action", ""), query.get("identifier", "").lower())
            with LOCK:
                status, body = "200 OK", [list(n) for n in PARAMETERS.get(key, [])]
        elif path == "/_rds_ext/denied":
            # The requests access.py refused, of one IAM principal (?caller=ARN) or of all.
            status, body = "200 OK", access.denied(query.get("caller"))
        elif path == "/_rds_ext/model-violations":
            # What replies broke RDS's service model (model_check.py); POST forgets them.
            status, body = "200 OK", (model_check.take() if method == "POST" else list(model_check.VIOLATIONS))
        elif path == "/_rds_ext/mutations":
            since = float(query.get("since", "0") or 0)
            with LOCK:
                rows = [list(m) for m in MUTATIONS if m[0] >= since]
            status, body = "200 OK", rows
        elif path == "/_rds_ext/master-password":
            # Test introspection: the master password RDS was last given, so a test can check that
            # the connection Secret carries the password the database really has.
            password = master_password(query.get("identifier", "").lower())
            status, body = ("200 OK", {"password": password}) if password is not None else ("404 Not Found", {})
        elif path == "/_rds_ext/iam-auth" and method == "POST":
            # A login with an IAM authentication token, from iam/check.py (iam_auth.py).
            size = int(environ.get("CONTENT_LENGTH") or 0)
            status, body = "200 OK", iam_auth.answer(json.loads(environ["wsgi.input"].read(size) or b"{}"),
                                                     CONFIG["iam_token_life"])
        elif path == "/_rds_ext/ca.pem":
            # The test bed's CA bundle, in the role of RDS's (tls.py).
            data = tls.ca_bundle()
            start_response("200 OK", [("Content-Type", "application/x-pem-file"), ("Content-Length", str(len(data)))])
            return [data]
        elif path == "/_rds_ext/drop-events" and method == "POST":
            cloudtrail.drop(query.get("identifier", ""), int(query.get("count", "1")))
            status, body = "200 OK", {"dropping": True}
        elif path == "/_rds_ext/events":
            with cloudtrail.LOCK:
                status, body = "200 OK", dict(cloudtrail.SENT)
        elif path == "/_rds_ext/blue-green" and method == "POST":
            with LOCK:
                status, body = "200 OK", blue_green.control(query)
        elif path == "/_rds_ext/maintenance":
            with LOCK:
                status, body = maintenance.control(method, query)
        elif path == "/_rds_ext/apply-pending" and method == "POST":
            found = (apply_pending(query["cluster"].lower(), "clusters") if "cluster" in query
                     else apply_pending(query.get("identifier", "").lower()))
            status, body = ("200 OK", {"applied": True}) if found else ("404 Not Found", {"applied": False})
        return _reply(start_response, status, body)


def _reply(start_response: Any, status: str, body: Any) -> list[bytes]:
    data = json.dumps(body).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]
