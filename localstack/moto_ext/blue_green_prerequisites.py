"""What the source of a blue/green deployment must be before RDS makes one, as the user guides'
"Preparing for a blue/green deployment" sections say (CreateBlueGreenDeployment refuses it
otherwise, with SourceDatabaseNotSupportedFault for an instance and SourceClusterNotSupportedFault
for a cluster: the codes RDS answers a source whose settings it cannot replicate, as in "The value
of the lower_case_table_names parameter ... for the green environment is different",
API_CreateBlueGreenDeployment.html, Errors):

* RDS for MySQL and MariaDB: automated backups on (BackupRetentionPeriod above 0), since green is
  made from blue's binary log ("Preparing for a blue/green deployment", RDS User Guide,
  blue-green-deployments-creating.html);
* RDS for PostgreSQL, when the deployment upgrades the major version, replicates logically
  (blue-green-deployments-replication-type.html): blue's DB parameter group must be a custom one
  with ``rds.logical_replication`` 1 (blue-green-deployments-creating.html, "Preparing an RDS for
  PostgreSQL DB instance"); otherwise it replicates physically and needs neither;
* Aurora MySQL: a custom DB cluster parameter group with binary logging on (``binlog_format`` not
  OFF), and the writer in sync with it ("Blue/green deployments require that the writer instance be
  in sync with the DB cluster parameter group, otherwise creation fails", Aurora User Guide,
  blue-green-deployments-creating.html, "Preparing an Aurora MySQL DB cluster");
* Aurora PostgreSQL: a custom DB cluster parameter group with ``rds.logical_replication`` 1, the
  writer in sync with it (the same page, "Preparing an Aurora PostgreSQL DB cluster").
"""

from __future__ import annotations

from typing import Any


def _value(group: Any, name: str) -> str:
    return str(((group.parameters.get(name) or {}).get("ParameterValue") if group is not None else None) or "")


def _major(version: str | None) -> str:
    return str(version or "").split(".")[0]


def instance(backend: Any, blue: Any, target_version: str | None) -> str | None:
    """Why RDS would refuse a deployment of this instance, or None."""
    name = blue.db_instance_identifier
    if blue.engine in ("mysql", "mariadb") and int(blue.backup_retention_period or 0) <= 0:
        return (f"Automated backups must be turned on for the source DB instance {name}: set its backup "
                "retention period to 1 day or more before you create a blue/green deployment.")
    if blue.engine == "postgres" and target_version and _major(target_version) != _major(blue.engine_version):
        group_name = str(getattr(blue, "db_parameter_group_name", None) or "")
        group = backend.db_parameter_groups.get(group_name.lower())
        if group is None or group_name.startswith("default.") or _value(group, "rds.logical_replication") != "1":
            return (f"A major version upgrade of {name} replicates logically: set rds.logical_replication to 1 "
                    f"in a custom DB parameter group of the source DB instance (it uses "
                    f"{group_name or 'the default group'}) and reboot it.")
    return None


CLUSTER_PARAMETER = {
    "aurora-mysql": ("binlog_format", lambda v: v.upper() not in ("", "OFF")),
    "aurora-postgresql": ("rds.logical_replication", lambda v: v == "1"),
}


def cluster(backend: Any, source: Any) -> str | None:
    """Why RDS would refuse a deployment of this Aurora cluster, or None."""
    name, group_name = source.db_cluster_identifier, str(source.parameter_group or "")
    parameter, on = CLUSTER_PARAMETER[source.engine]
    if group_name.lower().startswith("default."):
        return (f"The source DB cluster {name} uses the default DB cluster parameter group {group_name}. "
                f"Associate it with a custom DB cluster parameter group with {parameter} turned on, and "
                "reboot its writer.")
    group = next((g for k, g in backend.db_cluster_parameter_groups.items() if k.lower() == group_name.lower()), None)
    if not on(_value(group, parameter)):
        return (f"The DB cluster parameter group {group_name} of the source DB cluster {name} has {parameter} "
                "turned off; turn it on and reboot the writer.")
    for member in source._members:
        if getattr(member, "is_cluster_writer", False) and member.__dict__.get("_ext_pending_reboot"):
            return (f"The writer {member.db_instance_identifier} of the source DB cluster {name} is not in sync "
                    f"with its DB cluster parameter group {group_name}; reboot it.")
    return None
