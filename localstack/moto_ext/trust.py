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
* an explicit ``Deny`` that matches wins;
* the caller's own identity-based policies must allow ``sts:AssumeRole`` on the role too, unless
  the trust policy grants it to the caller itself, in its own account: when the role is in another
  account ("Cross-account policy evaluation logic": both the identity-based policy of the caller and
  the resource-based policy must allow it), and when the trust policy names only the caller's
  account, which delegates to that account's identity policies ("Granting a user permissions to
  switch roles", IAM User Guide, id_roles_use_permissions-to-switch.html). This is read for the
  callers IAM has here (an IAM user, with its groups; an assumed-role session, as its role): their
  inline and attached policies, statements with ``Action`` and ``Resource`` (a statement with a
  ``Condition``, ``NotAction`` or ``NotResource`` matches nothing). moto's own default identity
  (the test bed's ``test`` key) is no IAM principal and has no policies to read: it is not held.

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
        role_account = ROLE_ARN.match(role_arn).group(1)  # type: ignore[union-attr]
        for action in actions:
            grant = granted(document, action, caller, caller_account, external_id)
            if not grant:
                raise refusal
            if (grant == "account" or role_account != caller_account) and \
                    identity_allows(caller, action, role_arn) is False:
                raise refusal
        return original(self)

    Response.assume_role = assume_role


def role(role_arn: str) -> Any:
    """The IAM role the ARN names, in the account it names; None when there is no such role."""
    from moto.iam.models import iam_backends

    match = ROLE_ARN.match(str(role_arn or ""))
    if not match:
        return None
    account, name = match.groups()
    return next((r for r in iam_backends[account]["aws"].get_roles() if r.name == name), None)


def trust_policy(role_arn: str) -> dict[str, Any] | None:
    """The trust policy of the role, or None when there is no such role."""
    found = role(role_arn)
    if found is None:
        return None
    document = found.assume_role_policy_document
    if isinstance(document, str):
        document = json.loads(unquote(document))
    return document


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _caller_role(caller: str) -> str:
    """An assumed-role session acts for its role: arn:aws:sts::ID:assumed-role/NAME/SESSION."""
    session = re.match(r"^arn:(aws[a-z-]*):sts::(\d{12}):assumed-role/([^/]+)/", caller)
    if session:
        partition, account, role = session.groups()
        return f"arn:{partition}:iam::{account}:role/{role}"
    return caller


def _principal_matches(principal: Any, caller: str, caller_account: str) -> str:
    """How the principal takes in the caller: "direct" (itself, or anyone), "account" (its
    account, which delegates to the account's identity policies), or "" (not at all)."""
    if principal == "*":
        return "direct"
    if not isinstance(principal, dict):
        return ""
    named = set(map(str, _list(principal.get("AWS", []))))
    if named & {"*", caller, _caller_role(caller)}:
        return "direct"
    if named & {caller_account, f"arn:aws:iam::{caller_account}:root"}:
        return "account"
    return ""


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


def granted(document: dict[str, Any], action: str, caller: str, caller_account: str,
            external_id: str | None) -> str:
    """How the trust policy lets the caller take `action` ("direct" or "account", as
    :func:`_principal_matches`), or "" when no Allow matches or a Deny does."""
    grants, denied = set(), False
    for statement in _list(document.get("Statement", [])):
        if not _action_matches(statement.get("Action", []), action):
            continue
        how = _principal_matches(statement.get("Principal"), caller, caller_account)
        if not how or not _conditions_hold(statement.get("Condition", {}), external_id):
            continue
        if statement.get("Effect") == "Deny":
            denied = True
        elif statement.get("Effect") == "Allow":
            grants.add(how)
    if denied or not grants:
        return ""
    return "direct" if "direct" in grants else "account"


def _documents(holder: Any) -> list[dict[str, Any]]:
    """The inline and attached (default version) policy documents of an IAM user, group or role."""
    texts = list(getattr(holder, "policies", {}).values())
    for policy in getattr(holder, "managed_policies", {}).values():
        texts += [v.document for v in getattr(policy, "versions", []) if getattr(v, "is_default", False)]
    out = []
    for text in texts:
        try:
            out.append(json.loads(unquote(text)) if isinstance(text, str) else dict(text))
        except (ValueError, TypeError):
            continue
    return out


def _identity_documents(caller: str) -> list[dict[str, Any]] | None:
    """The identity-based policies of the caller, or None when IAM has no such principal here."""
    from moto.iam.models import iam_backends

    user = re.match(r"^arn:aws[a-z-]*:iam::(\d{12}):user/(?:.*/)?([^/]+)$", caller)
    role = ROLE_ARN.match(_caller_role(caller))
    match = user or role
    if match is None:
        return None
    account, name = match.groups()
    backend = iam_backends[account]["aws"]
    try:
        if user:
            found = backend.get_user(name)
            return _documents(found) + [d for g in backend.get_groups_for_user(name) for d in _documents(g)]
        return _documents(backend.get_role(name))
    except Exception:  # moto's NoSuchEntity: no such principal in IAM here
        return None


def identity_allows(caller: str, action: str, resource: str) -> bool | None:
    """Whether the caller's identity-based policies allow `action` on `resource` (an Allow
    matches, no Deny does); None when the caller is no IAM principal here."""
    documents = _identity_documents(caller)
    if documents is None:
        return None
    verdicts = set()
    for document in documents:
        for statement in _list(document.get("Statement", [])):
            if any(k in statement for k in ("Condition", "NotAction", "NotResource")):
                continue
            if not _action_matches(statement.get("Action", []), action):
                continue
            if not any(fnmatch.fnmatchcase(resource, str(r)) for r in _list(statement.get("Resource", []))):
                continue
            verdicts.add(statement.get("Effect"))
    return "Allow" in verdicts and "Deny" not in verdicts


def service_may_assume(document: dict[str, Any], service: str) -> bool:
    """Whether the trust policy lets an AWS service (its Principal "Service") assume the role."""
    verdicts = set()
    for statement in _list(document.get("Statement", [])):
        principal = statement.get("Principal")
        services = _list(principal.get("Service", [])) if isinstance(principal, dict) else []
        if service in services and _action_matches(statement.get("Action", []), "sts:AssumeRole") \
                and not statement.get("Condition"):
            verdicts.add(statement.get("Effect"))
    return "Allow" in verdicts and "Deny" not in verdicts


def proxy_role_problem(role_arn: str, secret_arns: list[str]) -> str | None:
    """Why an RDS Proxy cannot read its Secrets Manager secrets with its IAM role, in RDS Proxy's
    words, or None. The role must exist, trust rds.amazonaws.com and allow
    secretsmanager:GetSecretValue on each secret ("Setting up AWS Identity and Access Management
    (IAM) policies", rds-proxy-iam-setup.html); otherwise the proxy is made and its targets are
    unavailable: "Credentials couldn't be retrieved. The IAM role ... is not authorized to read the
    AWS Secrets Manager secret" (rds-proxy.troubleshooting.html)."""
    document = trust_policy(role_arn)
    if document is None:
        return f'Credentials couldn\'t be retrieved. The IAM role "{role_arn}" does not exist.'
    if not service_may_assume(document, "rds.amazonaws.com"):
        return (f'Credentials couldn\'t be retrieved. The IAM role "{role_arn}" cannot be assumed by '
                "rds.amazonaws.com.")
    for arn in secret_arns:
        if identity_allows(role_arn, "secretsmanager:GetSecretValue", arn) is not True:
            return (f'Credentials couldn\'t be retrieved. The IAM role "{role_arn}" is not authorized to '
                    f'read the AWS Secrets Manager secret with the ARN "{arn}"')
    return None
