"""The strict model check (moto_ext/model_check.py) fails what RDS's model does not allow, and
passes what it does: each case sends a real call through moto's RDS with one handler replaced."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.core.responses import ActionResult
from moto.rds.exceptions import RDSClientError
from moto.rds.responses import RDSResponse

from moto_ext import model_check


def served(monkeypatch, handler):
    """DescribeDBProxies answered by `handler`; the violations the call made."""
    monkeypatch.setattr(RDSResponse, "describe_db_proxies", handler)
    model_check.take()
    with mock_aws():
        client = boto3.client("rds", region_name="us-east-1")
        try:
            client.describe_db_proxies()
        except ClientError:
            pass  # the refusals' cases
        except ValueError:
            pass  # moto's serialiser cannot write a wrong type at all (int("soon"))
    return model_check.take()


def test_a_misspelt_member_fails_the_check(monkeypatch):
    found = served(monkeypatch, lambda self: ActionResult({"DBProxies": [{"DBProxyNam": "p"}]}))
    assert any("member DBProxyNam is not in DBProxy" in f for f in found), found


def test_a_value_outside_the_enum_fails_the_check(monkeypatch):
    found = served(monkeypatch, lambda self: ActionResult(
        {"DBProxies": [{"DBProxyName": "p", "Status": "avialable"}]}))
    assert any("'avialable' is not one of DBProxyStatus's values" in f for f in found), found


def test_a_wrong_type_fails_the_check(monkeypatch):
    found = served(monkeypatch, lambda self: ActionResult(
        {"DBProxies": [{"DBProxyName": "p", "IdleClientTimeout": "soon"}]}))
    assert any("IdleClientTimeout: 'soon' is not an integer" in f for f in found), found


def test_an_error_the_model_does_not_list_for_the_action_fails_the_check(monkeypatch):
    def refuse(self):
        raise RDSClientError("DBInstanceNotFound", "no such instance")

    found = served(monkeypatch, refuse)
    assert any("DescribeDBProxies: error DBInstanceNotFound is not one the model lists" in f
               for f in found), found


@pytest.mark.parametrize("code", ["DBProxyNotFoundFault", "InvalidParameterValue", "Throttling"])
def test_an_error_the_model_lists_or_a_common_one_passes(monkeypatch, code):
    def refuse(self):
        raise RDSClientError(code, "refused")

    assert served(monkeypatch, refuse) == []


def test_a_reply_the_model_allows_passes(monkeypatch):
    assert served(monkeypatch, lambda self: ActionResult(
        {"DBProxies": [{"DBProxyName": "p", "Status": "available", "RequireTLS": True,
                        "IdleClientTimeout": 1800, "VpcSubnetIds": ["subnet-1"]}]})) == []
