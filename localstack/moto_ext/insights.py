"""Database Insights, Performance Insights and Enhanced Monitoring as RDS shows them, where moto
5.2.5 shows none of them on a DB cluster and no Database Insights mode on a DB instance:

- **Defaults.** RDS turns Database Insights on in its Standard mode by default: an instance or a
  cluster that was given no mode shows ``DatabaseInsightsMode: standard``
  (USER_DatabaseInsights.TurningOnStandard.html; API_DBInstance.html and API_DBCluster.html,
  DatabaseInsightsMode). Performance Insights is off and the monitoring interval 0 unless asked.
  (ACK's rds-controller drifted on exactly this: nil against "standard", PR #309.)
- **Kept.** CreateDBCluster and ModifyDBCluster keep DatabaseInsightsMode, EnablePerformanceInsights
  (shown as PerformanceInsightsEnabled, with a retention of 7 days once on), its retention and KMS
  key, MonitoringInterval and MonitoringRoleArn ("Valid for Cluster Type: Aurora DB clusters and
  Multi-AZ DB clusters", API_CreateDBCluster.html); CreateDBInstance keeps DatabaseInsightsMode.
- **Advanced needs Performance Insights.** "If you set this value to advanced, you must also set
  the PerformanceInsightsEnabled parameter to true and the PerformanceInsightsRetentionPeriod
  parameter to 465" (API_CreateDBInstance.html, API_CreateDBCluster.html, DatabaseInsightsMode):
  otherwise ``InvalidParameterCombination``.
"""

from __future__ import annotations

from typing import Any

KEPT = ("database_insights_mode", "enable_performance_insights", "performance_insights_retention_period",
        "performance_insights_kms_key_id", "monitoring_interval", "monitoring_role_arn")


def _refuse_advanced(mode: Any, enabled: Any, retention: Any) -> None:
    from moto.rds.exceptions import RDSClientError

    if mode == "advanced" and (not enabled or int(retention or 0) < 465):
        raise RDSClientError(
            "InvalidParameterCombination",
            "To set DatabaseInsightsMode to advanced, you must also set PerformanceInsightsEnabled "
            "to true and PerformanceInsightsRetentionPeriod to 465.")


def _check(current: Any, kwargs: dict[str, Any]) -> None:
    """Refuses advanced without 465 days of Performance Insights, after the request's changes."""
    def after(key: str, now: Any) -> Any:
        return kwargs[key] if kwargs.get(key) is not None else now

    mode = after("database_insights_mode", getattr(current, "database_insights_mode", None))
    enabled = after("enable_performance_insights", getattr(current, "performance_insights_enabled", None))
    retention = after("performance_insights_retention_period",
                      getattr(current, "performance_insights_retention_period", None))
    _refuse_advanced(mode, enabled, retention)


def _mode(self: Any) -> str:
    return self.__dict__.get("_ext_insights_mode") or "standard"


def _set_mode(self: Any, value: Any) -> None:
    self.__dict__["_ext_insights_mode"] = value


def _enabled(self: Any) -> bool:
    return bool(self.__dict__.get("enable_performance_insights"))


def _retention(self: Any) -> int | None:
    if not _enabled(self):
        return None
    return int(self.__dict__.get("_ext_pi_retention") or 7)


def _set_retention(self: Any, value: Any) -> None:
    self.__dict__["_ext_pi_retention"] = value


def _interval(self: Any) -> int:
    return int(self.__dict__.get("_ext_monitoring_interval") or 0)


def _set_interval(self: Any, value: Any) -> None:
    self.__dict__["_ext_monitoring_interval"] = value


def install(lock: Any) -> None:
    from moto.rds.models import DBCluster, DBInstance
    from moto.rds.models import RDSBackend as Backend

    DBInstance.database_insights_mode = property(_mode, _set_mode)
    DBCluster.database_insights_mode = property(_mode, _set_mode)
    DBCluster.performance_insights_enabled = property(_enabled)
    DBCluster.performance_insights_retention_period = property(_retention, _set_retention)
    DBCluster.monitoring_interval = property(_interval, _set_interval)

    orig_create_instance = Backend.create_db_instance
    orig_modify_instance = Backend.modify_db_instance
    orig_create_cluster = Backend.create_db_cluster
    orig_modify_cluster = Backend.modify_db_cluster

    def create_db_instance(self: Any, db_kwargs: dict[str, Any]) -> Any:
        _check(None, db_kwargs)
        db = orig_create_instance(self, db_kwargs)
        if db_kwargs.get("database_insights_mode"):
            db.database_insights_mode = db_kwargs["database_insights_mode"]
        return db

    def modify_db_instance(self: Any, db_instance_identifier: str, db_kwargs: dict[str, Any]) -> Any:
        _check(self.databases.get(db_instance_identifier), db_kwargs)
        return orig_modify_instance(self, db_instance_identifier, db_kwargs)

    def create_db_cluster(self: Any, kwargs: dict[str, Any]) -> Any:
        _check(None, kwargs)
        cluster = orig_create_cluster(self, kwargs)
        with lock:
            for key in KEPT:
                if kwargs.get(key) is not None:
                    setattr(cluster, key, kwargs[key])
        return cluster

    def modify_db_cluster(self: Any, kwargs: dict[str, Any]) -> Any:
        _check(self.clusters.get(kwargs.get("db_cluster_identifier")), kwargs)
        return orig_modify_cluster(self, kwargs)

    Backend.create_db_instance = create_db_instance
    Backend.modify_db_instance = modify_db_instance
    Backend.create_db_cluster = create_db_cluster
    Backend.modify_db_cluster = modify_db_cluster
