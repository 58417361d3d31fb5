//! CloudWatch, as the operator reads RDS's metrics there: GetMetricData, up to 500 queries a call
//! ("You can include up to 500 MetricDataQuery structures in one GetMetricData call",
//! API_GetMetricData.html), each the latest minute of one metric of one instance; and the alarms
//! it keeps for a database: PutMetricAlarm (tagged as the operator's), DescribeAlarms by the
//! operator's name prefix (100 a page), DeleteAlarms.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use aws_sdk_cloudwatch::types::{
    ComparisonOperator, Dimension, Metric as CwMetric, MetricAlarm, MetricDataQuery, MetricStat,
    ScanBy, Statistic, Tag,
};

use super::Rds;
use crate::aws_error::{AwsError, aws_error};
use crate::rds_state::{AlarmConfig, CLUSTER_KEY, Metric, ObservedAlarm, database_key};

/// The prefix of every alarm the operator makes: `rds-operator:<identifier>:<metric>`.
pub const ALARM_PREFIX: &str = "rds-operator:";
/// DescribeAlarms' largest page (API_DescribeAlarms.html, MaxRecords: 1 to 100).
const ALARMS_PER_PAGE: i32 = 100;

/// The namespace of RDS's metrics.
pub const NAMESPACE: &str = "AWS/RDS";
/// The dimension that names an instance.
pub const DIMENSION: &str = "DBInstanceIdentifier";
/// The dimension that names a cluster.
pub const CLUSTER_DIMENSION: &str = "DBClusterIdentifier";
/// At most this many queries in one GetMetricData.
pub const QUERIES_PER_CALL: usize = 500;
/// RDS publishes its metrics every minute: the period read.
const PERIOD: i32 = 60;
/// How far back a read looks: two periods, so the latest complete one is in it.
const WINDOW: Duration = Duration::from_secs(2 * PERIOD as u64);

impl Rds {
    /// The latest value CloudWatch has of each (database, metric), in the order asked (None: no
    /// figure in the last two minutes); one GetMetricData per 500, and per page of its answer. A
    /// database is named by its `rds_state::database_key`.
    pub async fn latest_metrics(
        &self,
        wanted: &[(String, Metric)],
    ) -> Result<Vec<Option<f64>>, AwsError> {
        let mut found = vec![None; wanted.len()];
        let end = SystemTime::now();
        let start = end - WINDOW;
        for (chunk_index, chunk) in wanted.chunks(QUERIES_PER_CALL).enumerate() {
            let base = chunk_index * QUERIES_PER_CALL;
            let queries: Vec<MetricDataQuery> = (chunk.iter().enumerate())
                .map(|(i, (identifier, metric))| query(base + i, identifier, *metric))
                .collect();
            let mut token: Option<String> = None;
            loop {
                let result = (self.cloudwatch.get_metric_data())
                    .set_metric_data_queries(Some(queries.clone()))
                    .start_time(start.into())
                    .end_time(end.into())
                    .scan_by(ScanBy::TimestampDescending)
                    .set_next_token(token.take())
                    .send()
                    .await
                    .map_err(|e| aws_error("GetMetricData", e, None));
                let result = self.counted("GetMetricData", result);
                let answer = result?;
                for r in answer.metric_data_results() {
                    let index = (r.id().and_then(|id| id.strip_prefix('m')))
                        .and_then(|n| n.parse::<usize>().ok());
                    if let (Some(i), Some(v)) = (index, r.values().first())
                        && i < found.len()
                        && found[i].is_none()
                    {
                        found[i] = Some(*v);
                    }
                }
                match answer.next_token() {
                    Some(next) if !next.is_empty() => token = Some(next.to_owned()),
                    _ => break,
                }
            }
        }
        Ok(found)
    }
}

impl Rds {
    /// The latest value of a cluster's metric (None: no figure in the last two minutes): one
    /// GetMetricData.
    pub async fn latest_cluster_metric(
        &self,
        identifier: &str,
        metric: Metric,
    ) -> Result<Option<f64>, AwsError> {
        let wanted = [(database_key(identifier, true), metric)];
        Ok(self
            .latest_metrics(&wanted)
            .await?
            .into_iter()
            .flatten()
            .next())
    }
}

/// Query `m<index>`: the metric of the database (`rds_state::database_key`: an instance, or a
/// cluster), by its statistic, per minute.
fn query(index: usize, key: &str, metric: Metric) -> MetricDataQuery {
    let (name, value) = match key.strip_prefix(CLUSTER_KEY) {
        Some(cluster) => (CLUSTER_DIMENSION, cluster),
        None => (DIMENSION, key),
    };
    let dimension = Dimension::builder().name(name).value(value).build();
    let stat = MetricStat::builder()
        .metric(
            CwMetric::builder()
                .namespace(NAMESPACE)
                .metric_name(metric.name())
                .dimensions(dimension)
                .build(),
        )
        .period(PERIOD)
        .stat(metric.statistic())
        .build();
    MetricDataQuery::builder()
        .id(format!("m{index}"))
        .metric_stat(stat)
        .return_data(true)
        .build()
}

impl Rds {
    /// PutMetricAlarm: makes the alarm, or sets its configuration (CloudWatch keeps its state),
    /// with `tags` when it makes it.
    pub async fn put_alarm(
        &self,
        alarm: &AlarmConfig,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        let (comparison, statistic) = (
            match alarm.above {
                true => ComparisonOperator::GreaterThanThreshold,
                false => ComparisonOperator::LessThanThreshold,
            },
            Statistic::from(alarm.metric.statistic()),
        );
        let dimension = Dimension::builder()
            .name(match alarm.cluster {
                true => CLUSTER_DIMENSION,
                false => DIMENSION,
            })
            .value(&alarm.identifier)
            .build();
        let topics: Vec<String> = alarm.topic.iter().cloned().collect();
        let result = (self.cloudwatch.put_metric_alarm())
            .alarm_name(&alarm.name)
            .alarm_description(format!(
                "rds-operator: {} of {}",
                alarm.metric.name(),
                alarm.identifier
            ))
            .namespace(NAMESPACE)
            .metric_name(alarm.metric.name())
            .dimensions(dimension)
            .statistic(statistic)
            .period(PERIOD)
            .evaluation_periods(1)
            .threshold(alarm.threshold)
            .comparison_operator(comparison)
            .treat_missing_data("missing")
            .set_alarm_actions(Some(topics.clone()))
            .set_ok_actions(Some(topics))
            .set_tags(Some(
                (tags.iter())
                    .map(|(k, v)| Tag::builder().key(k).value(v).build())
                    .collect(),
            ))
            .send()
            .await
            .map_err(|e| aws_error("PutMetricAlarm", e, None));
        let result = self.counted("PutMetricAlarm", result);
        result.map(|_| ())
    }

    /// DeleteAlarms of these alarms (up to 100 names a call; one already gone is no error).
    pub async fn delete_alarms(&self, names: &[String]) -> Result<(), AwsError> {
        for chunk in names.chunks(ALARMS_PER_PAGE as usize) {
            let result = (self.cloudwatch.delete_alarms())
                .set_alarm_names(Some(chunk.to_vec()))
                .send()
                .await
                .map_err(|e| aws_error("DeleteAlarms", e, None));
            let result = self.counted("DeleteAlarms", result);
            match result {
                Err(e) if e.class == crate::aws_error::ErrorClass::NotFound => {}
                other => other.map(|_| ())?,
            }
        }
        Ok(())
    }

    /// Every alarm of the operator's (by its name prefix) on an RDS metric, one DescribeAlarms a
    /// page of 100.
    pub async fn operator_alarms(&self) -> Result<Vec<ObservedAlarm>, AwsError> {
        let mut found = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let result = (self.cloudwatch.describe_alarms())
                .alarm_name_prefix(ALARM_PREFIX)
                .max_records(ALARMS_PER_PAGE)
                .set_next_token(token.take())
                .send()
                .await
                .map_err(|e| aws_error("DescribeAlarms", e, None));
            let result = self.counted("DescribeAlarms", result);
            let page = result?;
            found.extend(page.metric_alarms().iter().filter_map(observed_alarm));
            match page.next_token() {
                Some(next) if !next.is_empty() => token = Some(next.to_owned()),
                _ => return Ok(found),
            }
        }
    }
}

/// An alarm of the operator's as CloudWatch describes it; None for one on another metric.
fn observed_alarm(a: &MetricAlarm) -> Option<ObservedAlarm> {
    let metric = (Metric::KNOWN.into_iter()).find(|m| Some(m.name()) == a.metric_name())?;
    let dimension = (a.dimensions().iter())
        .find(|d| matches!(d.name(), Some(DIMENSION | CLUSTER_DIMENSION)))?;
    let (identifier, cluster) = (
        dimension.value()?,
        dimension.name() == Some(CLUSTER_DIMENSION),
    );
    let above = matches!(
        a.comparison_operator(),
        Some(ComparisonOperator::GreaterThanThreshold)
    );
    Some(ObservedAlarm {
        config: AlarmConfig {
            name: a.alarm_name()?.to_owned(),
            identifier: identifier.to_owned(),
            cluster,
            metric,
            above,
            threshold: a.threshold().unwrap_or_default(),
            topic: a.alarm_actions().first().cloned(),
        },
        state: (a.state_value())
            .map_or("INSUFFICIENT_DATA", |s| s.as_str())
            .to_owned(),
        reason: a.state_reason().map(str::to_owned),
    })
}
