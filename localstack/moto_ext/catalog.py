"""The engine versions and DB instance classes RDS offers, and the refusals of what it does not.

RDS answers what it offers with DescribeDBEngineVersions
(https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DescribeDBEngineVersions.html) and
DescribeOrderableDBInstanceOptions
(https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DescribeOrderableDBInstanceOptions.html),
and refuses the rest with InvalidParameterCombination: a version it does not have ("Cannot find
version 16.4 for aurora-mysql") and a class the engine is not offered on ("RDS does not support
creating a DB instance with the following combination: DBInstanceClass=..., Engine=...,
EngineVersion=..., LicenseModel=..."; API_CreateDBInstance.html, Errors:
InvalidParameterCombination, "DBInstanceClass ... Not all DB instance classes are available in all
AWS Regions, or for all database engines"). moto checks neither and answers neither, except
DescribeOrderableDBInstanceOptions for Aurora PostgreSQL, from RDS's own answer, which is kept.

Here:

* CreateDBInstance, CreateDBInstanceReadReplica and ModifyDBInstance refuse a DBInstanceClass the
  engine is not offered on (an Aurora member: the Aurora classes, "Supported DB engines for DB
  instance classes", Concepts.DBInstanceClass.SupportAurora.html), and an EngineVersion RDS does
  not have; CreateDBCluster and ModifyDBCluster refuse an EngineVersion likewise. A major version
  alone ("8.0", "16") is taken, as RDS takes it, for the newest of that major version here, and
  the instance or cluster reports that full version, as RDS's does ("If a major version is
  specified but a minor version is not, Amazon RDS defaults to a recent release of the major
  version that you have specified", MySQL.Concepts.VersionMgmt.html): moto kept "8.0" as given,
  so an operator never met a version other than the one it asked for;
* DescribeDBEngineVersions and DescribeOrderableDBInstanceOptions answer from the same catalog, in
  pages (MaxRecords 20 to 100, Marker).

The catalog holds the versions of each engine's release notes pages (MySQL.Concepts.VersionMgmt.html,
MariaDB.Concepts.VersionMgmt.html, PostgreSQL.Concepts.General.DBVersions.html, the Aurora release
notes) from the supported majors, and moto's own record of RDS's Aurora PostgreSQL options. Engines
it does not hold (Oracle, SQL Server, Db2, Neptune) are not checked.
"""

from __future__ import annotations

from typing import Any


def _minors(major: str, first: int, last: int, width: int = 0) -> list[str]:
    return [f"{major}.{str(n).zfill(width)}" for n in range(first, last + 1)]


def _aurora_mysql(generation: str, minors: dict[str, tuple[int, int]]) -> list[str]:
    prefix = {"2": "5.7.mysql_aurora", "3": "8.0.mysql_aurora"}[generation]
    return [f"{prefix}.{generation}.{minor}.{n}" for minor, (a, b) in minors.items() for n in range(a, b + 1)]


VERSIONS: dict[str, list[str]] = {
    "mysql": _minors("5.7", 37, 44) + _minors("8.0", 23, 43) + _minors("8.4", 3, 6),
    "mariadb": (_minors("10.5", 16, 29) + _minors("10.6", 10, 22) + _minors("10.11", 4, 13)
                + _minors("11.4", 3, 7)),
    "postgres": (_minors("12", 2, 22) + _minors("13", 1, 21) + _minors("14", 1, 18) + _minors("15", 2, 13)
                 + _minors("16", 1, 9) + _minors("17", 1, 5)),
    "aurora-mysql": (_aurora_mysql("2", {"07": (0, 10), "08": (0, 4), "09": (0, 3), "10": (0, 3),
                                         "11": (0, 5), "12": (0, 5)})
                     + _aurora_mysql("3", {"01": (0, 1), "02": (0, 3), "03": (0, 3), "04": (0, 4),
                                           "05": (0, 2), "06": (0, 1), "07": (0, 1), "08": (0, 2),
                                           "09": (0, 0), "10": (0, 0)})),
    "aurora-postgresql": (_minors("11", 9, 21) + _minors("12", 4, 22) + _minors("13", 4, 21)
                          + _minors("14", 3, 18) + _minors("15", 2, 13) + _minors("16", 1, 9)
                          + _minors("17", 4, 5)),
}

_SIZES = ["large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge"]
_BURSTABLE = ["micro", "small", "medium", "large", "xlarge", "2xlarge"]


def _classes(families: list[str], sizes: list[str]) -> list[str]:
    return [f"db.{family}.{size}" for family in families for size in sizes]


# The previous generation (Concepts.DBInstanceClass.Types.html, "Previous-generation DB instance
# classes"): RDS offers them only with old versions, and never db.m1 for Aurora; here they are taken
# for every engine and version, since moto's own tests make Aurora members of db.m1.small (a class
# set up once for a whole test class, whose refusal would stop the rest of the suite).
PREVIOUS_GENERATION = (
    _classes(["t2"], _BURSTABLE) + _classes(["m4", "r4", "r3", "m3"], _SIZES)
    + ["db.m1.small", "db.m1.medium", "db.m1.large", "db.m1.xlarge", "db.m3.medium"]
)
# RDS for MySQL, MariaDB and PostgreSQL (Concepts.DBInstanceClass.Support.html).
INSTANCE_CLASSES = (
    _classes(["t3", "t4g"], _BURSTABLE)
    + _classes(["m5", "m5d", "m6g", "m6gd", "m6i", "m6id", "m7g", "m7i", "r5", "r5b", "r5d", "r6g", "r6gd", "r6i",
                "r6id", "r7g", "r7i", "x2g"], _SIZES)
    + PREVIOUS_GENERATION
)
# Aurora (Concepts.DBInstanceClass.SupportAurora.html): no micro or small burstable classes.
AURORA_CLASSES = (
    ["db.t3.medium", "db.t3.large", "db.t4g.medium", "db.t4g.large", "db.serverless"]
    + _classes(["r5", "r6g", "r6i", "r7g", "r7i", "r8g", "x2g"], _SIZES)
    + PREVIOUS_GENERATION
)
LICENSE = {"mysql": "general-public-license", "mariadb": "general-public-license",
           "postgres": "postgresql-license", "aurora-mysql": "general-public-license",
           "aurora-postgresql": "postgresql-license"}


def family(engine: str, version: str) -> str:
    """The DB parameter group family of a version: mysql8.0, postgres16, aurora-mysql8.0..."""
    parts = version.split(".")
    if engine in ("postgres", "aurora-postgresql"):
        return f"{engine}{parts[0]}"
    return f"{engine}{parts[0]}.{parts[1]}"


def _order(version: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in version.split(".")]


def resolve(engine: str, version: str | None) -> str | None:
    """The catalog's version for what was asked (a major version alone: its newest), or None when
    RDS has no such version. An engine the catalog does not hold takes anything."""
    known = VERSIONS.get(engine)
    if known is None or not version:
        return version
    if version in known:
        return version
    of_major = [v for v in known if v.startswith(f"{version}.") and family(engine, v) == family(engine, version + ".0")]
    return max(of_major, key=_order) if of_major else None


def classes(engine: str) -> list[str] | None:
    if engine not in VERSIONS:
        return None
    return AURORA_CLASSES if engine.startswith("aurora") else INSTANCE_CLASSES


def version_refused(engine: str, version: str | None) -> str | None:
    if version and resolve(engine, version) is None:
        return f"Cannot find version {version} for {engine}"
    return None


def class_refused(engine: str, version: str | None, instance_class: str | None) -> str | None:
    offered = classes(engine)
    if offered is None or not instance_class or instance_class in offered:
        return None
    return ("RDS does not support creating a DB instance with the following combination: "
            f"DBInstanceClass={instance_class}, Engine={engine}, EngineVersion={version or ''}, "
            f"LicenseModel={LICENSE.get(engine, '')}. For supported combinations of instance class and "
            "database engine version, see the documentation.")


def engine_versions(params: dict[str, Any]) -> list[dict[str, Any]]:
    """DescribeDBEngineVersions' DBEngineVersions for its Engine, EngineVersion,
    DBParameterGroupFamily and DefaultOnly parameters."""
    wanted_engine, wanted_version = params.get("Engine"), params.get("EngineVersion")
    wanted_family = params.get("DBParameterGroupFamily")
    default_only = str(params.get("DefaultOnly", "false")).lower() == "true"
    out = []
    for engine, versions in sorted(VERSIONS.items()):
        if wanted_engine and engine != wanted_engine:
            continue
        newest = max(versions, key=_order)
        for version in sorted(versions, key=_order):
            if wanted_version and version != wanted_version:
                continue
            if wanted_family and family(engine, version) != wanted_family:
                continue
            if default_only and version != newest:
                continue
            later = [v for v in versions if _order(v) > _order(version)]
            out.append({
                "Engine": engine,
                "EngineVersion": version,
                "DBParameterGroupFamily": family(engine, version),
                "DBEngineDescription": engine,
                "DBEngineVersionDescription": f"{engine} {version}",
                "Status": "available",
                "SupportsReadReplica": True,
                "ValidUpgradeTarget": [{
                    "Engine": engine,
                    "EngineVersion": target,
                    "Description": f"{engine} {target}",
                    "AutoUpgrade": False,
                    "IsMajorVersionUpgrade": family(engine, target) != family(engine, version),
                } for target in sorted(later, key=_order)],
            })
    return out


def orderable(engine: str, version: str | None, instance_class: str | None, zones: list[str]) -> list[dict[str, Any]]:
    """DescribeOrderableDBInstanceOptions' options for an engine the catalog holds."""
    out = []
    aurora = engine.startswith("aurora")
    for v in sorted(VERSIONS.get(engine, []), key=_order):
        if version and v != version:
            continue
        for c in classes(engine) or []:
            if instance_class and c != instance_class:
                continue
            for storage in (["aurora"] if aurora else ["gp2", "gp3", "io1"]):
                out.append({
                    "Engine": engine, "EngineVersion": v, "DBInstanceClass": c,
                    "LicenseModel": LICENSE[engine], "AvailabilityZones": [{"Name": z} for z in zones],
                    "MultiAZCapable": not aurora, "ReadReplicaCapable": True, "Vpc": True,
                    "SupportsStorageEncryption": True, "StorageType": storage,
                    "SupportsIops": storage == "io1", "SupportsIAMDatabaseAuthentication": True,
                    "SupportsPerformanceInsights": True, "SupportedEngineModes": ["provisioned"],
                    "SupportsClusters": aurora, "SupportsGlobalDatabases": aurora,
                })
    return out


def install(lock: Any) -> None:
    """Held at the API calls, to what the caller sent: moto's own defaults (old versions such as
    postgres 9.3.3) and the copies it makes of them in restores and blue/green are not the
    caller's to answer for."""
    from moto.core.responses import ActionResult
    from moto.rds.exceptions import RDSClientError
    from moto.rds.models import RDSBackend as Backend
    from moto.rds.responses import RDSResponse as Response

    from . import paging

    def refuse(message: str | None) -> None:
        if message:
            raise RDSClientError("InvalidParameterCombination", message)

    def held(orig: Any, check: Any) -> Any:
        def handler(self: Any) -> Any:
            with lock:
                check(self.backend, self.params)
            return orig(self)
        return handler

    def new_instance(backend: Any, params: dict[str, Any]) -> None:
        engine, version = str(params.get("Engine") or ""), params.get("EngineVersion")
        cluster = params.get("DBClusterIdentifier")
        if cluster:
            # A member's version is its cluster's ("Amazon Aurora: Not applicable",
            # API_CreateDBInstance.html, EngineVersion): only its class is held.
            found = backend.clusters.get(str(cluster).lower()) or backend.clusters.get(cluster)
            version = getattr(found, "engine_version", None)
        else:
            refuse(version_refused(engine, version))
            resolved(params, engine)
        refuse(class_refused(engine, resolve(engine, version), params.get("DBInstanceClass")))

    def resolved(params: dict[str, Any], engine: str, current: str | None = None) -> None:
        """The full version RDS takes for a major version alone, in place of what was asked. On a
        modification, the major version the resource already runs names its own version (the
        reference does not say; an upgrade is never read into it)."""
        version = params.get("EngineVersion")
        if not version:
            return
        if current and current.startswith(f"{version}."):
            params["EngineVersion"] = current
        else:
            params["EngineVersion"] = resolve(engine, str(version)) or version

    def instance_of(backend: Any, identifier: Any) -> Any:
        name = str(identifier or "").split(":db:")[-1]
        return backend.databases.get(name) or backend.databases.get(name.lower())

    def replica(backend: Any, params: dict[str, Any]) -> None:
        source = instance_of(backend, params.get("SourceDBInstanceIdentifier"))
        if source is not None:
            refuse(class_refused(source.engine, source.engine_version, params.get("DBInstanceClass")))

    def modified_instance(backend: Any, params: dict[str, Any]) -> None:
        db = instance_of(backend, params.get("DBInstanceIdentifier"))
        if db is None:
            return
        version = params.get("EngineVersion")
        if not getattr(db, "db_cluster_identifier", None):
            refuse(version_refused(db.engine, version))
            resolved(params, db.engine, db.engine_version)
        refuse(class_refused(db.engine, resolve(db.engine, version) or db.engine_version,
                             params.get("DBInstanceClass")))

    def restored_instance(backend: Any, params: dict[str, Any]) -> None:
        engine = params.get("Engine")
        if engine:
            refuse(class_refused(str(engine), None, params.get("DBInstanceClass")))

    def new_cluster(backend: Any, params: dict[str, Any]) -> None:
        engine = str(params.get("Engine") or "")
        refuse(version_refused(engine, params.get("EngineVersion")))
        resolved(params, engine)

    def modified_cluster(backend: Any, params: dict[str, Any]) -> None:
        name = str(params.get("DBClusterIdentifier") or "")
        cluster = backend.clusters.get(name) or backend.clusters.get(name.lower())
        if cluster is not None:
            refuse(version_refused(cluster.engine, params.get("EngineVersion")))
            resolved(params, cluster.engine, cluster.engine_version)

    for action, check in (("create_db_instance", new_instance), ("create_db_instance_read_replica", replica),
                          ("modify_db_instance", modified_instance),
                          ("restore_db_instance_from_db_snapshot", restored_instance),
                          ("create_db_cluster", new_cluster), ("modify_db_cluster", modified_cluster)):
        setattr(Response, action, held(getattr(Response, action), check))

    orig_orderable = Backend.describe_orderable_db_instance_options

    def describe_orderable_db_instance_options(self: Any, engine: str, engine_version: str) -> Any:
        if engine in ("aurora-postgresql", "neptune") or engine not in VERSIONS:
            return orig_orderable(self, engine, engine_version)
        return orderable(engine, engine_version, None, [f"{self.region_name}{z}" for z in "abc"])

    orig_orderable_response = Response.describe_orderable_db_instance_options

    def describe_orderable_response(self: Any) -> Any:
        engine = self.params.get("Engine")
        if engine in ("aurora-postgresql", "neptune") or engine not in VERSIONS:
            return orig_orderable_response(self)
        zones = [f"{self.region}{z}" for z in "abc"]
        options = orderable(engine, self.params.get("EngineVersion"), self.params.get("DBInstanceClass"), zones)
        return ActionResult(paging.page(self.params, "OrderableDBInstanceOptions", options))

    def describe_db_engine_versions(self: Any) -> Any:
        return ActionResult(paging.page(self.params, "DBEngineVersions", engine_versions(self.params)))

    Backend.describe_orderable_db_instance_options = describe_orderable_db_instance_options
    Response.describe_orderable_db_instance_options = describe_orderable_response
    Response.describe_db_engine_versions = describe_db_engine_versions
