"""CloudTrail for the test bed: after each mutating RDS call moto serves, the EventBridge event
CloudTrail would send ("AWS API Call via CloudTrail", source ``aws.rds``) is put on moto's default
event bus, so a rule with an SQS target delivers it, as in AWS.

The detail is a CloudTrail record: ``eventSource``, ``eventName``, ``awsRegion``, ``readOnly``
false, ``requestParameters`` with CloudTrail's names (``dBInstanceIdentifier``, ``resourceName``...;
the master password ``HIDDEN_DUE_TO_SECURITY_REASONS``), ``responseElements`` with the instance's
identifier and ARN, and ``userAgent``. A failed call carries ``errorCode`` and ``errorMessage``.

Tests drop events to prove the safety net: ``POST /_rds_ext/drop-events?identifier=ID&count=N``
drops the next N events naming that identifier.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter
from typing import Any

LOCK = threading.Lock()
# identifier -> how many of its next events to drop
DROP: Counter[str] = Counter()
# what was put on the bus, and what was dropped (for the tests' own checks)
SENT: Counter[str] = Counter()
HIDDEN = "HIDDEN_DUE_TO_SECURITY_REASONS"
SECRET_PARAMETERS = {"masterUserPassword", "newMasterUserPassword"}


def drop(identifier: str, count: int) -> None:
    with LOCK:
        DROP[identifier.lower()] += count


def _cloudtrail_name(name: str) -> str:
    """RDS's request parameter names as CloudTrail writes them: DBInstanceIdentifier (or moto's
    db_instance_identifier) -> dBInstanceIdentifier, ResourceName -> resourceName."""
    if "_" in name or name.islower():
        words = name.split("_")
        name = "".join("DB" if w == "db" else w[:1].upper() + w[1:] for w in words)
    if name.startswith("DB"):
        return "dB" + name[2:]
    return name[:1].lower() + name[1:]


def _plain(value: Any) -> Any:
    """moto's parsed request values (its own dict and list types) as plain JSON values."""
    if hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _parameters(params: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in params.items():
        if key in ("Action", "Version"):
            continue
        name = _cloudtrail_name(key)
        out[name] = HIDDEN if name in SECRET_PARAMETERS else _plain(value)
    return out


def _identifier(params: dict[str, Any]) -> str:
    """The instance a call names, from its CloudTrail parameters."""
    for key in ("newDBInstanceIdentifier", "dBInstanceIdentifier", "targetDBInstanceIdentifier"):
        if params.get(key):
            return str(params[key]).lower()
    arn = str(params.get("resourceName") or "")
    if ":db:" in arn:
        return arn.split(":db:", 1)[1].lower()
    return ""


def record(response: Any, action: str, request: dict[str, Any], status: int) -> None:
    """Puts the CloudTrail event of one served mutating RDS call (its request parameters as the
    request came in) on the default bus."""
    try:
        from moto.events.models import events_backends

        params = _parameters(request)
        region = response.region
        account = response.current_account
        identifier = _identifier(params)
        cluster = str(params.get("dBClusterIdentifier") or "").lower() if not identifier else ""
        with LOCK:
            if identifier and DROP[identifier] > 0:
                DROP[identifier] -= 1
                SENT["dropped"] += 1
                return
        detail: dict[str, Any] = {
            "eventVersion": "1.09",
            "userIdentity": {"type": "IAMUser", "accountId": account},
            "eventTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "eventSource": "rds.amazonaws.com",
            "eventName": action,
            "awsRegion": region,
            "userAgent": (response.headers or {}).get("User-Agent", ""),
            "requestParameters": params,
            "responseElements": None,
            "eventID": str(uuid.uuid4()),
            "readOnly": False,
            "eventType": "AwsApiCall",
            "recipientAccountId": account,
        }
        if status >= 400:
            detail["errorCode"] = "Client.Error"
            detail["errorMessage"] = "the call failed"
        elif identifier:
            detail["responseElements"] = {
                "dBInstanceIdentifier": identifier,
                "dBInstanceArn": f"arn:aws:rds:{region}:{account}:db:{identifier}",
            }
        elif cluster:
            # A cluster call's response names the cluster (the DBCluster data type's
            # dBClusterIdentifier and dBClusterArn), as CloudTrail records it.
            detail["responseElements"] = {
                "dBClusterIdentifier": cluster,
                "dBClusterArn": f"arn:aws:rds:{region}:{account}:cluster:{cluster}",
            }
        events_backends[account][region].put_events([{
            "Source": "aws.rds",
            "DetailType": "AWS API Call via CloudTrail",
            "Detail": json.dumps(detail),
            "Resources": [],
        }])
        with LOCK:
            SENT["sent"] += 1
    except Exception as e:  # CloudTrail must never break serving
        print(f"moto_ext cloudtrail: {e!r}", flush=True)
