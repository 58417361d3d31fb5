"""Signature Version 4 in the query string, as the emulator checks it where AWS does: a
PreSignedUrl (``presigned.py``) and an IAM database authentication token (``iam_auth.py``).

"Create a signed AWS API request" (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html)
and "Authenticating Requests: Using Query Parameters"
(https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html): the canonical
request ``GET``, ``/``, the query without X-Amz-Signature sorted and RFC 3986-encoded, the
``host`` header, and the hash of the empty payload, as the SDKs' presigners make it; signed with
the key derived from the secret through the credential scope.

The keys the emulator issued: the test bed's own (MOTO_EXT_IAM_CREDENTIALS, ``id:secret`` pairs
separated by commas; ``test:test`` by default), the credentials moto's STS handed out (AssumeRole,
with their session token), and the access keys of moto's IAM users.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from urllib.parse import quote


def _known() -> dict[str, str]:
    pairs = os.environ.get("MOTO_EXT_IAM_CREDENTIALS", "test:test")
    return dict(p.split(":", 1) for p in pairs.split(",") if ":" in p)


def issued(access_key: str) -> tuple[str, str | None, str | None] | None:
    """The secret of an access key the emulator issued, its session token, and the IAM principal
    it is of (an assumed role session's or an IAM user's ARN; None for the test bed's own)."""
    from moto.iam.models import iam_backends
    from moto.sts.models import sts_backends

    known = _known().get(access_key)
    if known is not None:
        return known, None, None
    for _, partitions in list(sts_backends.items()):
        for _, backend in list(partitions.items()):
            for role in list(backend.assumed_roles):
                if role.access_key_id == access_key:
                    return role.secret_access_key, role.session_token, role.arn
    # moto keeps assumed roles' temporary keys among IAM's access keys too (found above).
    for account, partitions in list(iam_backends.items()):
        for partition, backend in list(partitions.items()):
            key = backend.access_keys.get(access_key)
            if key is not None:
                user = getattr(key, "user_name", None) if getattr(key, "role_arn", None) is None else None
                principal = f"arn:{partition}:iam::{account}:user/{user}" if user else None
                return str(key.secret_access_key), None, principal
    return None


def _encode(value: str) -> str:
    return quote(value, safe="-_.~")


def signature(secret: str, host: str, pairs: list[tuple[str, str]], amz_date: str,
              credential_scope: str) -> str:
    """The SigV4 query signature of GET https://host/?pairs (X-Amz-Signature left out)."""
    query = "&".join(f"{_encode(k)}={_encode(v)}" for k, v in sorted(pairs) if k != "X-Amz-Signature")
    canonical = "\n".join(["GET", "/", query, f"host:{host}", "", "host", hashlib.sha256(b"").hexdigest()])
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, credential_scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + secret).encode()
    for part in credential_scope.split("/"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
