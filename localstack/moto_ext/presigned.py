"""The PreSignedUrl RDS reads across regions, where moto reads none.

"You must specify this parameter when you copy an encrypted DB snapshot from another AWS Region"
in the AWS GovCloud (US) Regions, where it "applies only"
(https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CopyDBSnapshot.html,
https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CopyDBClusterSnapshot.html); for
CreateDBInstanceReadReplica in the GovCloud and China Regions
(https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBInstanceReadReplica.html).
Here, in those partitions, a call whose source (an ARN) is in another region and encrypted:

* without PreSignedUrl is refused (InvalidParameterCombination);
* with one, it must be that call in the source region: an https URL of the source region's RDS
  endpoint with the same Action, the same source identifier and ``DestinationRegion`` the caller's
  region, signed (SigV4 in the query string, credential scope ``<date>/<source region>/rds/
  aws4_request``), and signed by credentials AWS issued, else InvalidParameterValue ("PreSignedUrl
  could not be authenticated"). The signature is recomputed with the secret of its access key
  (``sigv4.py``): the test bed's own (``test``), or any key IAM or STS issued here (an IAM user's
  access key, an assumed role's temporary one). A key no one issued cannot sign.
"""

from __future__ import annotations

import hmac
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from . import sigv4

# The source parameter of each call that reads a PreSignedUrl.
SOURCES = {
    "CopyDBSnapshot": "SourceDBSnapshotIdentifier",
    "CopyDBClusterSnapshot": "SourceDBClusterSnapshotIdentifier",
    "CreateDBInstanceReadReplica": "SourceDBInstanceIdentifier",
}


def _applies(action: str, source_region: str, region: str) -> bool:
    both = lambda prefix: source_region.startswith(prefix) and region.startswith(prefix)  # noqa: E731
    china = action == "CreateDBInstanceReadReplica" and both("cn-")
    return source_region != region and (both("us-gov-") or china)


def _signature_ok(url: str, pairs: list[tuple[str, str]]) -> bool:
    """SigV4 query authentication: the signature recomputed with its access key's secret."""
    params = dict(pairs)
    key_id, date, region, service, _ = params["X-Amz-Credential"].split("/")
    found = sigv4.issued(key_id)
    if found is None:
        return False
    expected = sigv4.signature(found[0], urlsplit(url).netloc, pairs, params["X-Amz-Date"],
                               f"{date}/{region}/{service}/aws4_request")
    return hmac.compare_digest(expected, params.get("X-Amz-Signature", ""))


def problem(action: str, region: str, source: str, url: str | None) -> str | None:
    """Why the call's PreSignedUrl is refused (None: it is not needed, or it is right)."""
    parts = urlsplit(url or "")
    pairs = parse_qsl(parts.query)
    params = dict(pairs)
    source_region = source.split(":")[3]
    expected_host = f"rds.{source_region}.amazonaws.com" + (".cn" if source_region.startswith("cn-") else "")
    if parts.scheme != "https" or parts.netloc != expected_host:
        return f"PreSignedUrl must be a request to {expected_host}"
    wanted = {"Action": action, SOURCES[action]: source, "DestinationRegion": region,
              "X-Amz-Algorithm": "AWS4-HMAC-SHA256"}
    for key, value in wanted.items():
        if params.get(key) != value:
            return f"PreSignedUrl has {key}={params.get(key)!r}, not {value!r}"
    credential = params.get("X-Amz-Credential", "").split("/")
    if len(credential) != 5 or credential[2:] != [source_region, "rds", "aws4_request"]:
        return "PreSignedUrl is not signed for RDS in the source region"
    if not _signature_ok(url or "", pairs):
        return "PreSignedUrl could not be authenticated."
    return None


def install(lock: Any) -> None:
    from moto.rds.exceptions import RDSClientError
    from moto.rds.models import rds_backends
    from moto.rds.responses import RDSResponse as Response

    def encrypted(action: str, source: str, account: str) -> bool:
        parts = source.split(":")
        backend = rds_backends.get(parts[4] if parts[4] else account, {}).get(parts[3])
        name = parts[-1].lower()
        store = {"CopyDBSnapshot": "database_snapshots", "CopyDBClusterSnapshot": "cluster_snapshots",
                 "CreateDBInstanceReadReplica": "databases"}[action]
        found = getattr(backend, store, {}).get(name) if backend is not None else None
        return bool(getattr(found, "encrypted", None) or getattr(found, "storage_encrypted", None))

    def checked(action: str) -> None:
        orig = getattr(Response, _snake(action))

        def handler(self: Any) -> Any:
            source = str(self.params.get(SOURCES[action]) or "")
            region = self.region
            if source.startswith("arn:") and _applies(action, source.split(":")[3], region):
                with lock:
                    needed = encrypted(action, source, self.current_account)
                url = self.params.get("PreSignedUrl")
                if needed and not url:
                    raise RDSClientError(
                        "InvalidParameterCombination",
                        f"{action} of an encrypted source in another region needs PreSignedUrl.")
                why = problem(action, region, source, url) if url else None
                if why:
                    raise RDSClientError("InvalidParameterValue", why)
            return orig(self)

        setattr(Response, _snake(action), handler)

    for action in SOURCES:
        checked(action)


def _snake(action: str) -> str:
    return {"CopyDBSnapshot": "copy_db_snapshot", "CopyDBClusterSnapshot": "copy_db_cluster_snapshot",
            "CreateDBInstanceReadReplica": "create_db_instance_read_replica"}[action]
