"""Read replicas as RDS runs them, on moto's own CreateDBInstanceReadReplica and PromoteReadReplica.

moto 5.2.5 makes a replica a shallow copy of its source (sharing its tag list, its resource id and
every private field), ``available`` at once, and PromoteReadReplica leaves it pointing at its
source. This module follows the Amazon RDS API Reference instead:

* CreateDBInstanceReadReplica (API_CreateDBInstanceReadReplica.html) refuses a source that is not
  ``available`` (InvalidDBInstanceState) or has no automated backups ("Automated backups are not
  enabled for this database instance..."), and an identifier in use (DBInstanceAlreadyExists); the
  replica is an instance of its own (its tags, its DbiResourceId) that is ``creating`` for
  ``create_delay`` seconds, then ``available``; it reports ReadReplicaSourceDBInstanceIdentifier
  and, once up, StatusInfos ``read replication``/``replicating`` (DBInstanceStatusInfo, "Status:
  replicating, replication stop point set, replication stop point reached, error, stopped,
  terminated"); its source lists it in ReadReplicaDBInstanceIdentifiers;
* PromoteReadReplica (API_PromoteReadReplica.html) refuses an instance that is not a replica
  (InvalidDBInstanceState) or is busy; the replica is ``modifying`` for ``modify_delay`` seconds,
  leaves its source's list, reports no source, and takes BackupRetentionPeriod and
  PreferredBackupWindow when sent;
* ReadReplicaSourceDBInstanceIdentifier is reported for a replica only (moto also reports the
  source of a point-in-time restore);
* DeleteDBInstance of a replica refuses a final snapshot: "FinalDBSnapshotIdentifier can not be
  specified when deleting a replica instance" (InvalidParameterCombination; API_DeleteDBInstance.html,
  FinalDBSnapshotIdentifier "Can't be specified when deleting a read replica").

With real engines (``engines.py``) a replica has a server of its own at its own address, which
replicates its source's (MariaDB binlog replication, PostgreSQL streaming replication) and is
read-only: "Amazon RDS ... uses the engines' native asynchronous replication to update the read
replica whenever there is a change to the source DB instance. The read replica operates as a DB
instance that allows only read-only connections" (USER_ReadRepl.html, "Working with DB instance
read replicas"). It is ``creating`` until its server has the source's data and replicates; its
StatusInfos follow the replication (``replicating``, or ``error`` with the reason when it breaks);
promotion stops the replication and makes it writable, with no dump ("Promoting a read replica to
be a standalone DB instance", USER_ReadRepl.Promote.html).
"""

from __future__ import annotations

import copy
import threading
import time
from typing import Any

from . import engines, features, parameters, scope


def install(lock: Any, config: dict[str, float], start_phase: Any, advance_all: Any) -> None:
    from moto.rds import models
    from moto.rds.exceptions import DBInstanceNotFoundError, InvalidParameterCombination, RDSClientError

    Backend = models.RDSBackend
    DBInstance = models.DBInstance
    orig_delete = Backend.delete_db_instance

    def invalid_state(message: str) -> Exception:
        return RDSClientError("InvalidDBInstanceState", message)

    def status_infos(self: Any) -> list[dict[str, Any]] | None:
        if not getattr(self, "is_replica", False) or self.status == "creating":
            return None
        server = engines.get(self.db_instance_identifier)
        if server is None or not server.ready:
            return [{"StatusType": "read replication", "Normal": True, "Status": "replicating"}]
        state, message = server.replication()
        info = {"StatusType": "read replication", "Normal": state == "replicating", "Status": state}
        return [{**info, "Message": message} if message else info]

    DBInstance.status_infos = property(status_infos)

    def replica_source(self: Any) -> str | None:
        # moto reports the source of a point-in-time restore here too; RDS only a replica's:
        # "The identifier of the source DB instance if this DB instance is a read replica"
        # (ReadReplicaSourceDBInstanceIdentifier, API_DBInstance.html).
        return self.source_db_instance_identifier if getattr(self, "is_replica", False) else None

    DBInstance.read_replica_source_db_instance_identifier = property(replica_source)

    def create_db_instance_read_replica(self: Any, db_kwargs: dict[str, Any]) -> Any:
        with lock:
            advance_all(self)
            identifier = db_kwargs["db_instance_identifier"]
            source_id = db_kwargs["source_db_instance_identifier"]
            if identifier in self.databases:
                raise RDSClientError("DBInstanceAlreadyExists", "DB instance already exists")
            try:
                primary = self.find_db_from_id(source_id)
            except (DBInstanceNotFoundError, KeyError):
                raise DBInstanceNotFoundError(source_id)
            if primary.status != "available":
                raise invalid_state(f"DB Instance {primary.db_instance_identifier} is not in available state.")
            if not primary.backup_retention_period:
                raise invalid_state(
                    "Automated backups are not enabled for this database instance. To enable automated "
                    "backups, use ModifyDBInstance to set the backup retention period to a non-zero value.")
            replica = copy.copy(primary)
            # An instance of its own: nothing of the source's moto_ext state, tags or lists shared.
            for key in [k for k in replica.__dict__ if k.startswith("_ext_")]:
                del replica.__dict__[key]
            replica.tags = []
            replica.enabled_cloudwatch_logs_exports = list(primary.enabled_cloudwatch_logs_exports or [])
            # A replica in another region lives in this region's backend.
            replica.backend = self
            replica.update(**db_kwargs)
            replica.set_as_replica()
            replica.db_instance_identifier = identifier
            replica.source_db_instance_identifier = (
                primary.db_instance_arn if primary.region != self.region_name else primary.db_instance_identifier)
            replica.__dict__["_ext_backend"] = self
            replica.__dict__["_ext_replica_of"] = primary.db_instance_identifier
            features.on_create(replica, db_kwargs)
            # The source's server, in its own region (a replica may be made in another).
            with scope.of(primary):
                source = engines.get(primary.db_instance_identifier)
            if source is not None and source.ready:
                own_server(replica, source)
            elif config["create_delay"] > 0:
                start_phase(replica, "creating", config["create_delay"])
            self.databases[identifier] = replica
            primary.add_replica(replica)
            return replica

    def promote_read_replica(self: Any, db_kwargs: dict[str, Any]) -> Any:
        with lock:
            advance_all(self)
            identifier = db_kwargs["db_instance_identifier"]
            db = self.databases.get(identifier)
            if db is None:
                raise DBInstanceNotFoundError(identifier)
            if not getattr(db, "is_replica", False):
                raise invalid_state(f"DB Instance {identifier} is not a read replica.")
            if db.status != "available":
                raise invalid_state(f"Instance {identifier} is in {db.status} state and cannot be promoted now.")
            leave_source(self, db)
            db.source_db_instance_identifier = None
            if db_kwargs.get("backup_retention_period") is not None:
                db.backup_retention_period = int(db_kwargs["backup_retention_period"])
            if db_kwargs.get("preferred_backup_window"):
                db.preferred_backup_window = db_kwargs["preferred_backup_window"]
            db.__dict__.pop("_ext_replica_of", None)
            server = engines.get(identifier)
            if server is not None and server.ready:
                promote(db, server)
            elif config["modify_delay"] > 0:
                start_phase(db, "modifying", config["modify_delay"])
            return db

    def leave_source(backend: Any, db: Any) -> None:
        """The replica leaves its source's list (by identifier, or by ARN in another region) and
        is a replica no more."""
        try:
            primary = backend.find_db_from_id(db.source_db_instance_identifier)
        except Exception:
            primary = None
        if primary is not None:
            for name in (db.db_instance_identifier, db.db_instance_arn):
                if name in primary.replicas:
                    primary.replicas.remove(name)
        db.is_replica = False

    def own_server(db: Any, source: Any) -> None:
        """A replica's own server, replicating its source's: creating until it has the source's
        data and replicates (refused whole past the servers' limit)."""
        try:
            engines.create(db.db_instance_identifier, db.engine, source.port, source.user, source.password,
                           source.dbname, *engines.callbacks(lock, db), source=source,
                           tls_required=parameters.tls_required(db.backend, db))
        except engines.EngineError as e:
            raise RDSClientError("InsufficientDBInstanceCapacity", str(e))
        start_phase(db, "creating", float("inf"))

    def promote(db: Any, server: Any) -> None:
        """Promotion on the real server: modifying for at least the modify delay, and until the
        server stops replicating and takes writes."""
        start_phase(db, "modifying", float("inf"))
        until = time.monotonic() + config["modify_delay"]
        ready, failed = engines.callbacks(lock, db)

        def run() -> None:
            try:
                server.promote()
            except Exception as e:  # noqa: BLE001 (reported as the instance's failure)
                failed(str(e))
                return
            time.sleep(max(0.0, until - time.monotonic()))
            ready()

        threading.Thread(target=scope.carry(run), name=f"promote-{db.db_instance_identifier}", daemon=True).start()

    def delete_db_instance(self: Any, db_instance_identifier: str, final_db_snapshot_identifier: str | None = None,
                           skip_final_snapshot: bool | None = False, *args: Any, **kwargs: Any) -> Any:
        db = self.databases.get(db_instance_identifier)
        if db is not None and getattr(db, "is_replica", False) and final_db_snapshot_identifier \
                and not skip_final_snapshot:
            raise InvalidParameterCombination(
                "FinalDBSnapshotIdentifier can not be specified when deleting a replica instance")
        if db is not None and getattr(db, "is_replica", False):
            # moto looks for a cross-region replica in its source's list by identifier, where it
            # keeps the ARN, and fails: take it out of the list here.
            with lock:
                leave_source(self, db)
        return orig_delete(self, db_instance_identifier, final_db_snapshot_identifier, skip_final_snapshot,
                           *args, **kwargs)

    Backend.create_db_instance_read_replica = create_db_instance_read_replica
    Backend.promote_read_replica = promote_read_replica
    Backend.delete_db_instance = delete_db_instance
