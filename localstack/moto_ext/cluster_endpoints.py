"""Aurora custom cluster endpoints, which moto 5.2.5 does not have, as the API reference describes
them (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/):

* CreateDBClusterEndpoint (API_CreateDBClusterEndpoint.html) of a cluster: ``EndpointType`` READER
  or ANY (else InvalidParameterValue), ``StaticMembers`` and ``ExcludedMembers`` (instances of the
  cluster, else InvalidParameterValue; "ExcludedMembers ... is relevant only if the list of static
  members is empty"), ``Tags``; a cluster RDS lacks is DBClusterNotFoundFault, a taken name
  DBClusterEndpointAlreadyExistsFault. The endpoint is ``creating`` for the create delay, then
  ``available`` (API_DBClusterEndpoint.html: "Status ... available, creating, deleting, inactive,
  modifying"), ``EndpointType`` CUSTOM with its ``CustomEndpointType``, and an ARN
  ``arn:aws:rds:<region>:<account>:cluster-endpoint:<id>`` the tag calls and the Resource Groups
  Tagging API (``rds:cluster-endpoint``) reach;
* ModifyDBClusterEndpoint (API_ModifyDBClusterEndpoint.html) replaces the type and the lists it is
  given, ``modifying`` for the modify delay; DeleteDBClusterEndpoint ``deleting`` for the delete
  delay; either on an endpoint RDS is busy with is InvalidDBClusterEndpointStateFault, on one RDS
  lacks DBClusterEndpointNotFoundFault (DescribeDBClusterEndpoints of one lists nothing);
* DescribeDBClusterEndpoints (API_DescribeDBClusterEndpoints.html) lists the clusters' own WRITER
  and READER endpoints and the custom ones, by ``DBClusterIdentifier``,
  ``DBClusterEndpointIdentifier`` and ``Filters`` (``db-cluster-endpoint-type``,
  ``db-cluster-endpoint-custom-type``, ``db-cluster-endpoint-id``, ``db-cluster-endpoint-status``),
  in pages (``MaxRecords`` 20 to 100, ``Marker``).

With real engines (``clusters.py``) a custom endpoint is an address of its own that forwards each
connection to one of the members it may reach, one after another: its static members, or every
member but the excluded ones; for READER only readers ("Amazon Aurora endpoint connections",
Aurora.Overview.Endpoints.html#Aurora.Endpoints.Custom). A deleted endpoint closes its address.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from . import clusters, endpoints, paging

TYPES = ("READER", "ANY")


class ClusterEndpoint:
    def __init__(self, backend: Any, identifier: str, cluster: Any, custom_type: str,
                 static: list[str], excluded: list[str], tags: list[dict[str, str]]):
        self.backend = backend
        self.identifier = identifier
        self.cluster = cluster
        self.custom_type = custom_type
        self.static = static
        self.excluded = excluded
        self.tags = tags
        digest = hashlib.sha1(f"{backend.account_id}{identifier}".encode()).hexdigest()[:12]
        self.resource_id = f"cluster-endpoint-{digest}"
        self.arn = f"arn:aws:rds:{backend.region_name}:{backend.account_id}:cluster-endpoint:{identifier}"
        self.name = f"{identifier}.cluster-custom-{digest}.{backend.region_name}.rds.amazonaws.com"
        self.phase: tuple[str, float] | None = None
        self.forward: endpoints.Endpoint | None = None
        self._turn = 0

    @property
    def status(self) -> str:
        if self.phase is not None and time.time() >= self.phase[1]:
            if self.phase[0] == "deleting":
                return "deleted"
            self.phase = None
        return self.phase[0] if self.phase is not None else "available"

    def reachable(self) -> Any:
        """The next member server a connection goes to, or None."""
        topology = clusters.TOPOLOGY.get(self.cluster.db_cluster_identifier)
        if topology is None:
            return None
        members = topology["members"]
        names = [m for m in sorted(members) if (m in self.static if self.static else m not in self.excluded)]
        if self.custom_type == "READER":
            names = [m for m in names if members[m] != topology["primary"]]
        servers = [s for s in (clusters.engines.get(members[m]) for m in names) if s is not None and s.ready]
        if not servers:
            return None
        self._turn += 1
        return servers[self._turn % len(servers)]

    def describe(self) -> dict[str, Any]:
        address = self.forward.address if self.forward is not None else self.name
        return {
            "DBClusterEndpointIdentifier": self.identifier,
            "DBClusterIdentifier": self.cluster.db_cluster_identifier,
            "DBClusterEndpointResourceIdentifier": self.resource_id,
            "Endpoint": address if self.status != "creating" else None,
            "Status": self.status,
            "EndpointType": "CUSTOM",
            "CustomEndpointType": self.custom_type,
            "StaticMembers": list(self.static),
            "ExcludedMembers": list(self.excluded),
            "DBClusterEndpointArn": self.arn,
        }


def store(backend: Any) -> dict[str, ClusterEndpoint]:
    return backend.__dict__.setdefault("_ext_cluster_endpoints", {})


def tagged(backend: Any) -> list[tuple[str, str, dict[str, str]]]:
    """(type, ARN, tags) of the custom endpoints, for the Resource Groups Tagging API."""
    return [("rds:cluster-endpoint", e.arn, {t["Key"]: t["Value"] for t in e.tags})
            for e in list(store(backend).values()) if e.status != "deleted"]


def install(lock: Any, config: dict[str, float]) -> None:
    from moto.core.responses import ActionResult
    from moto.rds.exceptions import RDSClientError
    from . import tagging  # here: tagging imports this module
    from moto.rds.responses import RDSResponse as Response

    def members_of(cluster: Any) -> set[str]:
        return {m.db_instance_identifier for m in getattr(cluster, "_members", [])}

    def listed(params: dict[str, Any], key: str) -> list[str]:
        value = params.get(key) or []
        return [str(v).lower() for v in (value if isinstance(value, list) else [value])]

    def check(cluster: Any, custom_type: str, static: list[str], excluded: list[str]) -> None:
        if custom_type not in TYPES:
            raise RDSClientError("InvalidParameterValue",
                                 f"Invalid endpoint type {custom_type}: READER or ANY.")
        unknown = [m for m in static + excluded if m not in members_of(cluster)]
        if unknown:
            raise RDSClientError("InvalidParameterValue",
                                 f"DB instance {unknown[0]} is not a member of DB cluster "
                                 f"{cluster.db_cluster_identifier}.")

    def found(backend: Any, identifier: str) -> ClusterEndpoint:
        endpoint = store(backend).get(identifier.lower())
        if endpoint is None or endpoint.status == "deleted":
            raise RDSClientError("DBClusterEndpointNotFoundFault",
                                 f"DBClusterEndpoint {identifier} not found.")
        return endpoint

    def busy(endpoint: ClusterEndpoint) -> None:
        if endpoint.status != "available":
            raise RDSClientError("InvalidDBClusterEndpointStateFault",
                                 f"DBClusterEndpoint {endpoint.identifier} is {endpoint.status}.")

    def create(self: Any) -> Any:
        params = self.params
        with lock:
            identifier = str(params["DBClusterEndpointIdentifier"]).lower()
            cluster = self.backend.clusters.get(str(params["DBClusterIdentifier"]).lower())
            if cluster is None:
                raise RDSClientError("DBClusterNotFoundFault",
                                     f"DBCluster {params['DBClusterIdentifier']} not found.")
            existing = store(self.backend).get(identifier)
            if existing is not None and existing.status != "deleted":
                raise RDSClientError("DBClusterEndpointAlreadyExistsFault",
                                     f"DBClusterEndpoint {identifier} already exists.")
            custom_type = str(params.get("EndpointType") or "").upper()
            static, excluded = listed(params, "StaticMembers"), listed(params, "ExcludedMembers")
            check(cluster, custom_type, static, excluded)
            tags = [{"Key": t.get("Key"), "Value": t.get("Value")} for t in params.get("Tags") or []]
            endpoint = ClusterEndpoint(self.backend, identifier, cluster, custom_type, static, excluded, tags)
            if clusters.TOPOLOGY.get(cluster.db_cluster_identifier) is not None:
                endpoint.forward = endpoints.Endpoint(f"{identifier}.custom", cluster.port, endpoint.reachable)
            if config["create_delay"] > 0:
                endpoint.phase = ("creating", time.time() + config["create_delay"])
            store(self.backend)[identifier] = endpoint
            return ActionResult(endpoint.describe())

    def modify(self: Any) -> Any:
        params = self.params
        with lock:
            endpoint = found(self.backend, str(params["DBClusterEndpointIdentifier"]))
            busy(endpoint)
            custom_type = str(params.get("EndpointType") or endpoint.custom_type).upper()
            static = listed(params, "StaticMembers") if "StaticMembers" in params else endpoint.static
            excluded = listed(params, "ExcludedMembers") if "ExcludedMembers" in params else endpoint.excluded
            check(endpoint.cluster, custom_type, static, excluded)
            endpoint.custom_type, endpoint.static, endpoint.excluded = custom_type, static, excluded
            if config["modify_delay"] > 0:
                endpoint.phase = ("modifying", time.time() + config["modify_delay"])
            return ActionResult(endpoint.describe())

    def delete(self: Any) -> Any:
        with lock:
            endpoint = found(self.backend, str(self.params["DBClusterEndpointIdentifier"]))
            busy(endpoint)
            if endpoint.forward is not None:
                endpoint.forward.close()
            endpoint.phase = ("deleting", time.time() + config["delete_delay"])
            result = endpoint.describe()
            if config["delete_delay"] <= 0:
                store(self.backend).pop(endpoint.identifier, None)
            return ActionResult(result)

    def own_endpoints(cluster: Any) -> list[dict[str, Any]]:
        return [{"DBClusterEndpointIdentifier": cluster.db_cluster_identifier,
                 "DBClusterIdentifier": cluster.db_cluster_identifier,
                 "Endpoint": address, "Status": "available", "EndpointType": kind}
                for kind, address in (("WRITER", cluster.endpoint), ("READER", cluster.reader_endpoint))
                if address]

    def describe(self: Any) -> Any:
        params = self.params
        paging.size(params)
        with lock:
            filters = {f["Name"]: [str(v).lower() for v in f.get("Values", [])]
                       for f in params.get("Filters", [])}
            rows: list[dict[str, Any]] = []
            for cluster in self.backend.clusters.values():
                rows.extend(own_endpoints(cluster))
            for endpoint in list(store(self.backend).values()):
                if endpoint.status == "deleted":
                    store(self.backend).pop(endpoint.identifier, None)
                    continue
                rows.append(endpoint.describe())
            wanted = params.get("DBClusterEndpointIdentifier")
            cluster_id = params.get("DBClusterIdentifier")

            def keep(row: dict[str, Any]) -> bool:
                checks = [
                    (wanted, row["DBClusterEndpointIdentifier"]),
                    (cluster_id, row["DBClusterIdentifier"]),
                ]
                if any(w is not None and str(w).lower() != v for w, v in checks):
                    return False
                pairs = (("db-cluster-endpoint-type", row["EndpointType"]),
                         ("db-cluster-endpoint-custom-type", row.get("CustomEndpointType")),
                         ("db-cluster-endpoint-id", row["DBClusterEndpointIdentifier"]),
                         ("db-cluster-endpoint-status", row["Status"]))
                return all(name not in filters or str(value).lower() in filters[name] for name, value in pairs)

            # An endpoint identifier RDS does not have lists nothing: DescribeDBClusterEndpoints
            # answers only DBClusterNotFoundFault (API_DescribeDBClusterEndpoints.html, Errors).
            rows = [r for r in rows if keep(r)]
            rows.sort(key=lambda r: (r["DBClusterEndpointIdentifier"], r["EndpointType"]))
            return ActionResult(paging.page(params, "DBClusterEndpoints", rows))

    tagging.route(lock, ":cluster-endpoint:", lambda backend, arn: found(backend, arn.split(":cluster-endpoint:")[-1]))
    Response.create_db_cluster_endpoint = create
    Response.modify_db_cluster_endpoint = modify
    Response.delete_db_cluster_endpoint = delete
    Response.describe_db_cluster_endpoints = describe
