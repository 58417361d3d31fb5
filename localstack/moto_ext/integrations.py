"""Zero-ETL integrations, which moto 5.2.5 does not have (its ``tests/test_rds/test_integrations.py``
is about managed master passwords, not these), as the API reference describes them
(https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/):

* CreateIntegration (API_CreateIntegration.html): ``IntegrationName`` (1 to 63 characters, a letter
  first, letters, digits and single hyphens, no hyphen last: else InvalidParameterValue; a name
  taken is IntegrationAlreadyExistsFault), ``SourceArn`` (a DB cluster of the account and region:
  else DBClusterNotFoundFault; of an engine zero-ETL takes, Aurora MySQL or Aurora PostgreSQL, and
  ``available``: else InvalidParameterValue, as the call lists no state fault), ``TargetArn`` (an Amazon Redshift namespace:
  ``arn:aws:redshift:<region>:<account>:namespace:<id>`` or
  ``arn:aws:redshift-serverless:<region>:<account>:namespace/<id>``, else InvalidParameterValue),
  ``KMSKeyId``, ``AdditionalEncryptionContext``, ``DataFilter``, ``Description`` and ``Tags``. One
  integration per source and target (a second is IntegrationConflictOperationFault). The answer is
  the integration (API_Integration.html): ``creating`` for the create delay, then ``active``;
  its ARN ``arn:aws:rds:<region>:<account>:integration:<uuid>``; the data filter ``include: *.*``
  when none is given (zero-etl.filtering.html: "By default, ... replicates all").
* DescribeIntegrations (API_DescribeIntegrations.html): all, or one by ``IntegrationIdentifier``
  (its ARN; its name is taken too), in pages (``MaxRecords`` 20 to 100, ``Marker``); one RDS lacks
  is IntegrationNotFoundFault.
* ModifyIntegration (API_ModifyIntegration.html): ``IntegrationName``, ``DataFilter`` and
  ``Description``, only while ``active`` (else InvalidIntegrationStateFault), ``modifying`` for the
  modify delay; DeleteIntegration (API_DeleteIntegration.html) of one not being created, changed or
  deleted, ``deleting`` for the delete delay, then gone.
* The tag calls reach it by its ARN; its tags are in DescribeIntegrations' answer
  (API_Integration.html, Tags).

What is not modelled: no data moves (moto has no Redshift namespaces; the target is checked by its
ARN's form only), so ``syncing`` and ``needs_attention`` are never reported; the source cluster's
parameters zero-ETL needs (binlog settings, logical replication) are not checked; the key is not
checked either.
"""

from __future__ import annotations

import datetime
import re
import time
import uuid
from typing import Any

from . import paging

NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9]*(-[a-zA-Z0-9]+)*$")
TARGET = re.compile(r"^arn:aws[a-z-]*:(redshift:[a-z0-9-]+:\d{12}:namespace:|"
                    r"redshift-serverless:[a-z0-9-]+:\d{12}:namespace/)[A-Za-z0-9-]+$")
ENGINES = ("aurora-mysql", "aurora-postgresql")
# The name each integration ARN stands for, so that the emulator's call counter can count a call
# that names an integration by its ARN under its name.
NAMES: dict[str, str] = {}


class Integration:
    def __init__(self, backend: Any, params: dict[str, Any]):
        self.name = str(params["IntegrationName"])
        self.arn = f"arn:aws:rds:{backend.region_name}:{backend.account_id}:integration:{uuid.uuid4()}"
        self.source_arn = str(params["SourceArn"])
        self.target_arn = str(params["TargetArn"])
        self.kms_key_id = params.get("KMSKeyId")
        self.context = dict(params.get("AdditionalEncryptionContext") or {})
        self.data_filter = params.get("DataFilter") or "include: *.*"
        self.description = params.get("Description")
        self.tags = [{"Key": t.get("Key"), "Value": t.get("Value")} for t in params.get("Tags") or []]
        self.created = datetime.datetime.now(datetime.timezone.utc)
        self.phase: tuple[str, float] | None = None

    @property
    def status(self) -> str:
        if self.phase is not None and time.time() >= self.phase[1]:
            if self.phase[0] == "deleting":
                return "deleted"
            self.phase = None
        return self.phase[0] if self.phase is not None else "active"

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "IntegrationName": self.name,
            "IntegrationArn": self.arn,
            "SourceArn": self.source_arn,
            "TargetArn": self.target_arn,
            "Status": self.status,
            "Tags": list(self.tags),
            "CreateTime": self.created,
            "Errors": [],
            "DataFilter": self.data_filter,
        }
        if self.kms_key_id:
            out["KMSKeyId"] = self.kms_key_id
        if self.context:
            out["AdditionalEncryptionContext"] = dict(self.context)
        if self.description is not None:
            out["Description"] = self.description
        return out


def store(backend: Any) -> dict[str, Integration]:
    """The backend's integrations by ARN."""
    return backend.__dict__.setdefault("_ext_integrations", {})


def install(lock: Any, config: dict[str, float]) -> None:
    from moto.core.responses import ActionResult
    from moto.rds.exceptions import RDSClientError
    from . import tagging  # here: tagging imports this module
    from moto.rds.responses import RDSResponse as Response

    def live(backend: Any) -> list[Integration]:
        for arn, integration in list(store(backend).items()):
            if integration.status == "deleted":
                store(backend).pop(arn, None)
        return list(store(backend).values())

    def found(backend: Any, identifier: str) -> Integration:
        match = [i for i in live(backend) if identifier in (i.arn, i.name)]
        if not match:
            raise RDSClientError("IntegrationNotFoundFault", f"Integration {identifier} not found.")
        return match[0]

    def check_name(name: str) -> None:
        if not (1 <= len(name) <= 63) or not NAME.match(name):
            raise RDSClientError("InvalidParameterValue",
                                 f"Invalid IntegrationName {name}: 1 to 63 letters, digits and hyphens, "
                                 "beginning with a letter, with no two hyphens in a row and none last.")

    def source_cluster(backend: Any, arn: str) -> Any:
        prefix = f":rds:{backend.region_name}:{backend.account_id}:cluster:"
        cluster = backend.clusters.get(arn.split(prefix, 1)[1]) if prefix in arn else None
        if cluster is None:
            raise RDSClientError("DBClusterNotFoundFault", f"DBCluster {arn} not found.")
        # CreateIntegration's errors list no state fault (API_CreateIntegration.html): a source
        # zero-ETL cannot take is a bad parameter (CommonErrors.html, InvalidParameterValue).
        if cluster.engine not in ENGINES:
            raise RDSClientError("InvalidParameterValue",
                                 f"DB cluster {cluster.db_cluster_identifier} runs {cluster.engine}: "
                                 "zero-ETL integrations take Aurora MySQL and Aurora PostgreSQL clusters.")
        if cluster.status != "available":
            raise RDSClientError("InvalidParameterValue",
                                 f"DB cluster {cluster.db_cluster_identifier} is {cluster.status}, not available.")
        return cluster

    def busy(integration: Integration, allowed: tuple[str, ...]) -> None:
        if integration.status not in allowed:
            raise RDSClientError("InvalidIntegrationStateFault",
                                 f"Integration {integration.name} is {integration.status}.")

    def create(self: Any) -> Any:
        p = self.params
        for name in ("IntegrationName", "SourceArn", "TargetArn"):
            if not p.get(name):
                raise RDSClientError("InvalidParameterValue", f"The parameter {name} must be provided.")
        check_name(str(p["IntegrationName"]))
        if not TARGET.match(str(p["TargetArn"])):
            raise RDSClientError("InvalidParameterValue",
                                 f"Invalid TargetArn {p['TargetArn']}: an Amazon Redshift namespace ARN.")
        with lock:
            source_cluster(self.backend, str(p["SourceArn"]))
            if any(i.name == p["IntegrationName"] for i in live(self.backend)):
                raise RDSClientError("IntegrationAlreadyExistsFault",
                                     f"Integration {p['IntegrationName']} already exists.")
            if any((i.source_arn, i.target_arn) == (p["SourceArn"], p["TargetArn"]) for i in live(self.backend)):
                raise RDSClientError("IntegrationConflictOperationFault",
                                     f"An integration between {p['SourceArn']} and {p['TargetArn']} exists.")
            integration = Integration(self.backend, p)
            if config["create_delay"] > 0:
                integration.phase = ("creating", time.time() + config["create_delay"])
            store(self.backend)[integration.arn] = integration
            NAMES[integration.arn] = integration.name
            return ActionResult(integration.describe())

    def modify(self: Any) -> Any:
        p = self.params
        with lock:
            integration = found(self.backend, str(p.get("IntegrationIdentifier") or ""))
            busy(integration, ("active",))
            if p.get("IntegrationName"):
                check_name(str(p["IntegrationName"]))
                integration.name = str(p["IntegrationName"])
                NAMES[integration.arn] = integration.name
            if p.get("DataFilter") is not None:
                integration.data_filter = p["DataFilter"]
            if p.get("Description") is not None:
                integration.description = p["Description"]
            if config["modify_delay"] > 0:
                integration.phase = ("modifying", time.time() + config["modify_delay"])
            return ActionResult(integration.describe())

    def delete(self: Any) -> Any:
        with lock:
            integration = found(self.backend, str(self.params.get("IntegrationIdentifier") or ""))
            busy(integration, ("active", "failed", "needs_attention"))
            integration.phase = ("deleting", time.time() + max(config["delete_delay"], 0.01))
            result = integration.describe()
            if config["delete_delay"] <= 0:
                store(self.backend).pop(integration.arn, None)
            return ActionResult(result)

    def describe(self: Any) -> Any:
        p = self.params
        paging.size(p)
        with lock:
            wanted = p.get("IntegrationIdentifier")
            rows = [found(self.backend, str(wanted))] if wanted else live(self.backend)
            filters = {f["Name"]: list(f.get("Values", [])) for f in p.get("Filters", [])}
            if "integration-identifier" in filters:
                ids = filters["integration-identifier"]
                rows = [i for i in rows if i.arn in ids or i.name in ids]
            rows = sorted(rows, key=lambda i: i.name)
            # The page first, then only its integrations described.
            page = paging.page(p, "Integrations", rows)
            page["Integrations"] = [i.describe() for i in page["Integrations"]]
            return ActionResult(page)

    tagging.route(lock, ":integration:", lambda backend, arn: found(backend, arn))
    Response.create_integration = create
    Response.modify_integration = modify
    Response.delete_integration = delete
    Response.describe_integrations = describe
