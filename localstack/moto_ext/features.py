"""Instance settings moto takes but does not show, as RDS shows them.

moto 5.2.5 keeps most CreateDBInstance and ModifyDBInstance settings, but a few are lost or never
reach DescribeDBInstances:

* Performance Insights: ``EnablePerformanceInsights``, its retention (7 days by default once on)
  and KMS key are dropped at create, and ``PerformanceInsightsEnabled`` is never shown;
* ``NetworkType`` and ``EngineLifecycleSupport`` are dropped at create;
* ``CertificateDetails`` (the CA and when the server certificate expires) is never shown;
* ``DbiResourceId`` is the same for every instance.
"""

from __future__ import annotations

import secrets
import string
from typing import Any

# When the server certificate of each CA expires, as RDS reports it (a fixed date per CA here).
CA_VALID_TILL = {
    "rds-ca-rsa2048-g1": "2061-05-26T00:00:00Z",
    "rds-ca-rsa4096-g1": "2121-05-26T00:00:00Z",
    "rds-ca-ecc384-g1": "2121-05-26T00:00:00Z",
}
DEFAULT_VALID_TILL = "2030-05-26T00:00:00Z"
KEPT_AT_CREATE = ("network_type", "engine_lifecycle_support", "performance_insights_kms_key_id")


_RESOURCE_ID_CHARS = string.ascii_uppercase + string.digits


def on_create(db: Any, db_kwargs: dict[str, Any]) -> None:
    """Keep what moto's create drops."""
    for key in KEPT_AT_CREATE:
        if db_kwargs.get(key) is not None:
            setattr(db, key, db_kwargs[key])
    if db_kwargs.get("enable_performance_insights") is not None:
        db.enable_performance_insights = bool(db_kwargs["enable_performance_insights"])
    if db_kwargs.get("performance_insights_retention_period") is not None:
        db.performance_insights_retention_period = int(db_kwargs["performance_insights_retention_period"])
    if db.__dict__.get("network_type") is None:
        db.network_type = "IPV4"
    # moto gives every instance the same DbiResourceId. AWS: "The AWS Region-unique, immutable
    # identifier for the DB instance" (DBInstance data type, Amazon RDS API Reference,
    # https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DBInstance.html), "db-" and 26
    # upper-case letters and digits; snapshots carry their instance's (API_DBSnapshot.html).
    db.dbi_resource_id = "db-" + "".join(secrets.choice(_RESOURCE_ID_CHARS) for _ in range(26))


def _insights_enabled(self: Any) -> bool:
    return bool(self.__dict__.get("enable_performance_insights"))


def _insights_retention(self: Any) -> int | None:
    if not _insights_enabled(self):
        return None
    return int(self.__dict__.get("_pi_retention") or 7)


def _set_insights_retention(self: Any, value: Any) -> None:
    self.__dict__["_pi_retention"] = value


def _certificate_details(self: Any) -> dict[str, str]:
    ca = getattr(self, "ca_certificate_identifier", None) or "rds-ca-rsa2048-g1"
    return {"CAIdentifier": ca, "ValidTill": CA_VALID_TILL.get(ca, DEFAULT_VALID_TILL)}


def install(DBInstance: Any) -> None:
    DBInstance.performance_insights_enabled = property(_insights_enabled)
    DBInstance.performance_insights_retention_period = property(
        _insights_retention, _set_insights_retention)
    DBInstance.certificate_details = property(_certificate_details)
