//! A clone that expires (spec.expireAfter, with restoreFrom.cloneOf only), pure: once the
//! DBCluster's creation plus expireAfter has passed, the operator deletes its member DBInstances
//! and the DBCluster itself; their deletion then follows each one's deletionPolicy, as if a person
//! had deleted them. Until then status.expiresAt says when, and the pass is looked at again by
//! then. Nothing else decides it: a cluster that is not a clone never expires (CEL).

use std::time::Duration;

use chrono::{DateTime, Utc};
use kube::runtime::events::EventType;

use super::{ClusterStep, Facts, Plan, Step};

/// When the clone expires (None: it does not, or its creation time is not known yet).
pub fn expires_at(f: &Facts) -> Option<DateTime<Utc>> {
    let after: Duration = (*f.cluster.spec.expire_after.as_ref()?).into();
    let made = f.cluster.metadata.creation_timestamp.as_ref()?;
    let made = DateTime::from_timestamp(made.0.as_second(), 0)?;
    Some(made + after)
}

fn rfc3339(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// What a clone's expiry makes of a pass.
pub enum Expiry {
    /// It has expired: its members and itself are deleted, nothing else.
    Expired(Box<Plan>),
    /// It expires in this long: the pass is looked at again by then.
    In(Duration),
    /// It never expires, or when is not known yet.
    Never,
}

/// The expiry of a pass.
pub(super) fn expiry(f: &Facts) -> Expiry {
    let (Some(at), Ok(now)) = (expires_at(f), DateTime::parse_from_rfc3339(&f.now)) else {
        return Expiry::Never;
    };
    let now = now.to_utc();
    if now < at {
        let left = (at - now).to_std().unwrap_or_default() + Duration::from_secs(1);
        return Expiry::In(left);
    }
    let mut expiry = Plan::new(crate::managed::plan::Requeue::After(f.intervals.busy));
    // The referrers read for an expiring clone, "DBInstance <name>" for a member.
    let members: Vec<String> = (f.referrers.iter())
        .filter_map(|r| r.strip_prefix("DBInstance "))
        .map(str::to_owned)
        .collect();
    let note = format!(
        "the clone expired at {} (expireAfter): deleting the DBCluster{}",
        rfc3339(&at),
        match members.is_empty() {
            true => String::new(),
            false => format!(" and its members ({})", members.join(", ")),
        }
    );
    expiry.event(EventType::Normal, "Expired", "Delete", note);
    expiry.step(Step::Own(ClusterStep::Expire { members }));
    Expiry::Expired(Box::new(expiry))
}

/// status.expiresAt of a clone that expires.
pub fn status_value(f: &Facts) -> Option<String> {
    expires_at(f).map(|t| rfc3339(&t))
}
