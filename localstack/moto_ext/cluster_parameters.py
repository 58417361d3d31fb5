"""DB cluster parameter groups as RDS keeps them, for moto server.

moto stores what a ModifyDBClusterParameterGroup sets and little else. As for DB parameter groups
(``parameters.py``), this adds what an operator relies on, following the Amazon RDS API Reference:

* DescribeEngineDefaultClusterParameters: a catalog per family (``aurora-mysql8.0``,
  ``aurora-postgresql16``...) with each parameter's ApplyType, DataType and IsModifiable, a subset
  of the real catalogs (API_DescribeEngineDefaultClusterParameters.html);
* ModifyDBClusterParameterGroup takes at most 20 parameters in one request
  (API_ModifyDBClusterParameterGroup.html: "You can modify up to 20 parameters in a single
  request"), and a static one (ApplyMethod ``pending-reboot``) leaves every member of the clusters
  using the group with ``DBClusterParameterGroupStatus`` ``pending-reboot`` (API_DBClusterMember.html)
  until it is rebooted (RebootDBInstance, ``parameters.py``);
* ResetDBClusterParameterGroup, by parameter or all (API_ResetDBClusterParameterGroup.html);
* DescribeDBClusterParameters with ``Source=user`` lists only what was set;
* DeleteDBClusterParameterGroup of a group a cluster uses is refused
  (InvalidDBParameterGroupState, API_DeleteDBClusterParameterGroup.html).
"""

from __future__ import annotations

from typing import Any

from .parameters import _p, reset

_AURORA_MYSQL = [
    _p("aurora_binlog_replication_max_yield_seconds", "dynamic", value="0"),
    _p("binlog_format", "static", "string", value="OFF"),
    _p("character_set_server", "dynamic", "string"),
    _p("collation_server", "dynamic", "string"),
    _p("innodb_autoinc_lock_mode", "static", value="2"),
    _p("lower_case_table_names", "static"),
    _p("server_audit_logging", "dynamic", "boolean", value="0"),
    _p("time_zone", "dynamic", "string"),
]

_AURORA_POSTGRES = [
    _p("log_min_duration_statement", "dynamic"),
    _p("rds.force_ssl", "dynamic", "boolean", value="1"),
    _p("rds.logical_replication", "static", "boolean", value="0"),
    _p("shared_preload_libraries", "static", "list", value="pg_stat_statements"),
    _p("timezone", "dynamic", "string", value="UTC"),
]

CATALOGS = {
    "aurora-mysql5.7": _AURORA_MYSQL,
    "aurora-mysql8.0": _AURORA_MYSQL,
    "aurora-postgresql15": _AURORA_POSTGRES,
    "aurora-postgresql16": _AURORA_POSTGRES,
}
PER_CALL = 20


def install(lock: Any) -> None:
    from moto.core.responses import ActionResult
    from moto.rds import models, responses
    from moto.rds.exceptions import RDSClientError

    Backend = models.RDSBackend
    Response = responses.RDSResponse

    def group_of(backend: Any, name: str) -> Any:
        for key, group in backend.db_cluster_parameter_groups.items():
            if key.lower() == name.lower():
                return group
        raise RDSClientError("DBParameterGroupNotFound",
                             f"DBClusterParameterGroup not found: {name}")

    def members_using(backend: Any, group: str) -> list[Any]:
        clusters = [c for c in backend.clusters.values() if (c.parameter_group or "").lower() == group.lower()]
        return [m for c in clusters for m in c._members]

    def describe_engine_default_cluster_parameters(self: Any) -> Any:
        family = self.params.get("DBParameterGroupFamily") or ""
        catalog = CATALOGS.get(family)
        if catalog is None:
            raise RDSClientError("InvalidParameterValue", f"Invalid DB parameter group family: {family}")
        start = int(self.params.get("Marker") or 0)
        size = int(self.params.get("MaxRecords") or 100)
        defaults: dict[str, Any] = {"DBParameterGroupFamily": family, "Parameters": catalog[start:start + size]}
        if start + size < len(catalog):
            defaults["Marker"] = str(start + size)
        return ActionResult({"EngineDefaults": defaults})

    # moto's own parameter names: its CopyDBClusterParameterGroup calls this by keyword with the
    # source's parameters, however many (the per-call limit is the API's, checked in the response).
    def modify_db_cluster_parameter_group(self: Any, db_cluster_parameter_group_name: str,
                                          db_cluster_parameter_group_parameters: Any) -> Any:
        parameters = list(db_cluster_parameter_group_parameters)
        with lock:
            group = group_of(self, db_cluster_parameter_group_name)
            group.update_cluster_parameters(parameters)
            if any(p.get("ApplyMethod") == "pending-reboot" for p in parameters):
                for db in members_using(self, group.name):
                    db.__dict__["_ext_pending_reboot"] = True
            return group

    def modify_db_cluster_parameter_group_call(self: Any) -> Any:
        # "You can modify up to 20 parameters in a single request"
        # (API_ModifyDBClusterParameterGroup.html, "Parameters").
        if len(self.params.get("Parameters") or []) > PER_CALL:
            raise RDSClientError("InvalidParameterValue",
                                 f"You can modify up to {PER_CALL} parameters in a single request")
        return orig_modify_call(self)

    def reset_db_cluster_parameter_group(self: Any) -> Any:
        name = self.params.get("DBClusterParameterGroupName") or ""
        with lock:
            group = group_of(self.backend, name)
            if reset(group, self.params):
                for db in members_using(self.backend, group.name):
                    db.__dict__["_ext_pending_reboot"] = True
        return ActionResult({"DBClusterParameterGroupName": group.name})

    def describe_db_cluster_parameters(self: Any) -> Any:
        name = self.params.get("DBClusterParameterGroupName") or ""
        with lock:
            group = group_of(self.backend, name)
            catalog = {p["ParameterName"]: p for p in CATALOGS.get(group.db_parameter_group_family, [])}
            rows = [{**catalog.get(n, {}), "ParameterName": n, **v, "Source": "user"}
                    for n, v in group.parameters.items()]
        if (self.params.get("Source") or "user") != "user":
            rows = []
        return ActionResult({"Parameters": rows})

    def delete_db_cluster_parameter_group(self: Any, db_cluster_parameter_group_name: str) -> Any:
        with lock:
            group = group_of(self, db_cluster_parameter_group_name)
            using = [i for i, c in self.clusters.items() if (c.parameter_group or "").lower() == group.name]
            if using:
                raise RDSClientError(
                    "InvalidDBParameterGroupState",
                    f"One or more database clusters are still members of this parameter group "
                    f"{group.name}, so the group cannot be deleted")
            for key in [k for k in self.db_cluster_parameter_groups if k.lower() == group.name]:
                self.db_cluster_parameter_groups.pop(key)

    def db_cluster_members(self: Any) -> Any:
        return [{
            "DBInstanceIdentifier": m.db_instance_identifier,
            "IsClusterWriter": m.is_cluster_writer,
            "DBClusterParameterGroupStatus":
                "pending-reboot" if m.__dict__.get("_ext_pending_reboot") else "in-sync",
            "PromotionTier": m.promotion_tier,
        } for m in self.members]

    Backend.modify_db_cluster_parameter_group = modify_db_cluster_parameter_group
    orig_modify_call = Response.modify_db_cluster_parameter_group
    Response.modify_db_cluster_parameter_group = modify_db_cluster_parameter_group_call
    Backend.delete_db_cluster_parameter_group = delete_db_cluster_parameter_group
    Response.describe_engine_default_cluster_parameters = describe_engine_default_cluster_parameters
    Response.reset_db_cluster_parameter_group = reset_db_cluster_parameter_group
    Response.describe_db_cluster_parameters = describe_db_cluster_parameters
    models.DBCluster.db_cluster_members = property(db_cluster_members)
