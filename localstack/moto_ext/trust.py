"""AssumeRole as IAM evaluates it: the role must exist and its trust policy must let the caller in.

moto 5.2.5 lets anyone assume any role ARN, existing or not, and ignores the role's trust policy
(``STSBackend.assume_role``: "the role does not need to exist"). AWS does neither. Here, as the
IAM User Guide describes role trust ("How to use an external ID when granting access to your AWS
resources to a third party", and "IAM JSON policy elements: Condition") and the STS API Reference
describes AssumeRole ("Errors": AccessDenied; "Tags": the trust policy must also allow
``sts:TagSession``):

* a role that does not exist cannot be assumed;
* a statement of the trust policy must allow ``sts:AssumeRole`` to the caller: the principal
  ``*``, the caller's account (its id or ``arn:aws:iam::ID:root``), or the caller's ARN (a user,
  or the role an assumed-role session belongs to);
* its conditions must hold; ``sts:ExternalId`` with ``StringEquals``, ``StringLike`` and
  ``StringNotEquals`` is evaluated, and a statement with any other condition does not match;
* with session tags, ``sts:TagSession`` must be allowed the same way;
* an explicit ``Deny`` that matches wins.

Refusals are AWS's: ``AccessDenied``, "User: CALLER is not authorized to perform: sts:AssumeRole on
resource: ROLE".
"""

from __future__ import annotations

import fnmatch
import json
import re
from typing import Any
from urllib.parse import unquote

ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::(\d{12}):role/(?:.*/)?([^/]+)$")


def install() -> None:
    from moto.sts import responses
    from moto.sts.exceptions import STSClientError

    Response = responses.TokenResponse
    original = Response.assume_role

    def assume_role(self: Any) -> Any:
        role_arn = self._get_param("RoleArn") or ""
        external_id = self._get_param("ExternalId")
        tagged = any(k.startswith("Tags.member.") for k in self.querystring)
        _, caller, caller_account = self.backend.get_caller_identity(self.get_access_key(), self.region)
        refusal = STSClientError(
            "AccessDenied",
            f"User: {caller} is not authorized to perform: sts:AssumeRole on resource: {role_arn}",
        )
        document = trust_policy(role_arn)
        if document is None:
            raise refusal
        actions = ["sts:AssumeRole"] + (["sts:TagSession"] if tagged else [])
        for action in actions:
            if not allowed(document, action, caller, caller_account, external_id):
                raise refusal
        return original(self)

    Response.assume_role = assume_role


def trust_policy(role_arn: str) -> dict[str, Any] | None:
    """The trust policy of the role, or None when there is no such role."""
    from moto.iam.models import iam_backends

    match = ROLE_ARN.match(role_arn)
    if not match:
        return None
    account, name = match.groups()
    backend = iam_backends[account]["aws"]
    role = next((r for r in backend.get_roles() if r.name == name), None)
    if role is None:
        return None
    document = role.assume_role_policy_document
    if isinstance(document, str):
        document = json.loads(unquote(document))
    return document


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _principal_matches(principal: Any, caller: str, caller_account: str) -> bool:
    if principal == "*":
        return True
    if not isinstance(principal, dict):
        return False
    caller_role = caller
    # An assumed-role session acts for its role: arn:aws:sts::ID:assumed-role/NAME/SESSION.
    session = re.match(r"^arn:(aws[a-z-]*):sts::(\d{12}):assumed-role/([^/]+)/", caller)
    if session:
        partition, account, role = session.groups()
        caller_role = f"arn:{partition}:iam::{account}:role/{role}"
    accepted = {"*", caller_account, f"arn:aws:iam::{caller_account}:root", caller, caller_role}
    return any(p in accepted for p in _list(principal.get("AWS", [])))


def _conditions_hold(conditions: dict[str, Any], external_id: str | None) -> bool:
    for operator, tests in conditions.items():
        for key, wanted in tests.items():
            if key.lower() != "sts:externalid":
                return False
            wanted = [str(w) for w in _list(wanted)]
            if operator == "StringEquals":
                ok = external_id is not None and external_id in wanted
            elif operator == "StringLike":
                ok = external_id is not None and any(fnmatch.fnmatchcase(external_id, w) for w in wanted)
            elif operator == "StringNotEquals":
                ok = external_id is None or external_id not in wanted
            else:
                return False
            if not ok:
                return False
    return True


def _action_matches(actions: Any, action: str) -> bool:
    return any(fnmatch.fnmatchcase(action.lower(), str(a).lower()) for a in _list(actions))


def allowed(document: dict[str, Any], action: str, caller: str, caller_account: str,
            external_id: str | None) -> bool:
    """Whether the trust policy lets the caller take `action`: an Allow matches and no Deny does."""
    verdicts = set()
    for statement in _list(document.get("Statement", [])):
        if not _action_matches(statement.get("Action", []), action):
            continue
        if not _principal_matches(statement.get("Principal"), caller, caller_account):
            continue
        if not _conditions_hold(statement.get("Condition", {}), external_id):
            continue
        verdicts.add(statement.get("Effect"))
    return "Allow" in verdicts and "Deny" not in verdicts
