"""Blue/green deployments of Aurora DB clusters, where they differ from those of instances
(``blue_green.py`` runs both).

moto 5.2.5 makes a green cluster and its members from blue's, but its switchover renames the
clusters alone (each member keeps its name and the endpoints stay where they were), and it checks
nothing. Here, as the Amazon RDS API Reference (API_CreateBlueGreenDeployment.html) and the Aurora
user guide ("Overview of Amazon Aurora Blue/Green Deployments", blue-green-deployments-overview.html;
"Switching a blue/green deployment", blue-green-deployments-switching.html) say:

* the source cluster must be ``available`` (InvalidDBClusterStateFault) and an Aurora MySQL or
  Aurora PostgreSQL one (SourceClusterNotSupportedFault, "Supported Regions and Aurora DB engines
  for Blue/Green Deployments"), prepared as RDS asks (``blue_green_prerequisites.py``: a custom DB
  cluster parameter group with binlog_format, or rds.logical_replication, on, the writer in sync);
* a major version upgrade (TargetEngineVersion of another major version) of a cluster whose DB
  cluster parameter group, or a member's DB parameter group, is custom needs
  TargetDBClusterParameterGroupName, or TargetDBParameterGroupName: RDS refuses it otherwise with
  InvalidParameterCombination, "The current DB instance parameter group <name> is custom. You must
  explicitly specify a new DB instance parameter group, either default or custom, for the engine
  version upgrade." (the words RDS answers ModifyDBCluster with on a major upgrade, and the
  reason ACK community #2778 asks for the field);
* green is ``<blue>-green-<6 letters>`` with members ``<member>-green-<6 letters>``, each carrying
  its blue member's tags ("copies ... tags", blue-green-deployments-creating.html);
* the switchover renames blue's cluster and each of its members ``<name>-old1``, and green's
  cluster and members take blue's names; the cluster's writer and reader endpoints (their names)
  then reach green ("the endpoints of the green environment's ... are renamed", "Switchover
  actions").

With real engines, green's writer is a read-only replica of blue's writer from the moment it is
made, and the switchover runs the steps ``blue_green.py`` runs for instances on the two writers.
The members' own endpoints are addresses of their servers here: after the switchover a member's
name reaches green's member at green's address (on RDS the DNS name moves; the cluster endpoints,
which the operator's Secret names, keep their addresses here too).
"""

from __future__ import annotations

from typing import Any

from . import blue_green_prerequisites, clusters, scope

# Green's names (cluster and members) -> blue's.
BLUE_OF: dict[str, str] = scope.Scoped()
# The source cluster a CreateBlueGreenDeployment is making green of (its first green name is the
# cluster's).
MAKING: dict[str, str | None] = {"source": None}
ENGINES = ("aurora-mysql", "aurora-postgresql")


def is_cluster(arn: str | None) -> bool:
    return ":cluster:" in (arn or "")


def identifier(arn: str) -> str:
    return arn.rsplit(":", 1)[-1]


def _major(version: str | None) -> str:
    # Aurora MySQL 8.0.mysql_aurora.3.08.0 -> 8.0; Aurora PostgreSQL 16.4 -> 16.
    v = version or ""
    return v.split(".mysql_aurora.")[0] if ".mysql_aurora." in v else v.split(".")[0]


def check(backend: Any, source: str, kwargs: dict[str, Any]) -> Any:
    """The source cluster, once RDS would make a deployment of it; the error it answers otherwise."""
    from moto.rds.exceptions import DBClusterNotFoundError, RDSClientError

    cluster = backend.clusters.get(identifier(source))
    if cluster is None:
        raise DBClusterNotFoundError(identifier(source))
    if cluster.engine not in ENGINES:
        raise RDSClientError(
            "SourceClusterNotSupportedFault",
            f"The source DB cluster {cluster.db_cluster_identifier} isn't supported for a blue/green "
            f"deployment: engine {cluster.engine}.")
    if cluster.status != "available":
        raise RDSClientError(
            "InvalidDBClusterStateFault",
            f"DB cluster {cluster.db_cluster_identifier} is not in the available state (it is {cluster.status}).")
    # A master password in Secrets Manager is refused first, by moto (blue_green.py).
    refused = None if hasattr(cluster, "master_user_secret") else blue_green_prerequisites.cluster(backend, cluster)
    if refused:
        raise RDSClientError("SourceClusterNotSupportedFault", refused)
    target = kwargs.get("target_engine_version")
    if target and _major(target) != _major(cluster.engine_version):
        group = str(cluster.db_cluster_parameter_group or "")
        if group and not group.startswith("default.") and not kwargs.get("target_db_cluster_parameter_group_name"):
            raise RDSClientError(
                "InvalidParameterCombination",
                f"The current DB cluster parameter group {group} is custom. You must explicitly specify "
                "a new DB cluster parameter group, either default or custom, for the engine version upgrade.")
        for member in cluster._members:
            group = str(member.db_parameter_group_name or "")
            if group and not group.startswith("default.") and not kwargs.get("target_db_parameter_group_name"):
                raise RDSClientError(
                    "InvalidParameterCombination",
                    f"The current DB instance parameter group {group} is custom. You must explicitly "
                    "specify a new DB instance parameter group, either default or custom, for the engine "
                    "version upgrade.")
    MAKING["source"] = cluster.db_cluster_identifier
    return cluster


def named_green(blue: str, green: str) -> None:
    """moto names green `green` after `blue`: the first of a cluster deployment is the cluster, whose
    server then replicates blue's writer."""
    BLUE_OF[green] = blue
    if MAKING["source"] == blue:
        MAKING["source"] = None
        source = clusters.server_of(blue)
        if source is not None and source.ready:
            clusters.SECONDARIES[green] = source


def done() -> None:
    """A CreateBlueGreenDeployment of a cluster answered (or refused): nothing more is green."""
    MAKING["source"] = None
    for green in BLUE_OF:
        clusters.SECONDARIES.pop(green, None)


def made(backend: Any, bg: Any) -> None:
    """After moto made green: each green member carries its blue member's tags (moto gives them the
    cluster's)."""
    green = backend.clusters.get(identifier(bg.target))
    if green is None:
        return
    for member in green._members:
        blue = backend.databases.get(BLUE_OF.get(member.db_instance_identifier, ""))
        if blue is not None:
            member.tags = [dict(t) for t in blue.tags or []]


def green_of(backend: Any, bg: Any) -> Any:
    return backend.clusters.get(identifier(bg.target))


def ready(green: Any) -> bool:
    """Green is made: the cluster and every member available."""
    return green.status == "available" and all(m.status == "available" for m in green._members)


def servers(bg: Any) -> tuple[Any, Any, tuple[str, str]]:
    blue = identifier(bg.source)
    green = identifier(bg.target)
    return clusters.server_of(blue), clusters.server_of(green), (blue, green)


def switch(backend: Any, bg: Any) -> None:
    """The renames of a switchover: blue's cluster and members become `-old1`, green's take blue's
    names; the deployment's Source and Target then name the old cluster and the new one."""
    blue, green = identifier(bg.source), identifier(bg.target)
    old = f"{blue}-old1"
    blue_members = [m.db_instance_identifier for m in backend.clusters[blue]._members]
    green_members = [m.db_instance_identifier for m in backend.clusters[green]._members]
    _rename(backend, blue, old, {m: f"{m}-old1" for m in blue_members})
    _rename(backend, green, blue, {m: BLUE_OF.get(m, m) for m in green_members})
    clusters.close_endpoints(green)
    bg.source = backend.clusters[old].db_cluster_arn
    bg.target = backend.clusters[blue].db_cluster_arn


def _rename(backend: Any, frm: str, to: str, members: dict[str, str]) -> None:
    cluster = backend.clusters.pop(frm)
    instances = [backend.databases[m] for m in members if m in backend.databases]
    cluster.db_cluster_identifier = to
    backend.clusters[to] = cluster
    cluster.__dict__["_ext_gone"] = (backend.clusters, to)
    for db in instances:
        backend.databases.pop(db.db_instance_identifier, None)
        db.db_instance_identifier = members[db.db_instance_identifier]
        db.db_cluster_identifier = to
        backend.databases[db.db_instance_identifier] = db
    clusters.rename(frm, to, members)
