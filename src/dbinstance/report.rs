//! Step 4 of a reconcile, report: the plan's status and Events, amended by what the act step
//! achieved (RDS's answers; Events only after the steps they follow succeeded), and the failure
//! report when reading or acting failed.

use kube::ResourceExt;
use tracing::warn;

use crate::context::Context;
use crate::dbinstance::act::Achieved;
use crate::dbinstance::plan::StatusPlan;
use crate::dbinstance::plan::status;
use crate::dbinstance::plan::{Gauge, Plan, PlannedEvent};
use crate::dbinstance::{DBInstance, DBInstanceStatus};
use crate::error::Error;
use crate::managed;

/// Publishes the Events whose steps succeeded and, when every step did, writes the status.
pub async fn write(
    ctx: &Context,
    db: &DBInstance,
    plan: &Plan,
    achieved: &Achieved,
    now: &str,
) -> Result<(), Error> {
    if let Some(line) = &plan.log {
        tracing::info!("{line}");
    }
    for event in plan.events.iter().filter(|e| e.after <= achieved.completed) {
        publish(ctx, db, event).await;
    }
    if achieved.error.is_some() {
        return Ok(());
    }
    let uid = db.uid().unwrap_or_default();
    if let Some(planned) = &plan.status {
        let status = write_status(ctx, db, planned, achieved, now).await?;
        if planned.reports_rds_state() {
            let state = status.db_instance_status.as_deref().unwrap_or_default();
            ctx.metrics.set_state(&uid, Some(state));
        }
    }
    if plan.gauge == Gauge::Remove {
        ctx.metrics.set_state(&uid, None);
    }
    if !plan.drift_corrected.is_empty() {
        ctx.metrics
            .drift_corrected(plan.drift_corrected.iter().copied());
    }
    Ok(())
}

/// Ready=False and Synced=False with the error's reason, for an error the user can act on; best
/// effort: a failure to report is logged, not raised over the original error.
pub async fn failure(ctx: &Context, db: &DBInstance, error: &Error) {
    let Some((reason, message)) = error.user_facing() else {
        return;
    };
    let (planned, event) = status::failure(db.status.as_ref(), &reason, &message);
    if let Some(event) = event {
        publish(ctx, db, &event).await;
    }
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    if let Err(e) = write_status(ctx, db, &planned, &Achieved::default(), &now).await {
        warn!(error = %e, "could not report failure in status");
    }
}

async fn write_status(
    ctx: &Context,
    db: &DBInstance,
    planned: &StatusPlan,
    achieved: &Achieved,
    now: &str,
) -> Result<DBInstanceStatus, Error> {
    let generation = db.metadata.generation;
    let response = achieved.response.as_ref();
    let status = status::finish(planned, db.status.as_ref(), response, generation, now);
    if db.status.as_ref() == Some(&status) {
        return Ok(status);
    }
    managed::patch_status(ctx, db, &status).await?;
    Ok(status)
}

async fn publish(ctx: &Context, db: &DBInstance, planned: &PlannedEvent) {
    managed::publish(&ctx.recorder, db, planned).await;
}
