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

With real engines (``engines.py``) a replica's endpoint reaches its source's server (it reads the
source's rows); promotion gives it a server of its own loaded from a dump of the source.
"""

from __future__ import annotations

import copy
from typing import Any

from . import engines, features

# The key of the dump a promoted replica's server is loaded from.
PROMOTION_DUMP = "promotion-{}"


def server_of(db: Any) -> Any:
    """The real server a replica's endpoint reaches: its source's."""
    source = db.__dict__.get("_ext_replica_of")
    return engines.get(source) if source else None


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
        return [{"StatusType": "read replication", "Normal": True, "Status": "replicating"}]

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
            self.databases[identifier] = replica
            primary.add_replica(replica)
            if config["create_delay"] > 0:
                start_phase(replica, "creating", config["create_delay"])
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
            source = engines.get(db.__dict__.pop("_ext_replica_of", ""))
            if source is not None and source.ready:
                own_server(db, source)
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
        """A promoted replica's own server, loaded from a dump of its source's: modifying until it
        serves."""
        dump = PROMOTION_DUMP.format(db.db_instance_identifier)
        source.dump(dump)

        def on_ready() -> None:
            with lock:
                db.__dict__["_ext_until"] = 0.0

        def on_error(message: str) -> None:
            with lock:
                db.__dict__["_ext_phase"] = None
                db.status = "failed"
            print(f"moto_ext: {message}", flush=True)

        engines.create(db.db_instance_identifier, db.engine, source.port, source.user, source.password,
                       source.dbname, on_ready, on_error, dump)
        start_phase(db, "modifying", float("inf"))

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
