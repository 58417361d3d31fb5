//! The shared poll of the groups: every DB subnet group and DB parameter group of the account and
//! region, listed 100 a page (DescribeDBSubnetGroups, DescribeDBParameterGroups) with their tags
//! (GetResources, 100 a page), once per drift interval, from the first time a group kind asks. A
//! group's reconcile then costs no describe and no ListTagsForResource while the listing is fresh
//! and the operator has not changed the group since; a parameter group still reads its parameters
//! (RDS has no listing of them across groups). Only presence is served: a group the listing lacks
//! is read directly, so no create is decided on the poll.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::dbparametergroup::ObservedParameterGroup;
use crate::dbsubnetgroup::ObservedSubnetGroup;
use crate::lock;
use crate::managed::aws_error::AwsError;
use crate::rds::Rds;

/// The groups as the last listing found them.
#[derive(Default)]
pub struct GroupPoll {
    wanted: AtomicBool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// When the last complete listing started.
    read_at: Option<Instant>,
    subnet: HashMap<String, ObservedSubnetGroup>,
    parameter: HashMap<String, ObservedParameterGroup>,
    /// Groups the operator changed, and when: a listing that started before is stale for them.
    mutated: HashMap<String, Instant>,
}

impl GroupPoll {
    /// Whether a group kind asked: only then is the listing made.
    pub fn wanted(&self) -> bool {
        self.wanted.load(Ordering::Relaxed)
    }

    /// The subnet group of this name as the listing has it, when fresh (within `max_age`) and not
    /// changed by the operator since; None: read it directly.
    pub fn subnet_group(&self, name: &str, max_age: Duration) -> Option<ObservedSubnetGroup> {
        self.wanted.store(true, Ordering::Relaxed);
        let state = lock(&self.state);
        state.fresh(name, max_age)?;
        state.subnet.get(name).cloned()
    }

    /// The parameter group of this name (without its parameters) as the listing has it, as for
    /// [`Self::subnet_group`].
    pub fn parameter_group(&self, name: &str, max_age: Duration) -> Option<ObservedParameterGroup> {
        self.wanted.store(true, Ordering::Relaxed);
        let state = lock(&self.state);
        state.fresh(name, max_age)?;
        state.parameter.get(name).cloned()
    }

    /// The operator changed this group: read it directly until a listing started after.
    pub fn mutated(&self, name: &str) {
        lock(&self.state)
            .mutated
            .insert(name.to_lowercase(), Instant::now());
    }

    /// One listing of both kinds and their tags; the snapshot is replaced only when every page
    /// was read.
    pub async fn poll(&self, rds: &Rds) -> Result<(), AwsError> {
        let started = Instant::now();
        let mut subnet = rds.subnet_group_pages().await?;
        let mut parameter = rds.parameter_group_pages().await?;
        let tags = rds.group_tags().await?;
        let tags_of = |arn: &Option<String>| (arn.as_ref()).and_then(|a| tags.get(a)).cloned();
        for g in &mut subnet {
            g.tags = tags_of(&g.arn).unwrap_or_default();
        }
        for g in &mut parameter {
            g.tags = tags_of(&g.arn).unwrap_or_default();
        }
        let mut state = lock(&self.state);
        state.subnet = (subnet.into_iter())
            .map(|g| (g.name.to_lowercase(), g))
            .collect();
        state.parameter = (parameter.into_iter())
            .map(|g| (g.name.to_lowercase(), g))
            .collect();
        state.mutated.retain(|_, at| *at >= started);
        state.read_at = Some(started);
        Ok(())
    }
}

impl State {
    /// Some when the listing may serve this group.
    fn fresh(&self, name: &str, max_age: Duration) -> Option<()> {
        let read_at = self.read_at?;
        let unchanged = self.mutated.get(name).is_none_or(|at| *at < read_at);
        (read_at.elapsed() <= max_age && unchanged).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poll_with(name: &str) -> GroupPoll {
        let poll = GroupPoll::default();
        {
            let mut state = lock(&poll.state);
            state.read_at = Some(Instant::now());
            let group = ObservedSubnetGroup {
                name: name.into(),
                ..Default::default()
            };
            state.subnet.insert(name.into(), group);
        }
        poll
    }

    #[test]
    fn the_listing_serves_a_group_only_when_fresh_unchanged_and_present() {
        let minute = Duration::from_secs(60);
        let poll = poll_with("coffee");
        assert!(!GroupPoll::default().wanted());
        assert!(
            poll.subnet_group("coffee", minute).is_some(),
            "fresh and present"
        );
        assert!(poll.wanted(), "asking starts the listing");
        assert!(
            poll.subnet_group("tea", minute).is_none(),
            "absent: read directly"
        );
        assert!(
            poll.subnet_group("coffee", Duration::ZERO).is_none(),
            "older than asked"
        );
        poll.mutated("coffee");
        assert!(
            poll.subnet_group("coffee", minute).is_none(),
            "changed by the operator since"
        );
        assert!(
            GroupPoll::default()
                .subnet_group("coffee", minute)
                .is_none(),
            "never listed"
        );
    }
}
