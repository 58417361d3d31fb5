"""Pages of a Describe* answer, as the RDS API reference gives them: ``MaxRecords`` 20 to 100
(default 100) and an opaque ``Marker`` (e.g.
https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DescribeDBClusters.html,
https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DescribeDBSnapshots.html)."""

from __future__ import annotations

from typing import Any


def size(params: dict[str, Any]) -> int:
    """The page size asked for, refused outside 20 to 100 as RDS does."""
    from moto.rds.exceptions import RDSClientError

    value = int(params.get("MaxRecords") or 100)
    if not 20 <= value <= 100:
        raise RDSClientError("InvalidParameterValue",
                             f"Invalid value {value} for MaxRecords. Must be between 20 and 100")
    return value


def page(params: dict[str, Any], key: str, items: list[Any]) -> dict[str, Any]:
    """The page of `items` (already in a stable order) the request's Marker and MaxRecords ask
    for, under `key`, with the Marker of the next page while there is one."""
    start, count = int(params.get("Marker") or 0), size(params)
    result: dict[str, Any] = {key: items[start:start + count]}
    if start + count < len(items):
        result["Marker"] = str(start + count)
    return result
