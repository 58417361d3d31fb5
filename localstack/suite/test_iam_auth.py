"""The emulator's check of IAM database authentication tokens (moto_ext/iam_auth.py), against
tokens botocore's own ``generate_db_auth_token`` makes: a valid one passes, and each thing RDS
checks, changed alone, refuses it (UsingWithRDS.IAMDBAuth.Connecting.html)."""

from __future__ import annotations

import datetime
import json

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


def test_a_token_of_an_iam_users_key_needs_rds_db_connect_on_the_user():
    """A signer with policies is held to them; the test bed's own key has none to read."""
    from moto import mock_aws

    with mock_aws():
        iam = boto3.client("iam", region_name="us-east-1")
        account = boto3.client("sts", region_name="us-east-1").get_caller_identity()["Account"]
        resource = f"arn:aws:rds-db:eu-west-1:{account}:dbuser:db-ABC/app"
        keys = {}
        for name, statement in (
            ("allowed", {"Effect": "Allow", "Action": "rds-db:connect", "Resource": resource}),
            ("other-user", {"Effect": "Allow", "Action": "rds-db:connect",
                            "Resource": resource.replace("/app", "/admin")}),
            ("none", None),
        ):
            iam.create_user(UserName=name)
            if statement:
                iam.put_user_policy(UserName=name, PolicyName="connect",
                                    PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [statement]}))
            keys[name] = iam.create_access_key(UserName=name)["AccessKey"]

        def signed_by(name: str | None) -> str:
            key = keys.get(name, {"AccessKeyId": "test", "SecretAccessKey": "test"})
            client = boto3.client("rds", region_name="eu-west-1", aws_access_key_id=key["AccessKeyId"],
                                  aws_secret_access_key=key["SecretAccessKey"])
            return client.generate_db_auth_token(DBHostname=HOST, Port=3306, DBUsername="app")

        assert iam_auth.allowed(signed_by("allowed"), "app", "eu-west-1", account, "db-ABC") is None
        for name in ("other-user", "none"):
            why = iam_auth.allowed(signed_by(name), "app", "eu-west-1", account, "db-ABC")
            assert why == f"arn:aws:iam::{account}:user/{name} is not allowed rds-db:connect on {resource}"
        assert iam_auth.allowed(signed_by(None), "app", "eu-west-1", account, "db-ABC") is None
