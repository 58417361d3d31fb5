"""RestoreDBInstanceFromS3 and RestoreDBClusterFromS3: an RDS for MySQL instance, or an Aurora MySQL
cluster, made from a backup in S3, which moto 5.2.5 does not have at all ("Restoring a backup into
an Amazon RDS for MySQL DB instance", MySQL.Procedural.Importing.html; "Migrating data from an
external MySQL database to an Amazon Aurora MySQL DB cluster", AuroraMySQL.Migrating.ExtMySQL.S3.html;
API_RestoreDBInstanceFromS3.html, API_RestoreDBClusterFromS3.html).

- **What it takes.** The request's required parameters (DBInstanceIdentifier, DBInstanceClass,
  Engine, SourceEngine, SourceEngineVersion, S3BucketName, S3IngestionRoleArn). Engine and
  SourceEngine are ``mysql`` ("Valid Values: mysql"; a cluster's Engine ``aurora-mysql``, with
  DBClusterIdentifier and MasterUsername required instead of the instance's), else
  InvalidParameterValue; a bucket moto's
  S3 does not have is InvalidS3BucketFault, and so is a prefix with no backup file under it; a
  role its IAM does not have is InvalidParameterValue. The instance is then made as
  CreateDBInstance makes one (its lifecycle, its tags, its real server), a cluster as
  CreateDBCluster makes one (its writer's real server loaded with the backup, as a restore of a
  snapshot is: ``clusters.RESTORING``).
- **The backup format differs from RDS's.** RDS takes a Percona XtraBackup of the source's data
  files (full and incremental, possibly compressed or split). Here the backup is SQL: every
  object under the prefix whose key ends in ``.sql`` (``mysqldump`` or ``mariadb-dump`` output),
  loaded in key order into the new instance's real server, as a snapshot's dump is loaded on a
  restore (``engines.Server.load``). The dump names its databases (``mysqldump --databases``), as
  RDS's import restores whole databases. Without a real server the files are only checked for.
"""

from __future__ import annotations

import os
from typing import Any

from . import engines, trust

REQUIRED = ("DBInstanceIdentifier", "DBInstanceClass", "Engine", "SourceEngine", "SourceEngineVersion",
            "S3BucketName", "S3IngestionRoleArn")
# API_RestoreDBClusterFromS3.html, Request Parameters ("Required: Yes").
CLUSTER_REQUIRED = ("DBClusterIdentifier", "Engine", "MasterUsername", "SourceEngine", "SourceEngineVersion",
                    "S3BucketName", "S3IngestionRoleArn")


def backup_keys(keys: list[str], prefix: str | None) -> list[str]:
    """The backup's files: the keys under the prefix that end in .sql, in key order."""
    start = (prefix or "").lstrip("/")
    return sorted(k for k in keys if k.startswith(start) and k.endswith(".sql"))


def install(lock: Any, restoring: dict[str, str]) -> None:
    from moto.core.responses import ActionResult
    from moto.rds.exceptions import RDSClientError
    from moto.rds.responses import RDSResponse
    from moto.s3.models import s3_backends

    from . import clusters

    S3_PARAMS = ("source_engine", "source_engine_version", "s3_bucket_name", "s3_prefix",
                 "s3_ingestion_role_arn")

    def backup(self: Any, required: tuple[str, ...], engine: str, name: str) -> None:
        """Checks the request as RDS does and writes the backup's files, in key order, as the dump
        `name` a new server loads."""
        p = self.params
        for param in required:
            if not p.get(param):
                raise RDSClientError("InvalidParameterValue", f"The parameter {param} must be provided.")
        for param, valid in (("Engine", engine), ("SourceEngine", "mysql")):
            if str(p[param]).lower() != valid:
                raise RDSClientError("InvalidParameterValue",
                                     f"Invalid {param} {p[param]}: a backup in S3 restores a MySQL backup "
                                     f"into {engine} only.")
        account = self.backend.account_id
        bucket = s3_backends[account]["aws"].buckets.get(p["S3BucketName"])
        if bucket is None:
            raise RDSClientError("InvalidS3BucketFault", f"The S3 bucket {p['S3BucketName']} doesn't exist.")
        if trust.role(p["S3IngestionRoleArn"]) is None:
            raise RDSClientError("InvalidParameterValue", f"IAM role {p['S3IngestionRoleArn']} not found.")
        keys = backup_keys(list(bucket.keys.keys()), p.get("S3Prefix"))
        if not keys:
            raise RDSClientError("InvalidS3BucketFault",
                                 f"No backup file under s3://{p['S3BucketName']}/{p.get('S3Prefix') or ''}.")
        os.makedirs(engines.SNAPSHOTS, exist_ok=True)
        with open(os.path.join(engines.SNAPSHOTS, f"{name}.sql"), "wb") as out:
            for key in keys:
                out.write(bytes(bucket.keys[key].value))
                out.write(b"\n")

    def restore_db_instance_from_s3(self: Any) -> Any:
        p = self.params
        identifier = str(p.get("DBInstanceIdentifier") or "").lower()
        name = f"s3-import-{identifier}"
        backup(self, REQUIRED, "mysql", name)
        kwargs = {k: v for k, v in p.items() if k not in S3_PARAMS}
        given = str(p["DBInstanceIdentifier"])
        with lock:
            restoring[given] = restoring[identifier] = name
            try:
                database = self.backend.create_db_instance(kwargs)
            finally:
                restoring.pop(given, None)
                restoring.pop(identifier, None)
        return ActionResult({"DBInstance": database})

    def restore_db_cluster_from_s3(self: Any) -> Any:
        p = self.params
        identifier = str(p.get("DBClusterIdentifier") or "").lower()
        name = f"s3-import-cluster-{identifier}"
        backup(self, CLUSTER_REQUIRED, "aurora-mysql", name)
        kwargs = {k: v for k, v in p.items() if k not in S3_PARAMS}
        with lock:
            clusters.RESTORING[identifier] = name
            try:
                cluster = self.backend.create_db_cluster(kwargs)
            finally:
                clusters.RESTORING.pop(identifier, None)
        return ActionResult({"DBCluster": cluster})

    RDSResponse.restore_db_instance_from_s3 = restore_db_instance_from_s3
    RDSResponse.restore_db_cluster_from_s3 = restore_db_cluster_from_s3
