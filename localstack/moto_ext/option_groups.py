"""Option groups as RDS keeps them, for moto server (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/).

moto 5.2.5 stores an option group's option names and the settings a request gave, knows engine
versions from a list of 2022, and lists nothing as an error. This follows the API reference:

* CreateOptionGroup (API_CreateOptionGroup.html): the engine and major version are those
  DescribeOptionGroupOptions knows (moto's catalog of RDS's options, which has MySQL 8.4 and
  MariaDB 10.11 and 11.4 where moto's list stops at 8.0 and 10.6), or moto's list; a description
  is required; a taken name is OptionGroupAlreadyExistsFault. Tags reach the group (``og`` ARNs)
  and the Resource Groups Tagging API (``rds:og``, ``tagging.py``).
* DescribeOptionGroups (API_DescribeOptionGroups.html): every group of the account and region (none
  is an empty list, not an error), or the one named (OptionGroupNotFoundFault when RDS has none),
  ``EngineName`` and ``MajorEngineVersion`` filters, pages (``MaxRecords`` 20 to 100, ``Marker``).
  Each option as API_Option.html has it: ``OptionDescription``, ``Persistent``, ``Permanent``,
  ``Port``, ``OptionVersion``, ``VpcSecurityGroupMemberships``, and ``OptionSettings`` with every
  setting of the option (the value set, else its default, API_OptionSetting.html).
* ModifyOptionGroup (API_ModifyOptionGroup.html): ``OptionsToInclude`` adds an option or replaces
  its configuration; an option the catalog lacks for the group's engine and version, or a setting
  the option lacks or does not let be changed, is InvalidParameterValue (Common Errors: "An
  invalid or out-of-range value was supplied"), a port-required option without a port
  InvalidParameterCombination; ``OptionsToRemove`` removes, except a permanent or persistent option
  ("Permanent options ... can't be removed from an option group"), refused with
  InvalidParameterValue.
* DeleteOptionGroup (API_DeleteOptionGroup.html): refused while an instance uses the group
  (InvalidOptionGroupStateFault).
* CreateDBInstance and ModifyDBInstance with ``OptionGroupName``: a group RDS lacks is
  OptionGroupNotFoundFault; one of another engine or major version InvalidParameterCombination
  (USER_WorkingWithOptionGroups.html: "The option group must match the engine and major
  version").

With real engines, the MariaDB audit plugin follows the group (Appendix.MySQL.Options.AuditPlugin.html,
Appendix.MariaDB.Options.AuditPlugin.html): an instance whose group has MARIADB_AUDIT_PLUGIN runs
MariaDB's server_audit plugin with the option's settings (SERVER_AUDIT_EVENTS, ...), installed once
its server serves and when the group changes with ApplyImmediately; removing the option uninstalls
it.
"""

from __future__ import annotations

import gzip
import json
import os
import threading
import time
from typing import Any

from . import engines, paging, scope

AUDIT = "MARIADB_AUDIT_PLUGIN"
# The audit plugin's settings that are server variables of the same name, lower-cased.
AUDIT_VARIABLES = ("SERVER_AUDIT_EVENTS", "SERVER_AUDIT_INCL_USERS", "SERVER_AUDIT_EXCL_USERS",
                   "SERVER_AUDIT_QUERY_LOG_LIMIT", "SERVER_AUDIT_FILE_ROTATE_SIZE",
                   "SERVER_AUDIT_FILE_ROTATIONS")

_CATALOG: dict[str, list[dict[str, Any]]] = {}


def catalog(engine: str) -> list[dict[str, Any]]:
    """moto's copy of DescribeOptionGroupOptions for an engine (every major version)."""
    if engine not in _CATALOG:
        import moto.rds
        path = os.path.join(os.path.dirname(moto.rds.__file__), "resources", "option_group_options",
                            f"{engine}.json.gz")
        try:
            with gzip.open(path) as f:
                _CATALOG[engine] = json.load(f)
        except FileNotFoundError:
            _CATALOG[engine] = []
    return _CATALOG[engine]


def known_option(engine: str, version: str, name: str) -> dict[str, Any] | None:
    return next((o for o in catalog(engine) if o["Name"] == name and o["MajorEngineVersion"] == version), None)


def describe_option(engine: str, version: str, name: str, config: dict[str, Any]) -> dict[str, Any]:
    """An option of a group as API_Option.html has it: every setting of the option, the value set
    or its default."""
    known = known_option(engine, version, name) or {}
    given = config.get("settings", {})
    settings = []
    for s in known.get("OptionGroupOptionSettings", []):
        setting = s["SettingName"]
        settings.append({"Name": setting, "Value": given.get(setting, s.get("DefaultValue", "")),
                         "DefaultValue": s.get("DefaultValue"), "ApplyType": s.get("ApplyType"),
                         "IsModifiable": s.get("IsModifiable", True)})
    for setting, value in given.items():
        if not any(s["Name"] == setting for s in settings):
            settings.append({"Name": setting, "Value": value})
    out: dict[str, Any] = {
        "OptionName": name,
        "OptionDescription": known.get("Description", name),
        "Persistent": known.get("Persistent", False),
        "Permanent": known.get("Permanent", False),
        "OptionSettings": settings,
        "VpcSecurityGroupMemberships": [{"VpcSecurityGroupId": g, "Status": "active"}
                                        for g in config.get("security_groups", [])],
        "DBSecurityGroupMemberships": [],
    }
    if config.get("port") is not None:
        out["Port"] = int(config["port"])
    if config.get("version"):
        out["OptionVersion"] = config["version"]
    return out


def options_of(group: Any) -> dict[str, dict[str, Any]]:
    """The group's options: name -> {settings, port, version, security_groups}."""
    return group.__dict__.setdefault("_ext_options", {})


def describe(group: Any) -> dict[str, Any]:
    return {
        "OptionGroupName": group.name,
        "OptionGroupDescription": group.description,
        "EngineName": group.engine_name,
        "MajorEngineVersion": group.major_engine_version,
        "Options": [describe_option(group.engine_name, group.major_engine_version, n, c)
                    for n, c in sorted(options_of(group).items())],
        "AllowsVpcAndNonVpcInstanceMemberships": True,
        "OptionGroupArn": group.arn,
    }


def audit_settings(backend: Any, db: Any) -> dict[str, str] | None:
    """The audit plugin's settings for an instance's server, None when its group lacks the plugin."""
    group = backend.option_groups.get((getattr(db, "option_group_name", None) or "").lower())
    if group is None or AUDIT not in options_of(group):
        return None
    option = describe_option(group.engine_name, group.major_engine_version, AUDIT, options_of(group)[AUDIT])
    return {s["Name"]: s["Value"] for s in option["OptionSettings"]
            if s["Name"] in AUDIT_VARIABLES and s["Value"] not in (None, "")}


def follow(backend: Any, db: Any) -> None:
    """The instance's real server (if it has one) runs the audit plugin as its group says, once
    it serves (waited for in the background)."""
    server = engines.get(db.db_instance_identifier)
    if server is None or server.family != "mariadb":
        return
    identifier = db.db_instance_identifier

    def run() -> None:
        deadline = time.time() + 300
        while not server.ready and server.error is None and time.time() < deadline:
            time.sleep(0.5)
        if not server.ready:
            return
        try:
            settings = audit_settings(backend, backend.databases.get(identifier, db))
            installed = "SERVER_AUDIT" in server.query(
                "SELECT PLUGIN_NAME FROM information_schema.PLUGINS WHERE PLUGIN_NAME='SERVER_AUDIT'")
            if settings is None:
                if installed:
                    # MariaDB keeps a plugin that is logging until shutdown ("busy"): logging stops
                    # first, then it is uninstalled (DELETED until the server restarts).
                    server.query("SET GLOBAL server_audit_logging = OFF")
                    server.query("UNINSTALL SONAME 'server_audit'")
                return
            if not installed:
                server.query("INSTALL SONAME 'server_audit'")
            for name, value in settings.items():
                quoted = value if value.isdigit() else "'" + value.replace("'", "''") + "'"
                server.query(f"SET GLOBAL {name.lower()} = {quoted}")
            server.query("SET GLOBAL server_audit_logging = ON")
        except engines.EngineError as e:
            print(f"moto_ext: audit plugin on {identifier}: {e}", flush=True)

    threading.Thread(target=scope.carry(run), name=f"options-{identifier}", daemon=True).start()


def install(lock: Any) -> None:
    from moto.core.responses import ActionResult
    from moto.rds.exceptions import OptionGroupNotFoundFaultError, RDSClientError
    from moto.rds.models import OptionGroup, RDSBackend as Backend
    from moto.rds.responses import RDSResponse as Response

    orig_create_group = Backend.create_option_group

    def found(backend: Any, name: str) -> Any:
        group = backend.option_groups.get(str(name).lower())
        if group is None:
            raise OptionGroupNotFoundFaultError(name)
        return group

    def users(backend: Any, name: str) -> list[str]:
        return sorted(i for i, db in backend.databases.items()
                      if (getattr(db, "option_group_name", None) or "").lower() == name.lower())

    def create(self: Any) -> Any:
        params = self.params
        with lock:
            engine, version = str(params.get("EngineName") or ""), str(params.get("MajorEngineVersion") or "")
            kwargs = {"option_group_name": str(params.get("OptionGroupName") or "").lower(),
                      "engine_name": engine, "major_engine_version": version,
                      "option_group_description": params.get("OptionGroupDescription"),
                      "tags": params.get("Tags") or []}
            if any(o["MajorEngineVersion"] == version for o in catalog(engine)):
                if kwargs["option_group_name"] in self.backend.option_groups:
                    raise RDSClientError("OptionGroupAlreadyExistsFault",
                                         f"An option group named {kwargs['option_group_name']} already exists.")
                if not kwargs["option_group_description"]:
                    raise RDSClientError("InvalidParameterValue",
                                         "The parameter OptionGroupDescription must be provided and must not be blank.")
                group = OptionGroup(self.backend, **kwargs)
                self.backend.option_groups[group.name] = group
            else:
                group = orig_create_group(self.backend, kwargs)
            return ActionResult({"OptionGroup": describe(group)})

    def describe_groups(self: Any) -> Any:
        params = self.params
        paging.size(params)
        with lock:
            name = params.get("OptionGroupName")
            groups = [g for g in self.backend.option_groups.values()
                      if (not name or g.name == str(name).lower())
                      and (not params.get("EngineName") or g.engine_name == params["EngineName"])
                      and (not params.get("MajorEngineVersion")
                           or g.major_engine_version == params["MajorEngineVersion"])]
            if name and not groups:
                raise OptionGroupNotFoundFaultError(name)
            rows = [describe(g) for g in sorted(groups, key=lambda g: g.name)]
            return ActionResult(paging.page(params, "OptionGroupsList", rows))

    def configuration(group: Any, option: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        name = str(option.get("OptionName") or "")
        known = known_option(group.engine_name, group.major_engine_version, name)
        if known is None:
            raise RDSClientError("InvalidParameterValue",
                                 f"Option {name} is not available for engine {group.engine_name} "
                                 f"{group.major_engine_version}.")
        settings: dict[str, str] = {}
        catalog_settings = {s["SettingName"]: s for s in known.get("OptionGroupOptionSettings", [])}
        for s in option.get("OptionSettings") or []:
            setting, value = str(s.get("Name") or ""), str(s.get("Value") or "")
            entry = catalog_settings.get(setting)
            if entry is None:
                raise RDSClientError("InvalidParameterValue", f"Option setting {setting} is not valid for {name}.")
            if not entry.get("IsModifiable", True) and value != entry.get("DefaultValue"):
                raise RDSClientError("InvalidParameterValue", f"Option setting {setting} of {name} cannot be modified.")
            settings[setting] = value
        port = option.get("Port")
        if known.get("PortRequired") and port in (None, ""):
            raise RDSClientError("InvalidParameterCombination", f"Option {name} requires a port.")
        groups = [str(g) for g in option.get("VpcSecurityGroupMemberships") or []]
        return name, {"settings": settings, "port": port, "version": option.get("OptionVersion"),
                      "security_groups": groups}

    def modify(self: Any) -> Any:
        params = self.params
        with lock:
            group = found(self.backend, params.get("OptionGroupName") or "")
            include = params.get("OptionsToInclude") or []
            remove = [str(r) for r in params.get("OptionsToRemove") or []]
            if not include and not remove:
                raise RDSClientError("InvalidParameterValue",
                                     "At least one option must be added, modified, or removed.")
            changes = dict(configuration(group, o) for o in include)
            for name in remove:
                known = known_option(group.engine_name, group.major_engine_version, name) or {}
                if name in options_of(group) and (known.get("Permanent") or known.get("Persistent")):
                    raise RDSClientError("InvalidParameterValue",
                                         f"Option {name} is permanent or persistent and cannot be removed.")
            for name in remove:
                options_of(group).pop(name, None)
            options_of(group).update(changes)
            if str(params.get("ApplyImmediately")).lower() == "true":
                for identifier in users(self.backend, group.name):
                    follow(self.backend, self.backend.databases[identifier])
            return ActionResult({"OptionGroup": describe(group)})

    def delete(self: Any) -> Any:
        with lock:
            name = str(self.params.get("OptionGroupName") or "")
            group = found(self.backend, name)
            used = users(self.backend, group.name)
            if used:
                raise RDSClientError("InvalidOptionGroupStateFault",
                                     f"The option group '{group.name}' cannot be deleted because it is in use "
                                     f"by DB instance {used[0]}.")
            self.backend.option_groups.pop(group.name)
            return ActionResult({})

    def check(backend: Any, name: str | None, engine: str, version: str) -> None:
        if not name or str(name).startswith("default:"):
            return
        group = found(backend, name)
        if group.engine_name != engine or (version and not version.startswith(group.major_engine_version)):
            raise RDSClientError("InvalidParameterCombination",
                                 f"The option group {group.name} is for {group.engine_name} "
                                 f"{group.major_engine_version}, not {engine} {version}.")

    orig_create_db = Backend.create_db_instance
    orig_modify_db = Backend.modify_db_instance

    def create_db_instance(self: Any, db_kwargs: dict[str, Any]) -> Any:
        with lock:
            check(self, db_kwargs.get("option_group_name"), db_kwargs.get("engine") or "",
                  str(db_kwargs.get("engine_version") or ""))
        db = orig_create_db(self, db_kwargs)
        if db_kwargs.get("option_group_name"):
            follow(self, db)
        return db

    def modify_db_instance(self: Any, db_instance_identifier: str, db_kwargs: dict[str, Any]) -> Any:
        name = db_kwargs.get("option_group_name")
        if name:
            with lock:
                db = self.databases.get(db_instance_identifier)
                if db is not None:
                    check(self, name, db.engine, str(db_kwargs.get("engine_version") or db.engine_version or ""))
        db = orig_modify_db(self, db_instance_identifier, db_kwargs)
        if name:
            follow(self, db)
        return db

    Backend.create_db_instance = create_db_instance
    Backend.modify_db_instance = modify_db_instance
    Response.create_option_group = create
    Response.describe_option_groups = describe_groups
    Response.modify_option_group = modify
    Response.delete_option_group = delete
