//! Snapshot exports to Amazon S3: StartExportTask and DescribeExportTasks, for a DB snapshot or a
//! DB cluster snapshot alike (the task names its source by ARN: API_StartExportTask.html).

use super::Rds;
use crate::aws_error::{AwsError, aws_error};

/// What StartExportTask is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartExport {
    /// ExportTaskIdentifier: the same for the same object and destination, so a repeat after a
    /// crash is refused (ExportTaskAlreadyExists) and the task is found by it.
    pub identifier: String,
    /// The snapshot's ARN.
    pub source_arn: String,
    pub bucket: String,
    pub prefix: Option<String>,
    pub kms_key_id: String,
    pub iam_role_arn: String,
    pub export_only: Vec<String>,
}

/// An export task as DescribeExportTasks reports it (API_ExportTask.html).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedExport {
    pub identifier: String,
    /// STARTING, IN_PROGRESS, COMPLETE, FAILED, CANCELING or CANCELED.
    pub status: String,
    pub percent_progress: Option<i32>,
    pub failure_cause: Option<String>,
    pub bucket: Option<String>,
    pub prefix: Option<String>,
}

impl Rds {
    /// StartExportTask. A task of the identifier that exists already is success: it was sent
    /// before (a crash between the call and the status write), and is read back by the caller.
    pub async fn start_export_task(&self, req: &StartExport) -> Result<(), AwsError> {
        let result = (self.client.start_export_task())
            .export_task_identifier(&req.identifier)
            .source_arn(&req.source_arn)
            .s3_bucket_name(&req.bucket)
            .set_s3_prefix(req.prefix.clone())
            .kms_key_id(&req.kms_key_id)
            .iam_role_arn(&req.iam_role_arn)
            .set_export_only((!req.export_only.is_empty()).then(|| req.export_only.clone()))
            .send()
            .await
            .map(|_| ())
            .map_err(|e| aws_error("StartExportTask", e, None));
        let result = self.counted("StartExportTask", result);
        match result {
            Err(e) if e.exists() => Ok(()),
            other => other,
        }
    }

    /// DescribeExportTasks of one identifier; None when RDS has no such task.
    pub async fn export_task(&self, identifier: &str) -> Result<Option<ObservedExport>, AwsError> {
        let result = (self.client.describe_export_tasks())
            .export_task_identifier(identifier)
            .send()
            .await
            .map_err(|e| aws_error("DescribeExportTasks", e, None));
        let result = self.counted("DescribeExportTasks", result);
        let out = match result {
            Err(e) if e.gone() => return Ok(None),
            other => other?,
        };
        let text = |v: Option<&str>| v.map(str::to_owned);
        Ok(out.export_tasks().first().map(|t| ObservedExport {
            identifier: t.export_task_identifier().unwrap_or_default().to_owned(),
            status: t.status().unwrap_or_default().to_owned(),
            percent_progress: t.percent_progress(),
            failure_cause: text(t.failure_cause()),
            bucket: text(t.s3_bucket()),
            prefix: text(t.s3_prefix()),
        }))
    }
}
