"""IAM database authentication, checked as RDS checks it.

A user made for IAM (MariaDB: ``IDENTIFIED WITH AWSAuthenticationPlugin AS 'RDS'``; PostgreSQL:
``GRANT rds_iam``, https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/UsingWithRDS.IAMDBAuth.DBAccounts.html)
logs in with an authentication token in place of a password: the URL
``host:port/?Action=connect&DBUser=user`` presigned with Signature Version 4 for the service
``rds-db`` in the instance's region, valid 15 minutes ("Each token has a lifetime of 15 minutes",
UsingWithRDS.IAMDBAuth.html; "Connecting to your DB instance using IAM authentication",
UsingWithRDS.IAMDBAuth.Connecting.html). The servers hand the token to ``iam/check.py``
(``iam/rds_iam.c``: MariaDB's plugin AWSAuthenticationPlugin, PostgreSQL's PAM module), which asks here
(``POST /_rds_ext/iam-auth``). A token logs in only when:

* the instance has IAM database authentication on (its cluster's, for an Aurora member);
* it names this user (DBUser), the action ``connect``, and an endpoint of this server: the
  instance's own, or an endpoint (an Aurora cluster's) that forwards to it, with its port;
* its credential scope is today's date of X-Amz-Date, the instance's region, ``rds-db`` and
  ``aws4_request``, and it is not expired: X-Amz-Date plus the smaller of X-Amz-Expires (at most
  900) and the emulator's token life (``iam_token_life``, MOTO_RDS_IAM_TOKEN_LIFE, seconds, default
  900; shorter in tests to show a refresh) is still ahead, and X-Amz-Date is not ahead of now by
  more than five minutes;
* its signature is the one the secret key of its access key gives (and its session token is that
  key's): SigV4 in the query string (``sigv4.py``), as the SDKs' signers make it (aws-sdk-rds
  ``auth_token``, botocore ``generate_db_auth_token``), with a key the emulator issued.

A token signed by an IAM user's key, or by an
assumed role's session, logs in only when that principal's identity-based policies allow
``rds-db:connect`` on ``arn:aws:rds-db:REGION:ACCOUNT:dbuser:RESOURCE-ID/USER`` (the instance's
DbiResourceId, or its cluster's DbClusterResourceId; "Creating and using an IAM policy for IAM
database access", UsingWithRDS.IAMDBAuth.IAMPolicy.html), read as ``trust.identity_allows``
reads them; the test bed's own keys have no policies to read and are not held to one.
"""

from __future__ import annotations

import datetime
import hmac
import os
from typing import Any
from urllib.parse import parse_qsl

from . import engines, scope, sigv4, trust

SERVICE = "rds-db"
MAX_EXPIRES = 900
SKEW = 300


def allowed(token: str, user: str, region: str, account: str, resource_id: str) -> str | None:
    """Why the token's signer may not connect as `user` (its policies allow no rds-db:connect on
    the user of `resource_id`); None when it may, or has no policies here to read."""
    credential = dict(parse_qsl(token.partition("/?")[2])).get("X-Amz-Credential", "").split("/")
    found = sigv4.issued(credential[0])
    principal = found[2] if found is not None else None
    if principal is None:
        return None
    partition = "aws-cn" if region.startswith("cn-") else "aws-us-gov" if region.startswith("us-gov-") else "aws"
    arn = f"arn:{partition}:rds-db:{region}:{account}:dbuser:{resource_id}/{user}"
    if trust.identity_allows(principal, "rds-db:connect", arn) is False:
        return f"{principal} is not allowed rds-db:connect on {arn}"
    return None


def verify(token: str, user: str, hosts: set[str], region: str, life: float,
           now: datetime.datetime) -> str | None:
    """Why the token does not log `user` in at one of `hosts` (``address:port``) in `region` at
    `now`; None when it does."""
    host, sep, query = token.partition("/?")
    if not sep:
        return "not an authentication token (host:port/?query)"
    if host not in hosts:
        return f"signed for {host}, not an endpoint of this instance"
    params = parse_qsl(query, keep_blank_values=True)
    fields = dict(params)
    if len(fields) != len(params):
        return "a query parameter repeated"
    if fields.get("Action") != "connect":
        return "Action is not connect"
    if fields.get("DBUser") != user:
        return f"signed for user {fields.get('DBUser')}, not {user}"
    if fields.get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" or fields.get("X-Amz-SignedHeaders") != "host":
        return "not signed with AWS4-HMAC-SHA256 over the host header"
    credential = fields.get("X-Amz-Credential", "").split("/")
    amz_date = fields.get("X-Amz-Date", "")
    try:
        signed = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
        expires = int(fields.get("X-Amz-Expires", ""))
    except ValueError:
        return "X-Amz-Date or X-Amz-Expires unreadable"
    if len(credential) != 5 or credential[1] != amz_date[:8] or credential[3] != SERVICE or credential[4] != "aws4_request":
        return "the credential scope is not date/region/rds-db/aws4_request"
    if credential[2] != region:
        return f"signed for region {credential[2]}, the instance is in {region}"
    if not 0 < expires <= MAX_EXPIRES:
        return f"X-Amz-Expires {expires} is not within 1..{MAX_EXPIRES}"
    if signed - now > datetime.timedelta(seconds=SKEW):
        return "signed in the future"
    if now >= signed + datetime.timedelta(seconds=min(expires, life)):
        return "expired"
    found = sigv4.issued(credential[0])
    if found is None:
        return "the access key is not known"
    secret, session, _ = found
    if fields.get("X-Amz-Security-Token") != session:
        return "the session token is not the access key's"
    wanted = sigv4.signature(secret, host, params, amz_date, "/".join(credential[1:]))
    if not hmac.compare_digest(wanted, fields.get("X-Amz-Signature", "")):
        return "the signature does not match"
    return None


def check(server_key: str, user: str, token: str, life: float) -> str | None:
    """The emulator's answer for a login at the server whose directory is `server_key`."""
    from moto.rds.models import rds_backends

    from .endpoints import Endpoint

    found = [(k, s) for k, s in list(dict.items(engines.SERVERS)) if os.path.basename(s.dir) == server_key]
    if not found:
        return "no such server"
    key, server = found[0]
    account, region, identifier = key.split(scope.SEP, 2)
    backend = rds_backends[account][region]
    instance = backend.databases.get(identifier)
    if instance is None:
        return f"instance {identifier} is not there"
    cluster = backend.clusters.get(getattr(instance, "db_cluster_identifier", None) or "")
    enabled = (bool(getattr(cluster, "iam_auth", False)) if cluster is not None
               else bool(getattr(instance, "enable_iam_database_authentication", False)))
    if not enabled:
        return f"IAM database authentication is not enabled for {identifier}"
    hosts = {f"{server.address}:{server.port}"}
    with scope.within(account, region):
        for endpoint in list(Endpoint.LIVE):
            if endpoint.target() is server:
                hosts.add(f"{endpoint.address}:{endpoint.port}")
    why = verify(token, user, hosts, region, life, datetime.datetime.now(datetime.timezone.utc))
    resource_id = (getattr(cluster, "db_cluster_resource_id", None) if cluster is not None
                   else getattr(instance, "dbi_resource_id", None))
    return why or allowed(token, user, region, account, str(resource_id))


def answer(body: dict[str, Any], life: float) -> dict[str, Any]:
    why = check(str(body.get("server", "")), str(body.get("user", "")), str(body.get("token", "")), life)
    return {"ok": why is None, "why": why}
