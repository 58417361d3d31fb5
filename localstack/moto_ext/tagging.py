"""The Resource Groups Tagging API's view of RDS, as AWS gives it.

AWS's GetResources lists RDS DB subnet groups (``rds:subgrp``), DB parameter groups (``rds:pg``), option
groups (``rds:og``), event subscriptions (``rds:es``) and
custom cluster endpoints (``rds:cluster-endpoint``, ``cluster_endpoints.py``)
with their tags, beside instances, clusters and snapshots ("Services that support the Resource
Groups Tagging API", Resource Groups Tagging API User Guide; the resource types as in
``ResourceTypeFilters``). moto 5.2.5's ``RDSBackend.iter_tagged_resources`` yields only clusters,
cluster snapshots, instances, proxies and snapshots; here it yields the groups too.
"""

from __future__ import annotations

from typing import Any, Iterator

from . import cluster_endpoints


def install() -> None:
    from moto.core.resource_tagging import TaggedResource
    from moto.rds.models import RDSBackend

    original = RDSBackend.iter_tagged_resources

    def iter_tagged_resources(self: Any) -> Iterator[Any]:
        yield from original(self)
        for resource_type, groups in (("rds:subgrp", self.subnet_groups), ("rds:pg", self.db_parameter_groups),
                                      ("rds:og", self.option_groups), ("rds:es", self.event_subscriptions)):
            for group in list(groups.values()):
                yield TaggedResource(
                    arn=group.arn,
                    tags={tag["Key"]: tag["Value"] for tag in group.get_tags()},
                    resource_type=resource_type,
                )
        for resource_type, arn, tags in cluster_endpoints.tagged(self):
            yield TaggedResource(arn=arn, tags=tags, resource_type=resource_type)

    RDSBackend.iter_tagged_resources = iter_tagged_resources


def route(lock: Any, marker: str, found: Any) -> None:
    """The tag calls (ListTagsForResource, AddTagsToResource, RemoveTagsFromResource) of an ARN that
    holds ``marker`` (``:integration:``) go to the resource ``found(backend, arn)`` returns, whose
    ``tags`` are a list of ``{"Key", "Value"}``; other ARNs go where they went before."""
    from moto.rds.models import RDSBackend as Backend

    orig_list = Backend.list_tags_for_resource
    orig_add = Backend.add_tags_to_resource
    orig_remove = Backend.remove_tags_from_resource

    def routed(orig: Any) -> Any:
        def handler(backend: Any, arn: str, *args: Any) -> Any:
            if marker not in arn:
                return orig(backend, arn, *args)
            with lock:
                resource = found(backend, arn)
                if orig is orig_list:
                    return list(resource.tags)
                if orig is orig_add:
                    keys = {t["Key"] for t in args[0]}
                    resource.tags = [t for t in resource.tags if t["Key"] not in keys] + \
                        [{"Key": t["Key"], "Value": t["Value"]} for t in args[0]]
                    return list(resource.tags)
                resource.tags = [t for t in resource.tags if t["Key"] not in set(args[0])]
                return None
        return handler

    Backend.list_tags_for_resource = routed(orig_list)
    Backend.add_tags_to_resource = routed(orig_add)
    Backend.remove_tags_from_resource = routed(orig_remove)
