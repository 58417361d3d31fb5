"""The Smithy RPC v2 CBOR protocol, which CloudWatch takes and AWS's current SDKs speak to it
(botocore's CloudWatch model lists ``"protocols": ["smithy-rpc-v2-cbor", "json", "query"]``; the
Rust SDK sends nothing else), where moto 5.2.5 serves only the JSON and query protocols and
answers ``POST /service/<service>/operation/<operation>`` with 404.

A request in it ("Smithy RPC v2 CBOR protocol", smithy.io/2.0/additional-specs/protocols/
smithy-rpc-v2.html: ``POST /service/{serviceName}/operation/{operationName}``, header
``smithy-protocol: rpc-v2-cbor``, a CBOR body of the input, timestamps as tag 1 epoch seconds) is
read with botocore's own CBOR parser against the operation's input shape, served by moto as the
JSON protocol request it is (``X-Amz-Target: <targetPrefix>.<operation>``), and moto's answer is
written back in CBOR against the output shape, with ``smithy-protocol: rpc-v2-cbor``; an error is
a CBOR map of ``__type`` and ``message``, with moto's status.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

PATH = re.compile(r"^/service/(?P<service>[^/]+)/operation/(?P<operation>[^/]+)$")
# The services served this way, by the service name in the path (the model's targetPrefix).
SERVICES = {"GraniteServiceVersion20100801": "cloudwatch"}
_MODELS: dict[str, Any] = {}


def _model(service: str) -> Any:
    if service not in _MODELS:
        import botocore.session

        _MODELS[service] = botocore.session.get_session().get_service_model(service)
    return _MODELS[service]


def _cbor_map(items: dict[str, str]) -> bytes:
    """A CBOR map of text strings (RFC 8949: major type 5, then type 3 items)."""
    def head(major: int, n: int) -> bytes:
        if n < 24:
            return bytes([major << 5 | n])
        if n < 256:
            return bytes([major << 5 | 24, n])
        return bytes([major << 5 | 25]) + n.to_bytes(2, "big")

    out = bytearray(head(5, len(items)))
    for k, v in items.items():
        for text in (k, v):
            data = text.encode()
            out += head(3, len(data)) + data
    return bytes(out)


def serve(app: Any, environ: dict[str, Any], start_response: Any) -> Any | None:
    """Serves a CBOR request through `app` (moto); None when the request is not one."""
    found = PATH.match(environ.get("PATH_INFO", ""))
    if found is None or found["service"] not in SERVICES:
        return None
    from botocore.parsers import JSONParser, RpcV2CBORParser
    from botocore.serialize import JSONSerializer, RpcV2CBORSerializer

    operation = _model(SERVICES[found["service"]]).operation_model(found["operation"])
    size = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(size) if size else b""
    params = RpcV2CBORParser().parse({"body": body, "headers": {}, "status_code": 200},
                                     operation.input_shape) if body else {}
    params.pop("ResponseMetadata", None)
    request = JSONSerializer().serialize_to_request(params, operation)
    inner = dict(environ)
    inner.update({
        "PATH_INFO": "/", "REQUEST_METHOD": "POST", "QUERY_STRING": "",
        "CONTENT_TYPE": request["headers"]["Content-Type"], "CONTENT_LENGTH": str(len(request["body"])),
        "HTTP_X_AMZ_TARGET": request["headers"]["X-Amz-Target"], "wsgi.input": io.BytesIO(request["body"]),
    })
    answered: dict[str, Any] = {}

    def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        answered["status"], answered["headers"] = status, headers
        return lambda _data: None

    chunks = app(inner, capture)
    try:
        reply = b"".join(chunks)
    finally:
        getattr(chunks, "close", lambda: None)()
    code = int(answered["status"].split()[0])
    if code >= 300:
        try:
            error = json.loads(reply or b"{}")
        except ValueError:
            error = {}
        kind = str(error.get("__type") or error.get("code") or "InternalFailure").split("#")[-1]
        out = _cbor_map({"__type": kind, "message": str(error.get("message") or error.get("Message") or "")})
    else:
        parsed = JSONParser().parse({"body": reply, "headers": {}, "status_code": 200}, operation.output_shape) \
            if operation.output_shape is not None else {}
        parsed.pop("ResponseMetadata", None)
        data = bytearray()
        if operation.output_shape is not None:
            RpcV2CBORSerializer()._serialize_data_item(data, parsed, operation.output_shape)
        out = bytes(data) or _cbor_map({})
    start_response(answered["status"], [("Content-Type", "application/cbor"), ("smithy-protocol", "rpc-v2-cbor"),
                                        ("Content-Length", str(len(out)))])
    return [out]
