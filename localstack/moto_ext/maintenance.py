"""Pending maintenance actions, which moto 5.2.5 does not have, as the API reference describes them
(https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/):

* DescribePendingMaintenanceActions (API_DescribePendingMaintenanceActions.html): every resource of
  the account and region that has actions, as ``ResourcePendingMaintenanceActions``
  (``ResourceIdentifier``: its ARN, ``PendingMaintenanceActionDetails``), or those of one
  ``ResourceIdentifier``; the ``db-instance-id`` and ``db-cluster-id`` filters (identifiers or
  ARNs); pages (``MaxRecords`` 20 to 100, ``Marker``).
* Each action as API_PendingMaintenanceAction.html has it: ``Action``, ``Description``,
  ``AutoAppliedAfterDate``, ``ForcedApplyDate``, ``OptInStatus``, ``CurrentApplyDate``.
* ApplyPendingMaintenanceAction (API_ApplyPendingMaintenanceAction.html): ``OptInType`` immediate
  (applied now: an instance is ``maintenance`` for the modify delay, "DB instance status" in
  accessing-monitoring.html, and the action leaves the list), next-maintenance (``OptInStatus``
  next-maintenance, ``CurrentApplyDate`` the start of the resource's next maintenance window;
  applied at the first request that comes inside that window) or undo-opt-in; any other type is
  InvalidParameterValue, a resource or action RDS lacks ResourceNotFoundFault.

Actions are injected as the switchover failure is: ``POST /_rds_ext/maintenance?identifier=ID&
action=system-update`` (``&cluster=1`` for a DB cluster, ``&description=...``), with an
AutoAppliedAfterDate two weeks on and a ForcedApplyDate four; ``GET /_rds_ext/maintenance?
identifier=ID`` lists what was applied to it, how (opt-in type) and when (epoch seconds).
"""

from __future__ import annotations

import datetime
import time
from typing import Any

from . import paging

DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
OPT_IN_TYPES = ("immediate", "next-maintenance", "undo-opt-in")
# identifier -> [{"action", "opt_in", "at"}], of every account and region.
APPLIED: dict[str, list[dict[str, Any]]] = {}


def _minute_of_week(spec: str) -> int:
    day, hour, minute = spec.split(":")
    return DAYS.index(day.lower()[:3]) * 1440 + int(hour) * 60 + int(minute)


def window(spec: str | None) -> tuple[int, int] | None:
    """A ddd:hh24:mi-ddd:hh24:mi window as minutes of the week (start, end), end past the week's
    end when it wraps."""
    try:
        start, end = (_minute_of_week(p) for p in str(spec).split("-"))
    except (ValueError, AttributeError):
        return None
    return start, end if end > start else end + 7 * 1440


def in_window(spec: str | None, now: datetime.datetime) -> bool:
    w = window(spec)
    if w is None:
        return False
    minute = now.weekday() * 1440 + now.hour * 60 + now.minute
    return any(w[0] <= m < w[1] for m in (minute, minute + 7 * 1440))


def next_start(spec: str | None, now: datetime.datetime) -> datetime.datetime | None:
    w = window(spec)
    if w is None:
        return None
    monday = (now - datetime.timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    start = monday + datetime.timedelta(minutes=w[0])
    return start if start + datetime.timedelta(minutes=w[1] - w[0]) > now else start + datetime.timedelta(days=7)


def store(backend: Any) -> dict[str, list[dict[str, Any]]]:
    """ARN -> pending actions."""
    return backend.__dict__.setdefault("_ext_maintenance", {})


def _resource(backend: Any, arn: str) -> Any:
    if ":cluster:" in arn:
        return backend.clusters.get(arn.split(":cluster:", 1)[1])
    if ":db:" in arn:
        return backend.databases.get(arn.split(":db:", 1)[1])
    return None


def _iso(t: datetime.datetime | None) -> str | None:
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z") if t is not None else None


def install(lock: Any, config: dict[str, float], start_phase: Any) -> None:
    from moto.core.responses import ActionResult
    from moto.rds import utils
    from moto.rds.exceptions import RDSClientError
    from moto.rds.models import RDSBackend as Backend
    from moto.rds.responses import RDSResponse as Response

    # A weekly window may end in the next week: RDS's own example is "Sun:23:45-Mon:00:15" (its
    # InvalidParameterValue message for a malformed PreferredMaintenanceWindow, which moto repeats;
    # API_CreateDBInstance.html, PreferredMaintenanceWindow: "Must be at least 30 minutes"). moto
    # counted such a window's end a week early and refused it as "Maintenance window must be less
    # than 24 hours" (a DBInstance whose window was moved to now failed every Sunday at 23:00 UTC).
    weekly = utils.get_start_date_end_date

    def get_start_date_end_date(base_date: str, spec: str) -> tuple[datetime.datetime, datetime.datetime]:
        start, end = weekly(base_date, spec)
        return start, end if end >= start else end + datetime.timedelta(days=7)

    utils.get_start_date_end_date = get_start_date_end_date

    def apply(backend: Any, arn: str, action: dict[str, Any], opt_in: str) -> None:
        store(backend)[arn].remove(action)
        if not store(backend)[arn]:
            store(backend).pop(arn)
        identifier = arn.rsplit(":", 1)[1]
        APPLIED.setdefault(identifier, []).append({"action": action["Action"], "opt_in": opt_in, "at": time.time()})
        resource = _resource(backend, arn)
        if resource is not None and ":db:" in arn and config["modify_delay"] > 0:
            start_phase(resource, "maintenance", config["modify_delay"])

    def advance(backend: Any) -> None:
        """Applies the actions opted in for the next window whose window has come."""
        now = datetime.datetime.now(datetime.timezone.utc)
        for arn, actions in list(store(backend).items()):
            resource = _resource(backend, arn)
            if resource is None:
                store(backend).pop(arn, None)
                continue
            for action in list(actions):
                if action.get("OptInStatus") == "next-maintenance" and \
                        in_window(getattr(resource, "preferred_maintenance_window", None), now):
                    apply(backend, arn, action, "next-maintenance")

    def describe(self: Any) -> Any:
        params = self.params
        paging.size(params)
        with lock:
            advance(self.backend)
            wanted = params.get("ResourceIdentifier")
            filters = {f["Name"]: [str(v).lower() for v in f.get("Values", [])] for f in params.get("Filters", [])}

            def keep(arn: str) -> bool:
                if wanted and arn != wanted:
                    return False
                for name, marker in (("db-instance-id", ":db:"), ("db-cluster-id", ":cluster:")):
                    if name in filters:
                        ids = {v.rsplit(":", 1)[-1] if v.startswith("arn:") else v for v in filters[name]}
                        if marker not in arn or arn.rsplit(":", 1)[1].lower() not in ids:
                            return False
                return True

            rows = [{"ResourceIdentifier": arn, "PendingMaintenanceActionDetails": [dict(a) for a in actions]}
                    for arn, actions in sorted(store(self.backend).items()) if keep(arn)]
            return ActionResult(paging.page(params, "PendingMaintenanceActions", rows))

    def apply_action(self: Any) -> Any:
        params = self.params
        with lock:
            advance(self.backend)
            arn, name = str(params.get("ResourceIdentifier") or ""), str(params.get("ApplyAction") or "")
            opt_in = str(params.get("OptInType") or "")
            if opt_in not in OPT_IN_TYPES:
                raise RDSClientError("InvalidParameterValue",
                                     f"OptInType must be one of {', '.join(OPT_IN_TYPES)}.")
            resource = _resource(self.backend, arn)
            action = next((a for a in store(self.backend).get(arn, []) if a["Action"] == name), None)
            if resource is None or action is None:
                raise RDSClientError("ResourceNotFoundFault",
                                     f"No pending maintenance action {name} for resource {arn}.")
            if opt_in == "immediate":
                apply(self.backend, arn, action, opt_in)
            elif opt_in == "next-maintenance":
                action["OptInStatus"] = "next-maintenance"
                start = next_start(getattr(resource, "preferred_maintenance_window", None),
                                   datetime.datetime.now(datetime.timezone.utc))
                action["CurrentApplyDate"] = _iso(start)
            else:
                action.pop("OptInStatus", None)
                action.pop("CurrentApplyDate", None)
            advance(self.backend)
            details = [dict(a) for a in store(self.backend).get(arn, [])]
            return ActionResult({"ResourcePendingMaintenanceActions": {
                "ResourceIdentifier": arn, "PendingMaintenanceActionDetails": details}})

    orig_describe_instances = Backend.describe_db_instances

    def describe_db_instances(self: Any, *args: Any, **kwargs: Any) -> Any:
        with lock:
            advance(self)
        return orig_describe_instances(self, *args, **kwargs)

    Backend.describe_db_instances = describe_db_instances
    Response.describe_pending_maintenance_actions = describe
    Response.apply_pending_maintenance_action = apply_action


def control(method: str, query: dict[str, str]) -> tuple[str, Any]:
    """``/_rds_ext/maintenance``: inject an action (POST), or list those applied (GET)."""
    from moto.rds.models import rds_backends

    identifier = query.get("identifier", "").lower()
    if method != "POST":
        return "200 OK", APPLIED.get(identifier, [])
    table = "clusters" if query.get("cluster") else "databases"
    for account in rds_backends.values():
        for backend in account.values():
            resource = getattr(backend, table).get(identifier)
            if resource is None:
                continue
            now = datetime.datetime.now(datetime.timezone.utc)
            action = {
                "Action": query.get("action", "system-update"),
                "Description": query.get("description", "New Operating System update is available"),
                "AutoAppliedAfterDate": _iso(now + datetime.timedelta(days=14)),
                "ForcedApplyDate": _iso(now + datetime.timedelta(days=28)),
            }
            store(backend).setdefault(resource.arn, []).append(action)
            return "200 OK", action
    return "404 Not Found", {"error": f"no {table} {identifier}"}
