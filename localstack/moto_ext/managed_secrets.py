"""The master user secrets RDS manages in Secrets Manager (ManageMasterUserPassword), as RDS keeps
them rather than as moto 5.2.5 does.

- **The secret's value.** moto writes `{"username": "admin", "password": "P@55w0rd!"}` into every
  secret. RDS generates the password and writes the instance's or cluster's own master user name
  ("Password management with Amazon RDS and AWS Secrets Manager",
  https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/rds-secrets-manager.html: "RDS generates
  the master user password and stores it in Secrets Manager").
- **A rotation.** moto's RotateSecret without a rotation function makes a new version with no value
  at all, so the secret reads empty after ModifyDBInstance RotateMasterUserPassword or a
  RotateSecret of the managed secret. RDS's managed rotation ("Rotating the master user password
  secret for an RDS instance", same page; RotateSecret, API_RotateSecret.html) puts a new password in
  a new AWSCURRENT version (the last one AWSPREVIOUS) and sets it on the database. Here the new
  password is set on the real server (the instance's, or the cluster's writer) before the version
  is made current, so the secret never holds a password the server does not take.
- **A rotation schedule.** RotateSecret's RotationRules on a managed secret are kept and described
  whole (RotationEnabled, RotationRules with ScheduleExpression and Duration, which moto drops:
  API_DescribeSecret.html, RotationRules); RotateImmediately=false only sets them. Days out of
  1..1000 are refused as Secrets Manager refuses them (InvalidParameterException).
- **The secret's KMS key.** A DB instance or cluster that already has a managed secret keeps its
  key: ModifyDB* with MasterUserSecretKmsKeyId alone changes nothing ("If the DB instance already
  manages the master user password in AWS Secrets Manager, you can't change the KMS key that is
  used to encrypt the secret", API_ModifyDBInstance.html, MasterUserSecretKmsKeyId), which moto
  ignores too.
"""

from __future__ import annotations

import json
import secrets
import string
import time
from typing import Any

from . import clusters, engines

# The characters of a generated password: what RDS's own generated passwords are made of, without
# the ones a master password may not hold ("/", '"', "@", " ", API_CreateDBInstance.html,
# MasterUserPassword).
ALPHABET = string.ascii_letters + string.digits + "!#$%&()*+,-.:;<=>?[]^_{|}~"


def generate() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(28))


def _server(resource: Any) -> Any:
    """The real server that holds the resource's master user, if it has one."""
    if type(resource).__name__ == "DBInstance":
        return engines.get(resource.db_instance_identifier)
    return clusters.server_of(getattr(resource, "db_cluster_identifier", None))


# Managed secret ARN -> its MasterUserSecret (a registry: moto keeps no way back from a secret).
OWNERS: dict[str, Any] = {}


def rotate(master_secret: Any) -> None:
    """A managed rotation: a new password on the server, then a new AWSCURRENT version with it."""
    secret = master_secret.secret
    current = json.loads(secret.secret_string or "{}")
    password = generate()
    server = _server(master_secret.resource)
    if server is not None:
        server.set_password(password)
    value = json.dumps({"username": current.get("username", "admin"), "password": password})
    master_secret.secretsmanager.put_secret_value(
        secret_id=secret.arn,
        secret_string=value,
        secret_binary=None,
        client_request_token=None,
        version_stages=["AWSCURRENT"],
    )
    master_secret._status = "rotating"


def install(lock: Any) -> None:
    from moto.rds import models
    from moto.secretsmanager.exceptions import InvalidParameterException
    from moto.secretsmanager.models import FakeSecret, SecretsManagerBackend

    MasterUserSecret = models.MasterUserSecret
    orig_init = MasterUserSecret.__init__

    def init(self: Any, resource: Any, kms_key_id: str | None) -> None:
        orig_init(self, resource, kms_key_id)
        username = getattr(resource, "master_username", None) or "admin"
        self.secret.secret_string = json.dumps({"username": username, "password": generate()})
        for version in self.secret.versions.values():
            if "AWSCURRENT" in version.get("version_stages", []):
                version["secret_string"] = self.secret.secret_string
        OWNERS[self.secret.arn] = self

    MasterUserSecret.__init__ = init

    def rotate_secret(self: Any) -> None:
        with lock:
            rotate(self)

    MasterUserSecret.rotate_secret = rotate_secret

    orig_delete = MasterUserSecret.delete_secret

    def delete_secret(self: Any) -> None:
        OWNERS.pop(self.secret.arn, None)
        orig_delete(self)

    MasterUserSecret.delete_secret = delete_secret

    orig_rotate = SecretsManagerBackend.rotate_secret

    def sm_rotate(self: Any, secret_id: str, client_request_token: str | None = None,
                  rotation_lambda_arn: str | None = None,
                  rotation_rules: dict[str, Any] | None = None,
                  rotate_immediately: bool = True) -> str:
        if not self._is_valid_identifier(secret_id):
            return orig_rotate(self, secret_id, client_request_token, rotation_lambda_arn,
                               rotation_rules, rotate_immediately)
        secret = self.secrets[secret_id]
        owner = OWNERS.get(getattr(secret, "arn", ""))
        if owner is None:
            return orig_rotate(self, secret_id, client_request_token, rotation_lambda_arn,
                               rotation_rules, rotate_immediately)
        # A managed secret: its rules kept, as any secret's (API_RotateSecret.html, RotationRules).
        if rotation_rules:
            if "AutomaticallyAfterDays" in rotation_rules:
                days = int(rotation_rules["AutomaticallyAfterDays"])
                if not 1 <= days <= 1000:
                    raise InvalidParameterException(
                        "RotationRules.AutomaticallyAfterDays must be within 1-1000.")
                secret.auto_rotate_after_days = days
            secret.rotation_rules = dict(rotation_rules)
            secret.rotation_enabled = True
        secret.rotation_requested = True
        if rotate_immediately:
            rotate(owner)
        secret.last_rotation_date = int(time.time())
        return secret.to_short_dict()

    SecretsManagerBackend.rotate_secret = sm_rotate

    orig_to_dict = FakeSecret.to_dict

    def to_dict(self: Any) -> dict[str, Any]:
        out = orig_to_dict(self)
        rules = getattr(self, "rotation_rules", None)
        if rules and "RotationRules" in out:
            out["RotationRules"] = {k: v for k, v in rules.items() if v is not None}
        return out

    FakeSecret.to_dict = to_dict
