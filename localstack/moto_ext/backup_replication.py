"""Cross-region automated backup replication of DB instances, which moto does not have.

As RDS (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_StartDBInstanceAutomatedBackupsReplication.html,
https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_StopDBInstanceAutomatedBackupsReplication.html,
https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DBInstanceAutomatedBackupsReplication.html):

* StartDBInstanceAutomatedBackupsReplication is called in the destination region with the source
  instance's ARN (SourceDBInstanceArn), BackupRetentionPeriod (7 by default) and KmsKeyId; it
  answers the DBInstanceAutomatedBackup (Status ``pending``), and from then on the source's
  DescribeDBInstances lists it in DBInstanceAutomatedBackupsReplications (its
  DBInstanceAutomatedBackupsArn, in the destination region);
* the source must exist (DBInstanceNotFound), have automated backups (BackupRetentionPeriod > 0,
  else InvalidDBInstanceState), and be in another region (InvalidParameterValue); a second
  replication of the same source to the same region is refused
  (DBInstanceAutomatedBackupQuotaExceeded);
* StopDBInstanceAutomatedBackupsReplication, in the destination region, ends it (Status
  ``stopping``), and the source no longer lists it; one that does not exist is
  DBInstanceAutomatedBackupNotFound.
"""

from __future__ import annotations

import secrets
import string
from typing import Any

_CHARS = string.ascii_lowercase + string.digits


def _replications(db: Any) -> list[dict[str, str]]:
    return db.__dict__.setdefault("_ext_backup_replications", [])


def install(lock: Any) -> None:
    from moto.core.responses import ActionResult
    from moto.rds.exceptions import DBInstanceNotFoundError, RDSClientError
    from moto.rds.models import DBInstance, rds_backends
    from moto.rds.responses import RDSResponse as Response

    # DescribeDBInstances of the source: DBInstanceAutomatedBackupsReplications.
    DBInstance.db_instance_automated_backups_replications = property(
        lambda self: list(_replications(self)) or None)

    def source(response: Any) -> tuple[Any, str, str]:
        arn = str(response.params.get("SourceDBInstanceArn") or "")
        parts = arn.split(":")
        if len(parts) < 7 or parts[5] != "db":
            raise RDSClientError("InvalidParameterValue", f"SourceDBInstanceArn {arn!r} is not a DB instance ARN")
        region, account, identifier = parts[3], parts[4], parts[6]
        backend = rds_backends.get(account, {}).get(region) if account in rds_backends else None
        db = getattr(backend, "databases", {}).get(identifier) if backend is not None else None
        if db is None:
            raise DBInstanceNotFoundError(arn)
        return db, region, arn

    def answer(db: Any, region: str, arn: str, backup_arn: str, status: str, retention: int) -> ActionResult:
        return ActionResult({"DBInstanceAutomatedBackup": {
            "DBInstanceArn": arn,
            "DbiResourceId": getattr(db, "dbi_resource_id", None),
            "Region": region,
            "DBInstanceIdentifier": db.db_instance_identifier,
            "Status": status,
            "Engine": db.engine,
            "BackupRetentionPeriod": retention,
            "DBInstanceAutomatedBackupsArn": backup_arn,
        }})

    def start_db_instance_automated_backups_replication(self: Any) -> Any:
        with lock:
            db, region, arn = source(self)
            if region == self.region:
                raise RDSClientError(
                    "InvalidParameterValue",
                    "The source DB instance must be in another AWS Region than the replicated backups.")
            if not getattr(db, "backup_retention_period", 0):
                raise RDSClientError(
                    "InvalidDBInstanceState",
                    f"Automated backups are not enabled for the DB instance {db.db_instance_identifier}.")
            prefix = f"arn:aws:rds:{self.region}:"
            if any(r["DBInstanceAutomatedBackupsArn"].startswith(prefix) for r in _replications(db)):
                raise RDSClientError(
                    "DBInstanceAutomatedBackupQuotaExceeded",
                    f"The DB instance {db.db_instance_identifier} already replicates its automated "
                    f"backups to {self.region}.")
            suffix = "".join(secrets.choice(_CHARS) for _ in range(26))
            backup_arn = f"arn:aws:rds:{self.region}:{self.current_account}:auto-backup:ab-{suffix}"
            _replications(db).append({"DBInstanceAutomatedBackupsArn": backup_arn})
            retention = int(self.params.get("BackupRetentionPeriod") or 7)
            return answer(db, region, arn, backup_arn, "pending", retention)

    def stop_db_instance_automated_backups_replication(self: Any) -> Any:
        with lock:
            db, region, arn = source(self)
            prefix = f"arn:aws:rds:{self.region}:"
            found = [r for r in _replications(db) if r["DBInstanceAutomatedBackupsArn"].startswith(prefix)]
            if not found:
                raise RDSClientError(
                    "DBInstanceAutomatedBackupNotFound",
                    f"No replicated automated backups of {db.db_instance_identifier} in {self.region}.")
            db.__dict__["_ext_backup_replications"] = [r for r in _replications(db) if r not in found]
            return answer(db, region, arn, found[0]["DBInstanceAutomatedBackupsArn"], "stopping", 0)

    Response.start_db_instance_automated_backups_replication = start_db_instance_automated_backups_replication
    Response.stop_db_instance_automated_backups_replication = stop_db_instance_automated_backups_replication
