"""The RDS Data API of an Aurora cluster ("Using the Amazon RDS Data API", data-api.html;
API_EnableHttpEndpoint.html; the rds-data ExecuteStatement API), where moto 5.2.5 lets only an
Aurora Serverless v1 cluster have the HTTP endpoint, has no EnableHttpEndpoint or
DisableHttpEndpoint, and answers ExecuteStatement from a queue of canned results:

- **The endpoint.** EnableHttpEndpoint and DisableHttpEndpoint (by ResourceArn) turn it on and off
  for an Aurora cluster, whatever its mode (the Data API serves Aurora PostgreSQL and Aurora MySQL,
  provisioned and Serverless v2); so does CreateDBCluster's EnableHttpEndpoint. A cluster that is
  not ``available`` is ``InvalidResourceStateFault``; one that does not exist
  ``ResourceNotFoundFault``.
- **ExecuteStatement** on a cluster with a real MariaDB server (aurora-mysql) runs the SQL there, as
  the user of the Secrets Manager secret named by secretArn, in ``database``: its rows come back as
  ``records`` of ``stringValue`` (or ``isNull``) fields with ``columnMetadata`` names, a change's
  count as ``numberOfRecordsUpdated``. The endpoint off is ``BadRequestException`` ("HttpEndpoint
  is not enabled"); the engine's refusal (a bad password, bad SQL) is ``BadRequestException`` with
  its message.
- **Not done here:** typed values (every value is a string), transactions (BeginTransaction...),
  BatchExecuteStatement, and aurora-postgresql clusters, which keep moto's canned results.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from . import clusters, scope


def _cluster_of(backend: Any, arn: str) -> Any:
    identifier = arn.rsplit(":", 1)[-1]
    return backend.clusters.get(identifier)


def _bad_request(message: str) -> Exception:
    from moto.core.exceptions import JsonRESTError

    return JsonRESTError("BadRequestException", message)


def _records(out: str) -> tuple[list[dict[str, str]], list[list[dict[str, Any]]]]:
    lines = out.rstrip("\n").split("\n") if out.strip() else []
    if not lines:
        return [], []
    names = lines[0].split("\t")
    rows = [[{"isNull": True} if v == "NULL" else {"stringValue": v} for v in line.split("\t")]
            for line in lines[1:]]
    return [{"name": n, "label": n} for n in names], rows


def execute(server: Any, credentials: dict[str, str], database: str | None, sql: str) -> dict[str, Any]:
    """Runs one statement as the secret's user; the Data API's answer."""
    reads = sql.lstrip().split(None, 1)[0].lower() in ("select", "show", "with", "describe", "explain")
    statement = sql if reads else f"{sql.rstrip().rstrip(';')}; SELECT ROW_COUNT()"
    cmd = ["mariadb", "--no-defaults", "-h", server.address, "-P", str(server.port),
           "-u", credentials["username"], f"-p{credentials['password']}", "--batch", "-e", statement]
    if database:
        cmd.append(database)
    done = subprocess.run(cmd, capture_output=True, timeout=30)
    if done.returncode != 0:
        raise _bad_request(done.stderr.decode(errors="replace").strip()[-400:])
    out = done.stdout.decode(errors="replace")
    if not reads:
        count = out.strip().split("\n")[-1]
        return {"records": [], "numberOfRecordsUpdated": int(count) if count.lstrip("-").isdigit() else 0}
    columns, records = _records(out)
    return {"records": records, "columnMetadata": columns, "numberOfRecordsUpdated": 0}


def install(lock: Any) -> None:
    from moto.core.responses import ActionResult
    from moto.rds.exceptions import RDSClientError
    from moto.rds.models import DBCluster
    from moto.rds.responses import RDSResponse
    from moto.rdsdata.responses import RDSDataServiceResponse

    def set_endpoint(self: Any, val: Any) -> None:
        # The Data API serves Aurora PostgreSQL and Aurora MySQL, provisioned and Serverless v2
        # (data-api.html); moto allowed Serverless v1 only.
        self._enable_http_endpoint = bool(val) and str(self.engine or "").startswith("aurora")

    DBCluster.enable_http_endpoint = property(lambda self: self._enable_http_endpoint, set_endpoint)

    def toggle(self: Any, on: bool) -> Any:
        arn = self.params.get("ResourceArn") or ""
        with lock:
            cluster = _cluster_of(self.backend, arn)
            if cluster is None:
                raise RDSClientError("ResourceNotFoundFault", f"The resource {arn} doesn't exist.")
            if cluster.status != "available":
                raise RDSClientError("InvalidResourceStateFault",
                                     f"DB cluster {cluster.db_cluster_identifier} is {cluster.status}, not available.")
            cluster.enable_http_endpoint = on
        return ActionResult({"ResourceArn": arn, "HttpEndpointEnabled": cluster.http_endpoint_enabled})

    RDSResponse.enable_http_endpoint = lambda self: toggle(self, True)
    RDSResponse.disable_http_endpoint = lambda self: toggle(self, False)

    orig_execute = RDSDataServiceResponse.execute_statement

    def execute_statement(self: Any) -> str:
        from moto.rds.models import rds_backends
        from moto.secretsmanager.models import secretsmanager_backends

        arn = self._get_param("resourceArn") or ""
        rds = rds_backends[self.current_account][self.region]
        cluster = _cluster_of(rds, arn)
        server = None
        if cluster is not None:
            # The cluster's servers are kept by its own account and region (scope.py), which an
            # rds-data request does not set.
            with scope.of(cluster):
                server = clusters.server_of(cluster.db_cluster_identifier)
        if cluster is not None and not cluster.http_endpoint_enabled:
            raise _bad_request(f"HttpEndpoint is not enabled for resource {arn}")
        if server is None or server.family != "mariadb":
            return orig_execute(self)
        secrets = secretsmanager_backends[self.current_account][self.region]
        value = secrets.get_secret_value(self._get_param("secretArn"), None, None)
        credentials = json.loads(value["SecretString"])
        return json.dumps(execute(server, credentials, self._get_param("database"), self._get_param("sql")))

    RDSDataServiceResponse.execute_statement = execute_statement
