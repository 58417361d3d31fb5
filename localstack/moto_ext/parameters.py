"""DB parameter groups as RDS keeps them, for moto server.

moto stores the parameters a ModifyDBParameterGroup sets and little else. This adds what an
operator of parameter groups relies on:

* DescribeEngineDefaultParameters: a catalog per family, with each parameter's ApplyType
  (``dynamic`` or ``static``), DataType and IsModifiable as RDS documents them (a subset of the real
  catalogs: the parameters the tests and the Coffee Manage sample use, and their neighbours);
* ResetDBParameterGroup (by parameter, or all);
* ``pending-reboot``: a static change (ApplyMethod ``pending-reboot``) to a group leaves every
  instance using it with ParameterApplyStatus ``pending-reboot`` until RebootDBInstance, which
  makes the instance ``rebooting`` for the modify delay, then ``in-sync``;
* DeleteDBParameterGroup of a group an instance uses is refused (InvalidDBParameterGroupState).
"""

from __future__ import annotations

from typing import Any

from . import engines


def _p(name: str, apply_type: str, data_type: str = "integer", modifiable: bool = True,
       value: str | None = None) -> dict[str, Any]:
    out = {
        "ParameterName": name,
        "ApplyType": apply_type,
        "DataType": data_type,
        "IsModifiable": modifiable,
        "Source": "engine-default",
    }
    if value is not None:
        out["ParameterValue"] = value
    return out


_MYSQL = [
    _p("autocommit", "dynamic", "boolean", value="1"),
    _p("basedir", "static", "string", modifiable=False, value="/rdsdbbin/mysql"),
    _p("binlog_format", "dynamic", "string", value="ROW"),
    _p("character_set_server", "dynamic", "string"),
    _p("collation_server", "dynamic", "string"),
    _p("event_scheduler", "dynamic", "string", value="OFF"),
    _p("general_log", "dynamic", "boolean"),
    _p("innodb_file_per_table", "dynamic", "boolean", value="1"),
    _p("innodb_lock_wait_timeout", "dynamic", value="50"),
    _p("innodb_log_buffer_size", "static", value="8388608"),
    _p("innodb_read_io_threads", "static", value="4"),
    _p("innodb_write_io_threads", "static", value="4"),
    _p("log_bin_trust_function_creators", "dynamic", "boolean"),
    _p("long_query_time", "dynamic", "float"),
    _p("lower_case_table_names", "static"),
    _p("max_allowed_packet", "dynamic", value="67108864"),
    _p("max_connections", "dynamic"),
    _p("performance_schema", "static", "boolean", value="0"),
    _p("require_secure_transport", "dynamic", "boolean", value="0"),
    _p("slow_query_log", "dynamic", "boolean"),
    _p("sql_mode", "dynamic", "string"),
    _p("thread_stack", "static", value="262144"),
    _p("time_zone", "dynamic", "string"),
    _p("wait_timeout", "dynamic"),
]

_POSTGRES = [
    _p("log_min_duration_statement", "dynamic"),
    _p("max_connections", "static"),
    _p("rds.force_ssl", "dynamic", "boolean", value="1"),
    _p("shared_buffers", "static"),
    _p("shared_preload_libraries", "static", "list", value="pg_stat_statements"),
    _p("statement_timeout", "dynamic"),
    _p("timezone", "dynamic", "string", value="UTC"),
    _p("work_mem", "dynamic"),
]

CATALOGS = {
    "mysql8.0": _MYSQL,
    "mysql8.4": _MYSQL,
    "mariadb10.11": _MYSQL,
    "postgres16": _POSTGRES,
    "postgres17": _POSTGRES,
}


def tls_required(backend: Any, db: Any) -> bool:
    """Whether the instance's server refuses plain connections: its parameter group's
    require_secure_transport (MySQL, MariaDB) or rds.force_ssl (PostgreSQL), else the engine's
    default: 0 for MySQL up to 8.4 (mysql-ssl-connections.require-ssl.html), 1 for RDS for
    PostgreSQL 15 and later (PostgreSQL.Concepts.General.SSL.html)."""
    postgres = engines.family(db.engine) == "postgres"
    name = "rds.force_ssl" if postgres else "require_secure_transport"
    group = backend.db_parameter_groups.get((getattr(db, "db_parameter_group_name", None) or "").lower())
    value = ((group.parameters.get(name) or {}).get("ParameterValue") if group is not None else None)
    if value is not None:
        return str(value).lower() in ("1", "on", "true")
    major = str(getattr(db, "engine_version", "") or "").split(".")[0]
    return postgres and (not major.isdigit() or int(major) >= 15)


def follow_tls(backend: Any, group_name: str) -> None:
    """A change of a group's TLS parameter reaches the servers of its instances at once."""
    for db in backend.databases.values():
        if (getattr(db, "db_parameter_group_name", None) or "").lower() == group_name.lower():
            server = engines.get(db.db_instance_identifier)
            if server is not None:
                server.set_tls_required(tls_required(backend, db))


def reset(group: Any, params: Any) -> bool:
    """Resets a group's parameters as a Reset(DB|DBCluster)ParameterGroup request asks (all of
    them, or those listed); whether a static one was among them (its users then wait for a
    reboot)."""
    if str(params.get("ResetAllParameters")).lower() == "true":
        names, static = list(group.parameters), True
    else:
        listed = [p.original_dict() for p in params.get("Parameters", [])]
        names = [p["ParameterName"] for p in listed]
        static = any(p.get("ApplyMethod") == "pending-reboot" for p in listed)
    for n in names:
        group.parameters.pop(n, None)
    return static


def install(lock: Any, config: dict[str, Any], start_phase: Any, purge: Any) -> None:
    from moto.core.responses import ActionResult
    from moto.rds import models, responses
    from moto.rds.exceptions import DBParameterGroupNotFoundError, RDSClientError

    Backend = models.RDSBackend
    Response = responses.RDSResponse

    def users(backend: Any, group: str) -> list[Any]:
        return [db for db in backend.databases.values()
                if (getattr(db, "db_parameter_group_name", None) or "").lower() == group.lower()]

    def describe_engine_default_parameters(self: Any) -> Any:
        family = self.params.get("DBParameterGroupFamily") or ""
        catalog = CATALOGS.get(family)
        if catalog is None:
            raise RDSClientError("InvalidParameterValue", f"Invalid DB parameter group family: {family}")
        start = int(self.params.get("Marker") or 0)
        size = int(self.params.get("MaxRecords") or 100)
        page = catalog[start:start + size]
        defaults: dict[str, Any] = {"DBParameterGroupFamily": family, "Parameters": page}
        if start + size < len(catalog):
            defaults["Marker"] = str(start + size)
        return ActionResult({"EngineDefaults": defaults})

    # moto's own parameter names: its CopyDBParameterGroup calls this by keyword.
    def modify_db_parameter_group(self: Any, db_parameter_group_name: str,
                                  db_parameter_group_parameters: Any) -> Any:
        with lock:
            parameters = list(db_parameter_group_parameters)
            group = orig_modify(self, db_parameter_group_name, parameters)
            if any(p.get("ApplyMethod") == "pending-reboot" for p in parameters):
                for db in users(self, group.name):
                    db.__dict__["_ext_pending_reboot"] = True
            follow_tls(self, group.name)
            return group

    def reset_db_parameter_group(self: Any) -> Any:
        name = (self.params.get("DBParameterGroupName") or "").lower()
        with lock:
            group = self.backend.db_parameter_groups.get(name)
            if group is None:
                raise DBParameterGroupNotFoundError(name)
            if reset(group, self.params):
                for db in users(self.backend, group.name):
                    db.__dict__["_ext_pending_reboot"] = True
            follow_tls(self.backend, group.name)
        return ActionResult({"DBParameterGroupName": group.name})

    def delete_db_parameter_group(self: Any, name: str) -> Any:
        with lock:
            purge(self)
            using = users(self, name.lower())
            if using:
                raise RDSClientError(
                    "InvalidDBParameterGroupState",
                    f"One or more database instances are still members of this parameter group "
                    f"{name}, so the group cannot be deleted")
            return orig_delete(self, name)

    def reboot_db_instance(self: Any, identifier: str) -> Any:
        with lock:
            purge(self)
            db = self.describe_db_instances(identifier)[0]
            if db.status != "available":
                raise RDSClientError(
                    "InvalidDBInstanceState",
                    f"Instance {identifier} is in {db.status} state and cannot be rebooted now.")
            db.__dict__["_ext_pending_reboot"] = False
            if config["modify_delay"] > 0:
                start_phase(db, "rebooting", config["modify_delay"])
            return db

    def db_parameter_group_status_list(self: Any) -> Any:
        status = "pending-reboot" if self.__dict__.get("_ext_pending_reboot") else "in-sync"
        return [{"DBParameterGroupName": g.name, "ParameterApplyStatus": status}
                for g in self.db_parameter_groups()]

    orig_modify = Backend.modify_db_parameter_group
    orig_delete = Backend.delete_db_parameter_group
    Backend.modify_db_parameter_group = modify_db_parameter_group
    Backend.delete_db_parameter_group = delete_db_parameter_group
    Backend.reboot_db_instance = reboot_db_instance
    Response.describe_engine_default_parameters = describe_engine_default_parameters
    Response.reset_db_parameter_group = reset_db_parameter_group
    models.DBInstance.db_parameter_group_status_list = property(db_parameter_group_status_list)
