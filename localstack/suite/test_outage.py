"""outage.py's faults of the network, served by werkzeug as run_moto.py serves moto: a reset
connection (a RST before any answer, the call not served), a connection closed after the call was
served (no answer: the caller cannot know it was taken) and one held open past the caller's
timeout. The SDK reports each as a dispatch failure or a timeout, never an AWS error code, which
is what the operator must read as silence (crates/aws/src/aws_error)."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request

import pytest
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server

import moto_ext
from moto_ext import outage

REGION = "me-central-1"
BODY = b"Action=DescribeDBInstances&Version=2014-10-31"


@pytest.fixture
def server():
    app = moto_ext.ControlMiddleware(DomainDispatcherApplication(create_backend_app))
    srv = make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv.server_port
    srv.shutdown()
    outage.OUTAGES.clear()


def _start(port: int, fault: str) -> None:
    url = f"http://127.0.0.1:{port}/_rds_ext/outage?seconds=30&region={REGION}&faults={fault}&hold=1"
    urllib.request.urlopen(urllib.request.Request(url, method="POST")).read()


def _call(port: int, region: str = REGION, body: bytes = BODY) -> tuple[str, bytes, float]:
    """One RDS call signed for `region`: what came back (an answer, a reset, nothing) and when."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    head = (
        "POST / HTTP/1.1\r\nHost: rds.amazonaws.com\r\n"
        f"Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261207/{region}/rds/aws4_request, "
        "SignedHeaders=host, Signature=x\r\n"
        f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    started = time.monotonic()
    s.sendall(head.encode() + body)
    try:
        data = s.recv(65536)
        took = time.monotonic() - started
        if data == b"":
            return ("closed", data, took)
        while b"</" not in data[-200:] and (more := s.recv(65536)):
            data += more
        return ("answered", data, took)
    except ConnectionResetError:
        return ("reset", b"", time.monotonic() - started)
    finally:
        s.close()


@pytest.mark.parametrize(
    "fault,seen,at_least",
    [("reset", "reset", 0.0), ("closed", "closed", 0.0), ("hang", "closed", 1.0)],
)
def test_a_network_fault_gives_no_answer_at_all(server, fault, seen, at_least):
    _start(server, fault)
    what, data, took = _call(server)
    assert (what, data) == (seen, b""), data
    assert took >= at_least
    # Another region is served as usual, on the same server.
    what, data, _ = _call(server, "us-east-1")
    assert what == "answered" and b"DescribeDBInstancesResponse" in data, data
    state = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{server}/_rds_ext/outage").read())
    assert state["outages"] == [f"*|{REGION}"]


def test_outages_of_two_regions_are_kept_apart(server):
    _start(server, "reset")
    url = f"http://127.0.0.1:{server}/_rds_ext/outage?seconds=30&region=af-south-1&faults=throttle"
    urllib.request.urlopen(urllib.request.Request(url, method="POST")).read()
    assert _call(server)[0] == "reset"
    what, data, _ = _call(server, "af-south-1")
    assert what == "answered" and b"Throttling" in data, data


@pytest.mark.parametrize("fault,taken", [("reset", False), ("closed", True), ("hang", False)])
def test_a_call_answered_by_the_network_is_taken_only_when_its_connection_closed_after_it(server, fault, taken):
    """`closed` serves the call and loses its answer (RDS may have taken a call whose connection
    closed before the answer); `reset` and `hang` do not serve it."""
    _start(server, fault)
    name = f"outage-{fault}"
    create = (
        f"Action=CreateDBParameterGroup&DBParameterGroupName={name}&DBParameterGroupFamily=mysql8.0"
        "&Description=outage&Version=2014-10-31"
    ).encode()
    what, data, _ = _call(server, body=create)
    assert data == b"", data
    outage.OUTAGES.clear()
    describe = f"Action=DescribeDBParameterGroups&DBParameterGroupName={name}&Version=2014-10-31".encode()
    _, data, _ = _call(server, body=describe)
    assert (f"<DBParameterGroupName>{name}</DBParameterGroupName>".encode() in data) == taken, data
