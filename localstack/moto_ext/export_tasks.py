"""Snapshot exports to Amazon S3 as RDS runs them, on moto's export tasks.

moto 5.2.5 makes an export task ``complete`` (lower case) the moment StartExportTask returns, to any
bucket, role and key, and writes nothing. RDS ("Exporting DB snapshot data to Amazon S3",
USER_ExportSnapshot.html; API_StartExportTask.html; API_ExportTask.html):

- **Refusals at the call.** The bucket must exist (InvalidS3BucketFault), and so must the IAM role
  RDS writes to it as (IamRoleNotFound); both are looked up in moto's S3 and IAM of the account.
  The snapshot must be ``available`` (InvalidExportSourceState, moto's). An identifier already
  used is ExportTaskAlreadyExists (moto's): an export task is made once.
- **States.** Status is ``STARTING``, then ``IN_PROGRESS`` with PercentProgress rising, then
  ``COMPLETE`` at 100 after ``export_delay`` seconds (MOTO_RDS_EXPORT_DELAY, or the snapshot
  delay), with TaskStartTime and TaskEndTime; CancelExportTask makes it ``CANCELED`` (RDS passes
  through ``CANCELING``), and refuses a task already done (InvalidExportTaskStateFault). These are
  the values API_ExportTask.html lists, in upper case.
- **Failure.** A task whose bucket is gone when it would complete is ``FAILED`` with a
  FailureCause naming the bucket, as RDS reports an export that cannot write.
- **What it writes.** On COMPLETE, ``<prefix>/<task>/export_info_<task>.json`` in the bucket: the
  task, its source and its status, as RDS's export writes a summary file of that name
  (USER_ExportSnapshot.html, "the export_info" file). RDS also writes the data itself as Apache
  Parquet, one folder per table; here no Parquet is written (no Parquet library in the test bed).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from . import trust

DONE = ("COMPLETE", "FAILED", "CANCELED")


def state(created: float, delay: float, now: float) -> tuple[str, int]:
    """A task's (Status, PercentProgress) `now`, made at `created`, taking `delay` seconds."""
    if delay <= 0 or now - created >= delay:
        return "COMPLETE", 100
    if now - created < delay / 4:
        return "STARTING", 0
    return "IN_PROGRESS", min(99, int(100 * (now - created) / delay))


def install(lock: Any, config: dict[str, float]) -> None:
    from moto.rds.exceptions import RDSClientError
    from moto.rds.models import ExportTask, RDSBackend as Backend
    from moto.s3.models import s3_backends

    config["export_delay"] = float(os.environ.get("MOTO_RDS_EXPORT_DELAY") or config.get("snapshot_delay", 0.0))

    def bucket(account: str, name: str) -> Any:
        return s3_backends[account]["aws"].buckets.get(name)

    orig_start = Backend.start_export_task
    orig_cancel = Backend.cancel_export_task

    def source_exists(backend: Any, arn: str) -> bool:
        # An automated snapshot's identifier has a colon of its own (rds:<instance>-<time>).
        cluster = ":cluster-snapshot:" in arn
        name = arn.split(":cluster-snapshot:" if cluster else ":snapshot:", 1)[-1]
        return name in (backend.cluster_snapshots if cluster else backend.database_snapshots)

    def start_export_task(self: Any, kwargs: dict[str, Any]) -> Any:
        name = kwargs.get("s3_bucket_name") or ""
        if not source_exists(self, str(kwargs.get("source_arn") or "")):
            return orig_start(self, kwargs)  # moto's DBSnapshotNotFound or DBClusterSnapshotNotFoundFault
        if bucket(self.account_id, name) is None:
            raise RDSClientError("InvalidS3BucketFault", f"The S3 bucket {name} doesn't exist.")
        if trust.role(kwargs.get("iam_role_arn") or "") is None:
            raise RDSClientError("IamRoleNotFound", f"IAM role {kwargs.get('iam_role_arn')} not found.")
        with lock:
            task = orig_start(self, kwargs)
            task.__dict__["_ext_created"] = time.monotonic()
            task.task_start_time = None
            return task

    def status_of(self: Any) -> str:
        with lock:
            fixed = self.__dict__.get("_ext_status")
            if fixed is not None:
                return fixed
            created = self.__dict__.get("_ext_created")
            if created is None:
                return self.__dict__.get("_status", "COMPLETE")
            status, percent = state(created, config["export_delay"], time.monotonic())
            self.__dict__["_ext_percent"] = percent
            if status == "COMPLETE":
                finish(self)
                return self.__dict__["_ext_status"]
            if status == "IN_PROGRESS" and self.__dict__.get("task_start_time") is None:
                self.__dict__["task_start_time"] = self.created_at
            return status

    def set_status(self: Any, value: str) -> None:
        # moto's constructor sets "complete" and its cancel "canceled": RDS's values are upper case.
        if value == "canceled":
            self.__dict__["_ext_status"] = "CANCELED"
        elif "_ext_created" in self.__dict__:
            self.__dict__["_ext_status"] = value
        else:
            self.__dict__["_status"] = value

    def finish(task: Any) -> None:
        target = bucket(task.backend.account_id, task.s3_bucket)
        task.__dict__["task_end_time"] = task.created_at
        if target is None:
            task.__dict__["_ext_status"] = "FAILED"
            task.__dict__["failure_cause"] = (f"The S3 bucket {task.s3_bucket} doesn't exist: the export "
                                              "could not write its data.")
            return
        prefix = f"{task.s3_prefix.strip('/')}/" if task.s3_prefix else ""
        key = f"{prefix}{task.export_task_identifier}/export_info_{task.export_task_identifier}.json"
        summary = {"exportTaskIdentifier": task.export_task_identifier, "sourceArn": task.source_arn,
                   "exportOnly": task.export_only or [], "status": "COMPLETE"}
        s3_backends[task.backend.account_id]["aws"].put_object(task.s3_bucket, key, json.dumps(summary).encode())
        task.__dict__["_ext_status"] = "COMPLETE"
        task.__dict__["_ext_percent"] = 100

    def percent_of(self: Any) -> int:
        _ = self.status  # advances the task
        return self.__dict__.get("_ext_percent", 100)

    def cancel_export_task(self: Any, export_task_identifier: str) -> Any:
        with lock:
            task = self.export_tasks.get(export_task_identifier)
            if task is not None and task.status in DONE:
                raise RDSClientError("InvalidExportTaskStateFault",
                                     f"Export task {export_task_identifier} is {task.status} and cannot be canceled.")
            return orig_cancel(self, export_task_identifier)

    ExportTask.status = property(status_of, set_status)
    ExportTask.percent_progress = property(percent_of)
    Backend.start_export_task = start_export_task
    Backend.cancel_export_task = cancel_export_task
