"""Replies held to RDS's service model (botocore's ``data/rds/2014-10-31/service-2.json``).

With ``MOTO_EXT_STRICT=1`` (the test bed runs so) every RDS reply is checked against its
operation's output shape before moto serialises it, since moto's serialiser silently drops what the
model lacks:

* a member a reply gives that the structure does not have (a misspelt name) is a violation;
* so is a required member left out, a value outside a string's enum, and a value of the wrong type
  (an integer, a boolean, a list, a structure);
* an error code an action answers must be one the model lists for that operation, or one of the
  errors common to every action (CommonErrors.html in the API reference, and the query protocol's
  own InvalidParameterValue, InvalidParameterCombination and MissingParameter).

Violations are logged, kept (``GET /_rds_ext/model-violations``) and counted; ``tests/run.sh``
fails the run when any was kept, and moto's own suite (``suite/conftest.py``) fails on any too.
"""

from __future__ import annotations

import datetime
import logging
import os
import re
import threading
from typing import Any

LOG = logging.getLogger("moto_ext.model_check")
LOCK = threading.Lock()
VIOLATIONS: list[str] = []
MAX_KEPT = 1000

# CommonErrors.html (Amazon RDS API Reference, "Common Errors"): any action may answer these.
COMMON_ERRORS = {
    "AccessDeniedException", "ExpiredTokenException", "IncompleteSignature", "InternalFailure",
    "MalformedHttpRequestException", "NotAuthorized", "OptInRequired", "RequestAbortedException",
    "RequestEntityTooLargeException", "RequestExpired", "RequestTimeoutException",
    "ServiceUnavailable", "ThrottlingException", "UnrecognizedClientException",
    "UnknownOperationException", "ValidationError", "InvalidAction", "InvalidClientTokenId",
    # The query protocol's own, which RDS answers for a bad parameter of any action
    # (CommonParameters.html; every operation's "Errors" section of the API reference leaves them out).
    "InvalidParameterValue", "InvalidParameterCombination", "MissingParameter", "Throttling",
    "MissingAction", "InvalidQueryParameter", "InvalidAccessKeyId", "SignatureDoesNotMatch",
    # An IAM denial, as the query protocol names it ("User: ... is not authorized to perform:
    # rds:CreateDBInstance on resource: ..."; troubleshoot_access-denied.html).
    "AccessDenied",
}


def strict() -> bool:
    return os.environ.get("MOTO_EXT_STRICT", "") not in ("", "0", "false")


def violation(text: str) -> None:
    LOG.error("RDS model violation: %s", text)
    with LOCK:
        if len(VIOLATIONS) < MAX_KEPT:
            VIOLATIONS.append(text)


def take() -> list[str]:
    """The violations kept so far (and forgets them)."""
    with LOCK:
        out = list(VIOLATIONS)
        VIOLATIONS.clear()
        return out


def check_error(operation: Any, code: str) -> str | None:
    """Why `code` is not an error the operation may answer, or None."""
    allowed = {s.error_code or s.name for s in operation.error_shapes} | {s.name for s in operation.error_shapes}
    if code in allowed or code in COMMON_ERRORS:
        return None
    return f"{operation.name}: error {code} is not one the model lists for it ({', '.join(sorted(allowed)) or 'none'})"


def check_value(shape: Any, value: Any) -> str | None:
    """Why `value`, as moto's serialiser is about to write it for `shape`, breaks the model."""
    from botocore import xform_name

    kind = shape.type_name
    if kind == "structure":
        if isinstance(value, (str, bytes, int, float, bool, list, tuple)):
            return f"a {type(value).__name__} where the model has structure {shape.name}"
        if isinstance(value, dict):
            # A dict is what moto_ext shapes by hand: each key must be a member (moto's picker
            # also takes the snake_case spelling of one).
            spellings = set(shape.members) | {xform_name(m) for m in shape.members}
            unknown = sorted(str(k) for k in value if str(k) not in spellings)
            if unknown:
                return f"member {', '.join(unknown)} is not in {shape.name}"
    elif kind == "list":
        if isinstance(value, (str, bytes, int, float, bool)) or isinstance(value, dict):
            return f"a {type(value).__name__} where the model has a list"
    elif kind == "map":
        if not isinstance(value, dict):
            return f"a {type(value).__name__} where the model has a map"
    elif kind == "string":
        if shape.enum and str(value) not in shape.enum:
            return f"{value!r} is not one of {shape.name}'s values {sorted(shape.enum)}"
        if isinstance(value, (dict, list, tuple)):
            return f"a {type(value).__name__} where the model has a string"
    elif kind in ("integer", "long"):
        if isinstance(value, bool) or not (isinstance(value, int) or re.fullmatch(r"-?\d+", str(value))):
            return f"{value!r} is not an integer"
    elif kind in ("double", "float"):
        try:
            float(value)
        except (TypeError, ValueError):
            return f"{value!r} is not a number"
    elif kind == "boolean":
        if not isinstance(value, bool) and str(value).lower() not in ("true", "false"):
            return f"{value!r} is not a boolean"
    elif kind == "timestamp":
        if not isinstance(value, (datetime.datetime, datetime.date, str, int, float)):
            return f"{value!r} is not a timestamp"
    return None


def fix_moto() -> None:
    """moto's own replies where they break the model (the first strict run found these):
    * a subnet's AvailabilityZone is its Name alone (API_AvailabilityZone.html); moto added
      ProvisionedIopsCapable;
    * a GlobalClusterMember has no DBClusterParameterGroupStatus or PromotionTier
      (API_GlobalClusterMember.html), which moto copied from DBClusterMember;
    * a log file's LastWritten is a Long, a POSIX time in milliseconds
      (API_DescribeDBLogFilesDetails.html); moto gave seconds as a float."""
    from moto.core.utils import unix_time
    from moto.rds import models

    subnets = models.DBSubnetGroup.subnets

    def subnets_get(self: Any) -> Any:
        out = subnets.fget(self)
        for subnet in out:
            subnet["SubnetAvailabilityZone"] = {"Name": subnet["SubnetAvailabilityZone"]["Name"]}
        return out

    models.DBSubnetGroup.subnets = property(subnets_get, subnets.fset)
    members = models.GlobalCluster.global_cluster_members

    def members_get(self: Any) -> Any:
        out = members.fget(self)
        for member in out:
            member.pop("DBClusterParameterGroupStatus", None)
            member.pop("PromotionTier", None)
        return out

    models.GlobalCluster.global_cluster_members = property(members_get, members.fset)
    orig_log = models.DBLogFile.__init__

    def log_file(self: Any, name: str) -> None:
        orig_log(self, name)
        self.last_written = int(unix_time() * 1000)

    models.DBLogFile.__init__ = log_file


def install() -> None:
    """Checks every RDS reply as moto serialises it (only with MOTO_EXT_STRICT): each value the
    serialiser writes, and each required member it finds missing. It sees only what the serialiser
    picks, once: reading moto's objects again could change them (some properties advance state)."""
    from moto.core import serialize

    Serializer = serialize.ResponseSerializer
    orig_serialize = Serializer._serialize
    orig_get_value = Serializer.get_value

    def rds(self: Any) -> bool:
        return strict() and self.operation_model.service_model.service_name == "rds"

    def _serialize(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
        if value is not None and rds(self):
            why = check_value(shape, value)
            if why:
                violation(f"{self.operation_model.name}: {'.'.join([*self.path, key or shape.name])}: {why}")
        return orig_serialize(self, serialized, value, shape, key)

    def get_value(self: Any, obj: Any, key: str, shape: Any) -> Any:
        value = orig_get_value(self, obj, key, shape)
        parent = getattr(shape, "parent", None)
        if value is None and parent is not None and key in parent.required_members and rds(self):
            violation(f"{self.operation_model.name}: {'.'.join([*self.path, key])}: required by {parent.name}, missing")
        return value

    Serializer._serialize = _serialize
    Serializer.get_value = get_value


def check_served(action: str, served: Any) -> None:
    """An error reply's code, checked against the operation's errors (strict mode only)."""
    if not strict() or not isinstance(served, tuple) or len(served) < 3:
        return
    status, body = served[0], served[2]
    if int(status) < 400:
        return
    text = body.decode() if isinstance(body, bytes) else str(body)
    match = re.search(r"<Code>([^<]+)</Code>", text)
    if match is None:
        return
    operation = _operation(action)
    if operation is None:
        violation(f"{action}: not an operation of RDS's model")
        return
    why = check_error(operation, match.group(1))
    if why:
        violation(why)


_MODEL: Any = None


def _operation(action: str) -> Any:
    global _MODEL
    if _MODEL is None:
        import botocore.session

        _MODEL = botocore.session.get_session().get_service_model("rds")
    try:
        return _MODEL.operation_model(action)
    except Exception:
        return None
