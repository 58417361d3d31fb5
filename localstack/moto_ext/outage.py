"""An AWS outage in one account, for the location breaker's tests (``crate::breaker``).

While an outage is on, every call of the services an operator calls in a location (RDS, and the
Resource Groups Tagging and Secrets Manager calls beside it) signed by a key of the chosen account
is answered as AWS answers a throttled or failing call, without reaching moto, and counted. STS
and IAM still answer, as they are other services.

``POST /_rds_ext/outage?seconds=30&account=333333333333&faults=throttle,unavailable`` starts one
(``account``: every account when absent; ``faults``: answered in turn, default ``throttle``);
``GET /_rds_ext/outage`` says whether one is on and how many calls each account had refused.

The answers are AWS's, by protocol:
- RDS (Query protocol): an ``ErrorResponse`` document with ``Code`` Throttling (HTTP 400),
  ServiceUnavailable (503) or InternalFailure (500), as the RDS API Reference's Common Errors page
  lists them (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/CommonErrors.html).
- Tagging and Secrets Manager (JSON protocol): ``{"__type": "ThrottlingException"}`` (400),
  ``ServiceUnavailableException`` (503) or ``InternalServiceError`` (500), with the
  ``x-amzn-ErrorType`` header.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from typing import Any

LOCK = threading.Lock()
STATE: dict[str, Any] = {"until": 0.0, "account": None, "faults": ["throttle"], "turn": 0}
REFUSED: Counter[str] = Counter()

SERVICES = {"rds", "tagging", "secretsmanager"}
QUERY = {
    "throttle": ("400 Bad Request", "Sender", "Throttling", "Rate exceeded"),
    "unavailable": ("503 Service Unavailable", "Receiver", "ServiceUnavailable", "Service unavailable"),
    "internal": ("500 Internal Server Error", "Receiver", "InternalFailure", "Internal failure"),
}
JSON = {
    "throttle": ("400 Bad Request", "ThrottlingException"),
    "unavailable": ("503 Service Unavailable", "ServiceUnavailableException"),
    "internal": ("500 Internal Server Error", "InternalServiceError"),
}
CREDENTIAL = re.compile(r"Credential=([^/]+)/[0-9]+/[^/]+/([a-z0-9-]+)/")


def control(method: str, query: dict[str, str]) -> dict[str, Any]:
    """``/_rds_ext/outage``: start one (POST), or say how it stands."""
    with LOCK:
        if method == "POST":
            STATE["until"] = time.time() + float(query.get("seconds", "30"))
            STATE["account"] = query.get("account") or None
            faults = [f for f in query.get("faults", "throttle").split(",") if f in QUERY]
            STATE["faults"] = faults or ["throttle"]
            STATE["turn"] = 0
        return {"on": time.time() < STATE["until"], "account": STATE["account"], "refused": dict(REFUSED)}


def answer(environ: dict[str, Any], start_response: Any) -> list[bytes] | None:
    """The failing answer to this request while an outage covers it; None otherwise."""
    if time.time() >= STATE["until"]:
        return None
    found = CREDENTIAL.search(environ.get("HTTP_AUTHORIZATION", ""))
    if not found or found.group(2) not in SERVICES:
        return None
    from moto.iam.models import get_account_id_from

    account = get_account_id_from(found.group(1))
    with LOCK:
        if STATE["account"] not in (None, account) or time.time() >= STATE["until"]:
            return None
        fault = STATE["faults"][STATE["turn"] % len(STATE["faults"])]
        STATE["turn"] += 1
        REFUSED[account] += 1
    if found.group(2) == "rds":
        status, kind, code, message = QUERY[fault]
        body = (
            '<ErrorResponse xmlns="http://rds.amazonaws.com/doc/2014-10-31/"><Error>'
            f"<Type>{kind}</Type><Code>{code}</Code><Message>{message}</Message></Error>"
            "<RequestId>outage</RequestId></ErrorResponse>"
        ).encode()
        headers = [("Content-Type", "text/xml")]
    else:
        status, code = JSON[fault]
        body = ('{"__type": "%s", "message": "outage"}' % code).encode()
        headers = [("Content-Type", "application/x-amz-json-1.1"), ("x-amzn-ErrorType", code)]
    start_response(status, headers + [("Content-Length", str(len(body)))])
    return [body]
