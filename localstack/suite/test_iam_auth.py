"""The emulator's check of IAM database authentication tokens (moto_ext/iam_auth.py), against
tokens botocore's own ``generate_db_auth_token`` makes: a valid one passes, and each thing RDS
checks, changed alone, refuses it (UsingWithRDS.IAMDBAuth.Connecting.html)."""

from __future__ import annotations

import datetime

import boto3
import pytest

from moto_ext import iam_auth

HOST = "10.88.1.5"


def token(user: str = "app", host: str = HOST, region: str = "eu-west-1", secret: str = "test",
          session: str | None = None) -> str:
    client = boto3.client("rds", region_name=region, aws_access_key_id="test",
                          aws_secret_access_key=secret, aws_session_token=session)
    return client.generate_db_auth_token(DBHostname=host, Port=3306, DBUsername=user)


def check(t: str, now: datetime.datetime | None = None, life: float = 900) -> str | None:
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return iam_auth.verify(t, "app", {f"{HOST}:3306"}, "eu-west-1", life, now)


def test_a_valid_token_passes():
    assert check(token()) is None


@pytest.mark.parametrize("made, why", [
    (lambda: token(user="admin"), "signed for user admin, not app"),
    (lambda: token(host="10.88.1.6"), "signed for 10.88.1.6:3306, not an endpoint of this instance"),
    (lambda: token(region="us-east-1"), "signed for region us-east-1, the instance is in eu-west-1"),
    (lambda: token(secret="not-the-secret"), "the signature does not match"),
    (lambda: token(session="a-session-token-the-key-does-not-have"), "the session token is not the access key's"),
    (lambda: token().replace("Action=connect", "Action=Connect"), "Action is not connect"),
    (lambda: token().replace("X-Amz-Expires=900", "X-Amz-Expires=3600"), "X-Amz-Expires 3600 is not within 1..900"),
    (lambda: "app-password", "not an authentication token (host:port/?query)"),
])
def test_each_thing_rds_checks_refuses_the_token(made, why):
    assert check(made()) == why


def test_a_token_expires_after_its_life_and_is_refused_from_the_future():
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    t = token()
    assert check(t, now + datetime.timedelta(seconds=899)) is None
    assert check(t, now + datetime.timedelta(seconds=901)) == "expired"
    assert check(t, now + datetime.timedelta(seconds=21), life=20) == "expired"
    assert check(t, now - datetime.timedelta(seconds=301)) == "signed in the future"
