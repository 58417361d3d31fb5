"""IAM policy evaluation of RDS requests signed by an IAM principal's own access key.

moto's IAM access control (``INITIAL_NO_AUTH_ACTION_COUNT``) cannot evaluate the operator's
policy: it is one switch for the whole server (every other caller's ``test`` key is refused once
it is on), it authorizes every RDS request against the resource ``*`` (so a statement scoped to
``arn:aws:rds:*:*:db:*`` never applies), and of the condition operators it evaluates only
``StringEquals``, with the one key ``sts:ExternalId`` (every other key reads as absent; every
other operator, ``Null`` included, as met). Here, a request signed with the access key of an IAM
user that moto's IAM has is held to that user's identity-based
policies as AWS evaluates them ("Policy evaluation logic", reference_policies_evaluation-logic.html):
an explicit Deny wins, else an Allow is needed, for every resource the request names (the
Service Authorization Reference's resource types for RDS: db, cluster, subgrp, pg, cluster-pg,
snapshot, cluster-snapshot, og, global-cluster; the tagging calls' ResourceName), with the
condition keys ``aws:RequestTag/*``, ``aws:TagKeys`` (the request's tags, or RemoveTagsFromResource's
keys) and ``aws:ResourceTag/*`` (the named resource's tags), and the operators ``Null``,
``StringEquals``, ``StringNotEquals``, ``StringLike`` and their ``ForAnyValue:`` and
``ForAllValues:`` forms; a statement's ``NotAction`` and ``NotResource`` name every action or
resource but those listed. A statement with another operator or key is not evaluated: an Allow of it
grants nothing and a Deny of it refuses (the stricter reading); ``denied()`` lists what was refused.
Other callers (moto's default ``test`` key) are not evaluated.
"""

from __future__ import annotations

import fnmatch
import re
import threading
import uuid
from typing import Any

from . import trust

# What each request parameter names, as its ARN's resource type (AWS's "Resource types defined by
# Amazon RDS"); a global cluster's ARN has no region.
RESOURCE_PARAMETERS = {
    "DBInstanceIdentifier": "db",
    "SourceDBInstanceIdentifier": "db",
    "TargetDBInstanceIdentifier": "db",
    "DBClusterIdentifier": "cluster",
    "DBSubnetGroupName": "subgrp",
    "DBParameterGroupName": "pg",
    "DBClusterParameterGroupName": "cluster-pg",
    "DBSnapshotIdentifier": "snapshot",
    "SourceDBSnapshotIdentifier": "snapshot",
    "TargetDBSnapshotIdentifier": "snapshot",
    "DBClusterSnapshotIdentifier": "cluster-snapshot",
    "SourceDBClusterSnapshotIdentifier": "cluster-snapshot",
    "TargetDBClusterSnapshotIdentifier": "cluster-snapshot",
    "OptionGroupName": "og",
    "GlobalClusterIdentifier": "global-cluster",
    "DBClusterEndpointIdentifier": "cluster-endpoint",
    # StartExportTask's snapshot or cluster snapshot, always an ARN.
    "SourceArn": "snapshot",
}
OPERATORS = {"Null", "StringEquals", "StringNotEquals", "StringLike"}

_LOCK = threading.Lock()
DENIED: list[dict[str, str]] = []


def caller_of(headers: Any) -> str | None:
    """The IAM user whose access key signed the request, as an ARN; None for a key moto's IAM
    does not have, or an assumed role's."""
    from moto.iam.models import iam_backends

    found = re.search(r"Credential=([A-Z0-9]+)/", str(headers.get("Authorization", "")))
    if not found:
        return None
    key_id = found.group(1)
    for account_id, account in list(iam_backends.items()):
        backend = account["aws"]
        key = backend.access_keys.get(key_id)
        if key is None:
            continue
        # An assumed role's session is not held here (yet): the test bed's member roles carry a
        # trust policy only (tests/integration/common: create_role).
        if key.role_arn:
            return None
        if key.user_name:
            return f"arn:aws:iam::{account_id}:user/{key.user_name}"
    return None


def _request_tags(action: str, params: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    """aws:RequestTag/* and aws:TagKeys of the request."""
    tags = {}
    # moto's parsed parameters answer RDS's names (an XFormedDict holds them snake_case).
    for tag in trust._list(params.get("Tags") or []):
        key = tag.get("Key") if hasattr(tag, "get") else None
        if key is not None:
            tags[str(key)] = str(tag.get("Value") or "")
    keys = list(tags)
    if action == "RemoveTagsFromResource":
        keys = [str(k) for k in trust._list(params.get("TagKeys") or [])]
    return tags, keys


def resources(backend: Any, params: dict[str, Any], account: str, region: str) -> list[str]:
    """The ARNs of the resources the request names (none: ``*``)."""
    from moto.utilities.utils import get_partition

    partition = get_partition(region)
    arns = []
    for parameter, kind in RESOURCE_PARAMETERS.items():
        value = params.get(parameter)
        if not value:
            continue
        value = str(value)
        if value.startswith("arn:"):
            arns.append(value)
        elif kind == "global-cluster":
            arns.append(f"arn:{partition}:rds::{account}:{kind}:{value}")
        else:
            arns.append(f"arn:{partition}:rds:{region}:{account}:{kind}:{value.lower()}")
    if params.get("ResourceName"):
        arns.append(str(params["ResourceName"]))
    return arns or ["*"]


def _tags_of(backend: Any, arn: str) -> dict[str, str]:
    if arn == "*":
        return {}
    try:
        return {t["Key"]: t["Value"] for t in backend.list_tags_for_resource(arn)}
    except Exception:  # not there (yet): a resource being made has no tags
        return {}


def _values(key: str, request_tags: dict[str, str], tag_keys: list[str],
            resource_tags: dict[str, str]) -> list[str] | None:
    """The request's values of a condition key; None: absent, or a key not evaluated here."""
    lower = key.lower()
    if lower.startswith("aws:requesttag/"):
        tag = key.split("/", 1)[1]
        return [request_tags[tag]] if tag in request_tags else []
    if lower.startswith("aws:resourcetag/"):
        tag = key.split("/", 1)[1]
        return [resource_tags[tag]] if tag in resource_tags else []
    if lower == "aws:tagkeys":
        return list(tag_keys)
    return None


def _matches(operator: str, values: list[str], wanted: list[str]) -> bool:
    if operator in ("StringEquals", "StringNotEquals"):
        hit = any(v in wanted for v in values)
        return hit if operator == "StringEquals" else not hit
    return any(fnmatch.fnmatchcase(v, w) for v in values for w in wanted)


def condition_holds(condition: dict[str, Any], request_tags: dict[str, str], tag_keys: list[str],
                    resource_tags: dict[str, str]) -> bool | None:
    """Whether every test of the Condition block holds; None when one cannot be evaluated here."""
    for operator, tests in condition.items():
        qualifier, _, base = operator.rpartition(":")
        if base not in OPERATORS or qualifier not in ("", "ForAnyValue", "ForAllValues"):
            return None
        for key, wanted in tests.items():
            values = _values(key, request_tags, tag_keys, resource_tags)
            if values is None:
                return None
            wanted = [str(w) for w in trust._list(wanted)]
            if base == "Null":
                if (not values) != (wanted[0].lower() == "true"):
                    return False
            elif qualifier == "ForAllValues":
                if not all(_matches(base, [v], wanted) for v in values):
                    return False
            elif not values:
                # A single-valued or ForAnyValue test of an absent key: only StringNotEquals holds.
                if base != "StringNotEquals":
                    return False
            elif not _matches(base, values, wanted):
                return False
    return True


def applies(statement: dict[str, Any], action: str, arn: str) -> bool:
    """Whether a statement names the action and the resource: through Action and Resource, or
    through NotAction and NotResource, which name every one but those listed ("IAM JSON policy
    elements: NotAction", "NotResource"; reference_policies_elements_notaction.html,
    reference_policies_elements_notresource.html)."""
    def resource_matches(patterns: Any) -> bool:
        return any(fnmatch.fnmatchcase(arn, str(r)) or str(r) == "*" for r in trust._list(patterns))

    acts = (not trust._action_matches(statement["NotAction"], action) if "NotAction" in statement
            else trust._action_matches(statement.get("Action", []), action))
    on = (not resource_matches(statement["NotResource"]) if "NotResource" in statement
          else resource_matches(statement.get("Resource", [])))
    return acts and on


def decide(documents: list[dict[str, Any]], action: str, arn: str, request_tags: dict[str, str],
           tag_keys: list[str], resource_tags: dict[str, str]) -> str:
    """"Allow", "Deny" (explicit) or "" (no Allow: implicitly denied) for one resource."""
    allowed = False
    for document in documents:
        for statement in trust._list(document.get("Statement", [])):
            if not applies(statement, action, arn):
                continue
            holds = condition_holds(statement.get("Condition", {}), request_tags, tag_keys,
                                    resource_tags)
            deny = statement.get("Effect") == "Deny"
            if deny and holds is not False:
                return "Deny"
            if not deny and holds:
                allowed = True
    return "Allow" if allowed else ""


def check(response: Any, action: str, params: dict[str, Any]) -> tuple[str, str] | None:
    """None when the request may go on; else who was refused and what (AccessDenied's "User: WHO
    is not authorized to perform: WHAT")."""
    caller = caller_of(response.headers)
    if caller is None:
        return None
    documents = trust._identity_documents(caller)
    if documents is None:
        return None
    account, region = response.current_account, response.region
    request_tags, tag_keys = _request_tags(action, params)
    for arn in resources(response.backend, params, account, region):
        resource_tags = _tags_of(response.backend, arn)
        verdict = decide(documents, f"rds:{action}", arn, request_tags, tag_keys, resource_tags)
        if verdict == "Allow":
            continue
        how = "with an explicit deny" if verdict == "Deny" else "because no identity-based policy allows it"
        with _LOCK:
            DENIED.append({"caller": caller, "action": f"rds:{action}", "resource": arn})
        return caller, f"rds:{action} on resource: {arn} {how}"
    return None


def refusal(caller: str, what: str) -> Exception:
    """AccessDenied as RDS answers it: HTTP 403, the query protocol's error document."""
    from xml.sax.saxutils import escape

    from werkzeug.exceptions import Forbidden

    message = escape(f"User: {caller} is not authorized to perform: {what}")
    body = ('<ErrorResponse xmlns="http://rds.amazonaws.com/doc/2014-10-31/"><Error>'
            f"<Type>Sender</Type><Code>AccessDenied</Code><Message>{message}</Message></Error>"
            f"<RequestId>{uuid.uuid4()}</RequestId></ErrorResponse>")
    return Forbidden(description=body)


def denied(caller: str | None = None) -> list[dict[str, str]]:
    """The requests refused here, of one caller (an ARN) or of all."""
    with _LOCK:
        return [d for d in DENIED if caller is None or d["caller"] == caller]
