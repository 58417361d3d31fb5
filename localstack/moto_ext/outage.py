"""An AWS outage in one account, for the location breaker's tests (``crate::breaker``).

While an outage is on, every call of the services an operator calls in a location (RDS, and the
Resource Groups Tagging and Secrets Manager calls beside it) signed by a key of the chosen account
is answered as AWS answers a throttled or failing call, without reaching moto, and counted. STS
and IAM still answer, as they are other services.

``POST /_rds_ext/outage?seconds=30&account=333333333333&faults=throttle,unavailable`` starts one
(``account``: every account when absent; ``region``: only calls signed for that region, every
region when absent; ``faults``: answered in turn, default ``throttle``;
``rate``: the share of the calls that fail, 1 by default, the others being served as usual;
``actions``: only these RDS actions fail, every one when absent);
``GET /_rds_ext/outage`` says whether one is on (``outages``: ``account|region``, ``*`` for every),
and how many calls each account had refused. An outage of one account and region replaces only
the one before it of the same account and region.

The fault ``lost`` is a lost reply: moto serves the call (it takes effect), and the caller gets
InternalFailure (500) instead of its answer, as when a reply is lost on its way back.

Faults of the network, where no HTTP answer comes at all (the SDK reports a dispatch failure or
a timeout, never an AWS error code):
- ``reset``: the connection is reset (a TCP RST) before an answer; the call is not served.
- ``closed``: the call is served (it takes effect) and the connection closed without an answer,
  as when a reply is lost with its connection: the caller sees "connection closed before message
  completed", and cannot know that RDS took its call.
- ``hang``: the connection is held open with no answer for ``hold`` seconds (25 by default, past
  the operator's 20 s attempt timeout), then closed; the call is not served.

A connection refused (no listener: the request never leaves) cannot be chosen per account or
region here, since the account is known only once the request is read: the test bed's relay
(``tests/integration/common/proxy.rs``, ``Relay``) refuses every connection of one operator.

The answers are AWS's, by protocol:
- RDS (Query protocol): an ``ErrorResponse`` document with ``Code`` Throttling (HTTP 400),
  ServiceUnavailable (503) or InternalFailure (500), as the RDS API Reference's Common Errors page
  lists them (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/CommonErrors.html).
- Tagging and Secrets Manager (JSON protocol): ``{"__type": "ThrottlingException"}`` (400),
  ``ServiceUnavailableException`` (503) or ``InternalServiceError`` (500), with the
  ``x-amzn-ErrorType`` header.
"""

from __future__ import annotations

import _socket
import io
import random
import re
import socket
import struct
import threading
import time
from collections import Counter
from typing import Any
from urllib.parse import parse_qs

LOCK = threading.Lock()
# One outage per account and region ("" for every account or every region), so that tests of
# different accounts or regions run at once.
OUTAGES: dict[tuple[str, str], dict[str, Any]] = {}
REFUSED: Counter[str] = Counter()

SERVICES = {"rds", "tagging", "secretsmanager"}
QUERY = {
    "throttle": ("400 Bad Request", "Sender", "Throttling", "Rate exceeded"),
    "unavailable": ("503 Service Unavailable", "Receiver", "ServiceUnavailable", "Service unavailable"),
    "internal": ("500 Internal Server Error", "Receiver", "InternalFailure", "Internal failure"),
    "lost": ("500 Internal Server Error", "Receiver", "InternalFailure", "Internal failure"),
}
JSON = {
    "throttle": ("400 Bad Request", "ThrottlingException"),
    "unavailable": ("503 Service Unavailable", "ServiceUnavailableException"),
    "internal": ("500 Internal Server Error", "InternalServiceError"),
    "lost": ("500 Internal Server Error", "InternalServiceError"),
}
NETWORK = {"reset", "closed", "hang"}
CREDENTIAL = re.compile(r"Credential=([^/]+)/[0-9]+/([^/]+)/([a-z0-9-]+)/")


def control(method: str, query: dict[str, str]) -> dict[str, Any]:
    """``/_rds_ext/outage``: start one (POST), or say how they stand."""
    with LOCK:
        if method == "POST":
            faults = [f for f in query.get("faults", "throttle").split(",") if f in QUERY or f in NETWORK]
            OUTAGES[(query.get("account", ""), query.get("region", ""))] = {
                "until": time.time() + float(query.get("seconds", "30")),
                "faults": faults or ["throttle"],
                "turn": 0,
                "rate": min(1.0, max(0.0, float(query.get("rate", "1")))),
                "actions": set(query["actions"].split(",")) if query.get("actions") else None,
                "region": query.get("region") or None,
                "hold": float(query.get("hold", "25")),
            }
        live = [k for k, o in OUTAGES.items() if time.time() < o["until"]]
        accounts = sorted({a or "*" for a, _ in live})
        keys = sorted(f"{a or '*'}|{r or '*'}" for a, r in live)
        return {"on": bool(live), "accounts": accounts, "outages": keys, "refused": dict(REFUSED)}


def _action(environ: dict[str, Any]) -> str:
    """The Query protocol's Action, from the query string or the form body (which is put back)."""
    query = parse_qs(environ.get("QUERY_STRING", ""))
    if "Action" in query:
        return query["Action"][0]
    size = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(size) if size else b""
    environ["wsgi.input"] = io.BytesIO(body)
    return parse_qs(body.decode("utf-8", "replace")).get("Action", [""])[0]


def answer(environ: dict[str, Any], start_response: Any, app: Any = None) -> list[bytes] | None:
    """The failing answer to this request while an outage covers it; None otherwise."""
    if not OUTAGES:
        return None
    found = CREDENTIAL.search(environ.get("HTTP_AUTHORIZATION", ""))
    if not found or found.group(3) not in SERVICES:
        return None
    from moto.iam.models import get_account_id_from

    account = get_account_id_from(found.group(1))
    now = time.time()
    region = found.group(2)
    with LOCK:
        keys = ((account, region), (account, ""), ("", region), ("", ""))
        outage = next((o for o in map(OUTAGES.get, keys) if o and now < o["until"]), None)
    if outage is None or (outage["actions"] is not None and _action(environ) not in outage["actions"]):
        return None
    with LOCK:
        if random.random() >= outage["rate"]:
            return None
        fault = outage["faults"][outage["turn"] % len(outage["faults"])]
        outage["turn"] += 1
        REFUSED[account] += 1
    if fault in ("lost", "closed") and app is not None:
        # Served, and its answer dropped.
        for _ in app(environ, lambda *_args, **_kwargs: None):
            pass
    if fault in NETWORK:
        _break(environ, fault, outage["hold"])
    if found.group(3) == "rds":
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


def _break(environ: dict[str, Any], fault: str, hold: float) -> None:
    """Ends the connection with no answer, as the network would, and raises ConnectionError, which
    werkzeug takes as a dropped connection (it writes nothing more and closes it)."""
    sock = environ.get("werkzeug.socket")
    if fault == "hang":
        time.sleep(hold)
    if sock is None:
        pass
    elif fault == "reset":
        # Closed at once with SO_LINGER 0: the kernel sends a RST. The base class's close closes
        # the descriptor whatever werkzeug's buffered files hold, and marks the socket closed, so
        # werkzeug's own close later is a no-op rather than a second close of the number.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        _socket.socket.close(sock)
    else:
        # Both ways shut (a FIN to the caller, and EOF to werkzeug, which so reads no next request
        # on this connection): the caller sees its connection closed before an answer.
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    raise ConnectionResetError(f"outage: {fault}")
