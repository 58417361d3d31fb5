//! The OptionGroup reconcile: what it reads (the group with its options and tags, from the shared
//! listing while it may serve, else from RDS) and how it acts; the shell, the deletion (waiting
//! while a DBInstance refers to it) and the tag steps are the group kinds' (`managed::named`).

use crate::error::Error;
use crate::locations::Location;
use crate::managed::named::{NamedKind, Shared};

use super::plan::Own;
use super::{ObservedOptionGroup, OptionGroup, OptionGroupStatus};
use crate::optiongroup::aws::OptionGroupCalls;

impl NamedKind for OptionGroup {
    type Observed = ObservedOptionGroup;
    type Extra = ();
    type Own = Own;
    type Status = OptionGroupStatus;
    const LABEL: &'static str = "OptionGroup";
    const WHAT: &'static str = "option group";
    const NAME_FIELD: &'static str = "optionGroupName";

    async fn observe(
        &self,
        shared: &Shared,
        at: &Location,
    ) -> Result<(Option<ObservedOptionGroup>, ()), Error> {
        let name = self.name_in_rds();
        // The shared listing's entry (options and tags with it) while it may serve; at deletion,
        // RDS is asked directly.
        let listed = (at.observer.listing::<ObservedOptionGroup>())
            .get(&name, shared.drift_interval)
            .filter(|_| self.metadata.deletion_timestamp.is_none());
        let observed = match listed {
            Some(found) => Some(found),
            None => at.rds.option_group(&name).await?,
        };
        Ok((observed, ()))
    }

    async fn act(&self, _: &Shared, at: &Location, step: &Own) -> Result<(), Error> {
        Ok(at.rds.option_group_call(step).await?)
    }

    async fn delete(&self, _: &Shared, at: &Location, name: &str) -> Result<(), Error> {
        Ok(at.rds.delete_option_group(name).await?)
    }

    fn records_after_failure(fields: &mut OptionGroupStatus, previous: &OptionGroupStatus) {
        crate::managed::named::keep_applied(&mut fields.applied_options, &previous.applied_options);
    }

    crate::named_fields!(OptionGroupStatus, option_group_name);
}
