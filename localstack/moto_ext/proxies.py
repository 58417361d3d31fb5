"""RDS Proxy as the API reference describes it (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/),
over moto 5.2.5's proxies (which are available at once, cannot be modified, and report every
target healthy):

* CreateDBProxy (API_CreateDBProxy.html): the proxy is ``creating`` for the create delay, then
  ``available`` (API_DBProxy.html: "Status ... available, modifying, incompatible-network,
  insufficient-resource-limits, creating, deleting, suspended..."); each ``Auth`` secret must
  exist in Secrets Manager (InvalidParameterValue otherwise); a taken name is
  DBProxyAlreadyExistsFault.
* ModifyDBProxy (API_ModifyDBProxy.html), which moto lacks: ``Auth``, ``RequireTLS``,
  ``IdleClientTimeout``, ``SecurityGroups``, ``RoleArn``; ``modifying`` for the modify delay; on
  a proxy that is not available, InvalidDBProxyStateFault.
* DeleteDBProxy (API_DeleteDBProxy.html): ``deleting`` for the delete delay, then gone; the
  targets' databases are not touched.
* RegisterDBProxyTargets (API_RegisterDBProxyTargets.html): instances or clusters RDS has
  (DBInstanceNotFoundFault, DBClusterNotFoundFault), of the proxy's engine family
  (InvalidDBInstanceStateFault), not registered already (DBProxyTargetAlreadyRegisteredFault);
  DeregisterDBProxyTargets of one not registered is DBProxyTargetNotFoundFault.
* DescribeDBProxyTargets (API_DescribeDBProxyTargets.html, API_TargetHealth.html): each target
  ``REGISTERING`` for the create delay, then ``AVAILABLE``, or ``UNAVAILABLE`` with reason
  ``AUTH_FAILURE`` when the proxy's IAM role (``RoleArn``) cannot read its Secrets Manager secrets
  (it does not exist, does not trust rds.amazonaws.com, or is not allowed
  secretsmanager:GetSecretValue: ``trust.proxy_role_problem``), or when the secret does not log in
  to the target's real server ("The proxy can't connect ... because the credentials in the secret
  are wrong").
* CreateDBProxyEndpoint (API_CreateDBProxyEndpoint.html), which moto lacks: ``TargetRole``
  READ_WRITE or READ_ONLY, READ_ONLY only for a proxy whose target is an Aurora cluster ("Reader
  endpoints ... with Aurora clusters", rds-proxy-endpoints.html; InvalidParameterCombination
  otherwise); a taken name is DBProxyEndpointAlreadyExistsFault, a proxy not available
  InvalidDBProxyStateFault; ``creating`` for the create delay, then ``available``;
  DescribeDBProxyEndpoints lists the default endpoint (``IsDefault``) and the others, by proxy or
  name (DBProxyEndpointNotFoundFault); DeleteDBProxyEndpoint is ``deleting`` for the delete delay.
  Deleting a proxy deletes its endpoints.
* ModifyDBProxyTargetGroup keeps ``MaxConnectionsPercent``, ``MaxIdleConnectionsPercent``,
  ``ConnectionBorrowTimeout`` and ``SessionPinningFilters`` as given; a ``MaxConnectionsPercent``
  sent alone makes the idle percentage half of it ("The default value is half of the value of
  MaxConnectionsPercent", API_ConnectionPoolConfiguration.html).

The proxy's endpoint is an address of its own from its creation on (it does not change when
targets are registered), that forwards each connection to a registered target's real server (a
cluster's writer), and a READ_ONLY endpoint to one of the cluster's readers, only while the
proxy's secret logs in there: the proxy
authenticates with the secret's credentials, so a secret that lags behind a rotated password
lets no one in ("Setting up database credentials in AWS Secrets Manager for RDS Proxy",
rds-proxy-secrets-arns.html).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from typing import Any

from . import clusters, endpoints, engines, paging, trust

FAMILIES = {"MYSQL": "mariadb", "POSTGRESQL": "postgres"}
PORTS = {"MYSQL": 3306, "POSTGRESQL": 5432, "SQLSERVER": 1433}


def _secret(proxy: Any) -> tuple[str, str] | None:
    """The username and password of the proxy's first Auth secret, as Secrets Manager has it."""
    from moto.secretsmanager.models import secretsmanager_backends

    auth = (proxy.auth or [{}])[0]
    arn = auth.get("SecretArn") if hasattr(auth, "get") else None
    if not arn:
        return None
    try:
        backend = secretsmanager_backends[proxy.account_id][proxy.region]
        value = backend.get_secret_value(arn, None, None)
        parsed = json.loads(value.get("SecretString") or "{}")
        return str(parsed.get("username", "")), str(parsed.get("password", ""))
    except Exception:
        return None


def _logs_in(server: Any, user: str, password: str) -> bool:
    """Whether these credentials log in to the real server (as a client over the network)."""
    if server.family == "mariadb":
        cmd = ["mariadb", "--no-defaults", "-h", server.address, "-P", str(server.port), "-u", user,
               "-e", "SELECT 1"]
        env = {**os.environ, "MYSQL_PWD": password}
    else:
        cmd = [f"{engines.PG_BIN}/psql", "-h", server.address, "-p", str(server.port), "-U", user,
               "-d", "postgres", "-c", "SELECT 1"]
        env = {**os.environ, "PGPASSWORD": password}
    try:
        return subprocess.run(cmd, capture_output=True, env=env, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def server_of(target: Any) -> Any:
    """A target's server: an instance's own, a cluster's writer."""
    if target.type == "TRACKED_CLUSTER":
        return clusters.server_of(target.rds_resource_id)
    return engines.get(target.rds_resource_id)


def health(proxy: Any, target: Any) -> dict[str, str]:
    """A target's health: registering, then available unless the secret fails to log in."""
    if time.time() < target.__dict__.get("_ext_registering_until", 0):
        return {"State": "REGISTERING"}
    secrets = [a.get("SecretArn") for a in (proxy.auth or []) if hasattr(a, "get") and a.get("SecretArn")]
    why = trust.proxy_role_problem(str(proxy.role_arn or ""), secrets)
    if why:
        return {"State": "UNAVAILABLE", "Reason": "AUTH_FAILURE", "Description": why}
    server = server_of(target)
    if server is None or not server.ready:
        return {"State": "AVAILABLE"}
    cached = target.__dict__.get("_ext_health")
    if cached is not None and time.time() - cached[0] < 2:
        return cached[1]
    creds = _secret(proxy)
    if creds is not None and _logs_in(server, *creds):
        result = {"State": "AVAILABLE"}
    else:
        result = {"State": "UNAVAILABLE", "Reason": "AUTH_FAILURE",
                  "Description": "The proxy can't connect to the database: the credentials in its "
                                 "Secrets Manager secret are refused"}
    target.__dict__["_ext_health"] = (time.time(), result)
    return result


def install(lock: Any, config: dict[str, float]) -> None:
    from moto.core.responses import ActionResult, EmptyResult
    from moto.rds import models
    from moto.rds.exceptions import RDSClientError
    from moto.rds.responses import RDSResponse as Response

    Proxy, Target = models.DBProxy, models.DBProxyTarget

    def status_get(self: Any) -> str:
        phase = self.__dict__.get("_ext_phase")
        if phase is not None and time.time() >= phase[1]:
            if phase[0] == "deleting":
                return "deleted"
            self.__dict__["_ext_phase"] = phase = None
        return phase[0] if phase is not None else self.__dict__.get("_ext_status", "available")

    def status_set(self: Any, value: str) -> None:
        self.__dict__["_ext_status"] = value

    def endpoint_get(self: Any) -> str | None:
        forward = self.__dict__.get("_ext_forward")
        if self.status == "creating":
            return None
        return forward.address if forward is not None else self.__dict__.get("_ext_endpoint")

    def endpoint_set(self: Any, value: str) -> None:
        self.__dict__["_ext_endpoint"] = value

    Proxy.status = property(status_get, status_set)
    Proxy.endpoint = property(endpoint_get, endpoint_set)
    Target.target_health = property(lambda self: health(self.__dict__["_ext_proxy"], self)
                                    if "_ext_proxy" in self.__dict__ else {"State": "AVAILABLE"})

    def found(backend: Any, name: str) -> Any:
        proxy = backend.db_proxies.get(name)
        if proxy is None or proxy.status == "deleted":
            backend.db_proxies.pop(name, None)
            raise RDSClientError(
                "DBProxyNotFoundFault",
                f"The specified proxy name {name} doesn't correspond to a proxy owned by your Amazon "
                "Web Services account in the specified Amazon Web Services Region.")
        return proxy

    def available(proxy: Any) -> None:
        if proxy.status != "available":
            raise RDSClientError("InvalidDBProxyStateFault",
                                 f"The DB proxy {proxy.db_proxy_name} is {proxy.status}.")

    def check_auth(backend: Any, auth: list[Any]) -> None:
        from moto.secretsmanager.models import secretsmanager_backends

        sm = secretsmanager_backends[backend.account_id][backend.region_name]
        for a in auth or []:
            arn = a.get("SecretArn") if hasattr(a, "get") else None
            if not arn or not sm._is_valid_identifier(arn):
                raise RDSClientError("InvalidParameterValue", f"Secret {arn} not found in Secrets Manager.")

    orig_create = Response.create_db_proxy

    def create(self: Any) -> Any:
        with lock:
            # moto's own checks first (a taken name, InvalidSubnet: API_CreateDBProxy.html,
            # "Errors"), then the secrets; a refused create leaves no proxy.
            result = orig_create(self)
            proxy = self.backend.db_proxies[self.params["DBProxyName"]]
            try:
                check_auth(self.backend, self.params.get("Auth") or [])
            except RDSClientError:
                del self.backend.db_proxies[self.params["DBProxyName"]]
                raise
            # The endpoint is the proxy's from its creation on ("Endpoint: The endpoint that you
            # can use to connect to the DB proxy", API_DBProxy.html; the proxy keeps it while
            # targets come and go): an address of its own, forwarding to a target once one is
            # registered and reachable, closing connections until then.
            port = PORTS.get(proxy.engine_family, 3306)
            proxy.__dict__["_ext_forward"] = endpoints.Endpoint(
                f"{proxy.db_proxy_name}.proxy", port, lambda: reachable(proxy),
                require_tls=lambda: bool(proxy.require_tls))
            if config["create_delay"] > 0:
                proxy.__dict__["_ext_phase"] = ("creating", time.time() + config["create_delay"])
            return result

    def modify(self: Any) -> Any:
        params = self.params
        with lock:
            proxy = found(self.backend, params.get("DBProxyName") or "")
            available(proxy)
            if params.get("Auth"):
                check_auth(self.backend, params["Auth"])
                proxy.auth = params["Auth"]
            for key, attr in (("RequireTLS", "require_tls"), ("IdleClientTimeout", "idle_client_timeout"),
                              ("RoleArn", "role_arn"), ("SecurityGroups", "vpc_security_group_ids")):
                if params.get(key) is not None:
                    setattr(proxy, attr, params[key])
            if config["modify_delay"] > 0:
                proxy.__dict__["_ext_phase"] = ("modifying", time.time() + config["modify_delay"])
            return ActionResult({"DBProxy": proxy})

    def describe(self: Any) -> Any:
        with lock:
            name = self.params.get("DBProxyName")
            if name:
                found(self.backend, name)
            for n, proxy in list(self.backend.db_proxies.items()):
                if proxy.status == "deleted":
                    self.backend.db_proxies.pop(n, None)
            proxies = [p for p in self.backend.db_proxies.values() if not name or p.db_proxy_name == name]
            return ActionResult({"DBProxies": proxies})

    def delete(self: Any) -> Any:
        with lock:
            proxy = found(self.backend, self.params.get("DBProxyName") or "")
            forwards = [proxy.__dict__.pop("_ext_forward", None)]
            forwards += [e.get("forward") for e in endpoints_of(proxy).values()]
            for forward in forwards:
                if forward is not None:
                    forward.close()
            endpoints_of(proxy).clear()
            if config["delete_delay"] > 0:
                proxy.__dict__["_ext_phase"] = ("deleting", time.time() + config["delete_delay"])
            else:
                self.backend.db_proxies.pop(proxy.db_proxy_name, None)
            return ActionResult({"DBProxy": proxy})

    def reachable(proxy: Any, role: str = "READ_WRITE") -> Any:
        """The server a connection through the proxy goes to: a registered target's (for
        READ_ONLY, one of its cluster's readers), while the proxy's secret logs in there."""
        for target in proxy.proxy_target_groups["default"].targets:
            if health(proxy, target).get("State") == "AVAILABLE":
                server = server_of(target)
                if role == "READ_ONLY" and target.type == "TRACKED_CLUSTER":
                    server = clusters.reader_of(target.rds_resource_id)
                if server is not None and server.ready:
                    return server
        return None

    def endpoints_of(proxy: Any) -> dict[str, dict[str, Any]]:
        return proxy.__dict__.setdefault("_ext_endpoints", {})

    def endpoint_status(e: dict[str, Any]) -> str:
        phase = e.get("phase")
        if phase is not None and time.time() >= phase[1]:
            if phase[0] == "deleting":
                return "deleted"
            e["phase"] = phase = None
        return phase[0] if phase is not None else "available"

    def describe_endpoint(proxy: Any, e: dict[str, Any]) -> dict[str, Any]:
        state = endpoint_status(e)
        forward = e.get("forward")
        return {
            "DBProxyEndpointName": e["name"], "DBProxyEndpointArn": e["arn"],
            "DBProxyName": proxy.db_proxy_name, "Status": state, "VpcId": proxy.vpc_id,
            "VpcSecurityGroupIds": list(proxy.vpc_security_group_ids), "VpcSubnetIds": e["subnets"],
            "Endpoint": None if state == "creating" else (forward.address if forward else e["address"]),
            "TargetRole": e["role"], "IsDefault": False,
        }

    def find_endpoint(backend: Any, name: str) -> tuple[Any, dict[str, Any]]:
        for proxy in backend.db_proxies.values():
            e = endpoints_of(proxy).get(name)
            if e is not None and endpoint_status(e) != "deleted":
                return proxy, e
        raise RDSClientError("DBProxyEndpointNotFoundFault", f"DB proxy endpoint {name} not found.")

    def create_endpoint(self: Any) -> Any:
        params = self.params
        with lock:
            proxy = found(self.backend, params.get("DBProxyName") or "")
            available(proxy)
            name = str(params.get("DBProxyEndpointName") or "")
            if any(name in endpoints_of(p) for p in self.backend.db_proxies.values()):
                raise RDSClientError("DBProxyEndpointAlreadyExistsFault", f"DB proxy endpoint {name} already exists.")
            role = str(params.get("TargetRole") or "READ_WRITE")
            targets = proxy.proxy_target_groups["default"].targets
            if role == "READ_ONLY" and not any(t.type == "TRACKED_CLUSTER" for t in targets):
                raise RDSClientError("InvalidParameterCombination",
                                     "A READ_ONLY endpoint needs a proxy whose target is an Aurora DB cluster.")
            e = {"name": name, "role": role, "subnets": list(params.get("VpcSubnetIds") or proxy.vpc_subnet_ids),
                 "arn": f"arn:aws:rds:{self.backend.region_name}:{self.backend.account_id}:db-proxy-endpoint:prx-endpoint-{name}",
                 "address": f"{name}.endpoint.proxy-{proxy.url_identifier}.{self.backend.region_name}.rds.amazonaws.com",
                 "tags": list(params.get("Tags") or []), "phase": None, "forward": None}
            if any(server_of(t) is not None for t in targets):
                e["forward"] = endpoints.Endpoint(f"{name}.proxy-endpoint", PORTS.get(proxy.engine_family, 3306),
                                                  lambda: reachable(proxy, role),
                                                  require_tls=lambda: bool(proxy.require_tls))
            if config["create_delay"] > 0:
                e["phase"] = ("creating", time.time() + config["create_delay"])
            endpoints_of(proxy)[name] = e
            return ActionResult({"DBProxyEndpoint": describe_endpoint(proxy, e)})

    def describe_endpoints(self: Any) -> Any:
        params = self.params
        paging.size(params)
        with lock:
            proxy_name, name = params.get("DBProxyName"), params.get("DBProxyEndpointName")
            if name:
                find_endpoint(self.backend, name)
            proxies = [found(self.backend, proxy_name)] if proxy_name else list(self.backend.db_proxies.values())
            rows: list[dict[str, Any]] = []
            for proxy in proxies:
                if proxy.status == "deleted":
                    continue
                if not name:
                    rows.append({"DBProxyEndpointName": "default", "DBProxyName": proxy.db_proxy_name,
                                 "Status": proxy.status, "Endpoint": proxy.endpoint, "TargetRole": "READ_WRITE",
                                 "IsDefault": True, "VpcSubnetIds": list(proxy.vpc_subnet_ids)})
                for e in list(endpoints_of(proxy).values()):
                    if endpoint_status(e) == "deleted":
                        endpoints_of(proxy).pop(e["name"], None)
                    elif not name or e["name"] == name:
                        rows.append(describe_endpoint(proxy, e))
            return ActionResult(paging.page(params, "DBProxyEndpoints", rows))

    def delete_endpoint(self: Any) -> Any:
        with lock:
            proxy, e = find_endpoint(self.backend, str(self.params.get("DBProxyEndpointName") or ""))
            if e.get("forward") is not None:
                e["forward"].close()
            e["phase"] = ("deleting", time.time() + max(config["delete_delay"], 0.001))
            return ActionResult({"DBProxyEndpoint": describe_endpoint(proxy, e)})

    def register(self: Any) -> Any:
        params = self.params
        with lock:
            proxy = found(self.backend, params.get("DBProxyName") or "")
            group = proxy.proxy_target_groups["default"]
            registered = {t.rds_resource_id for t in group.targets}
            instances = [str(i) for i in params.get("DBInstanceIdentifiers") or []]
            clusters = [str(c) for c in params.get("DBClusterIdentifiers") or []]
            for identifier in instances + clusters:
                if identifier in registered:
                    raise RDSClientError("DBProxyTargetAlreadyRegisteredFault",
                                         f"{identifier} is already registered with proxy {proxy.db_proxy_name}.")
            for identifier in instances:
                db = self.backend.databases.get(identifier)
                if db is None:
                    raise RDSClientError("DBInstanceNotFoundFault", f"DBInstance {identifier} not found.")
                if engines.family(db.engine) != FAMILIES.get(proxy.engine_family):
                    raise RDSClientError("InvalidDBInstanceStateFault",
                                         f"DB instance {identifier} is not of engine family {proxy.engine_family}.")
            for identifier in clusters:
                if identifier not in self.backend.clusters:
                    raise RDSClientError("DBClusterNotFoundFault", f"DBCluster {identifier} not found.")
            targets = self.backend.register_db_proxy_targets(
                proxy.db_proxy_name, "default", clusters, instances)
            for target in targets:
                target.__dict__["_ext_proxy"] = proxy
                target.__dict__["_ext_registering_until"] = time.time() + config["create_delay"]
                db = self.backend.databases.get(target.rds_resource_id)
                target.port = getattr(db, "port", None) or PORTS.get(proxy.engine_family, 3306)
            return ActionResult({"DBProxyTargets": targets})

    def deregister(self: Any) -> Any:
        params = self.params
        with lock:
            proxy = found(self.backend, params.get("DBProxyName") or "")
            group = proxy.proxy_target_groups["default"]
            wanted = [str(i) for i in (params.get("DBInstanceIdentifiers") or []) +
                      (params.get("DBClusterIdentifiers") or [])]
            registered = {t.rds_resource_id for t in group.targets}
            for identifier in wanted:
                if identifier not in registered:
                    raise RDSClientError("DBProxyTargetNotFoundFault",
                                         f"{identifier} is not registered with proxy {proxy.db_proxy_name}.")
            group.targets = [t for t in group.targets if t.rds_resource_id not in wanted]
            return EmptyResult()

    def modify_group(self: Any) -> Any:
        params = self.params
        with lock:
            proxy = found(self.backend, params.get("DBProxyName") or "")
            group = proxy.proxy_target_groups["default"]
            pool = params.get("ConnectionPoolConfig") or {}
            for key, attr in (("MaxConnectionsPercent", "max_connections"),
                              ("MaxIdleConnectionsPercent", "max_idle_connections"),
                              ("ConnectionBorrowTimeout", "borrow_timeout")):
                if pool.get(key) is not None:
                    setattr(group, attr, int(pool[key]))
            if pool.get("MaxConnectionsPercent") is not None and pool.get("MaxIdleConnectionsPercent") is None:
                group.max_idle_connections = int(pool["MaxConnectionsPercent"]) // 2
            if pool.get("SessionPinningFilters") is not None:
                group.session_pinning_filters = list(pool["SessionPinningFilters"])
            return ActionResult({"DBProxyTargetGroup": group})

    Response.create_db_proxy = create
    Response.modify_db_proxy = modify
    Response.describe_db_proxies = describe
    Response.delete_db_proxy = delete
    Response.register_db_proxy_targets = register
    Response.deregister_db_proxy_targets = deregister
    Response.modify_db_proxy_target_group = modify_group
    Response.create_db_proxy_endpoint = create_endpoint
    Response.describe_db_proxy_endpoints = describe_endpoints
    Response.delete_db_proxy_endpoint = delete_endpoint
