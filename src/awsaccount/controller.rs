//! AWSAccount on the skeleton: it reads whether the account can be reached (STS through its
//! chain, in its first region) and who uses it, plans (pure, `plan.rs`) and acts on its finalizer
//! and its cached locations. It has no AWS resource of its own, so it is located nowhere.

use futures::StreamExt;
use kube::ResourceExt;
use kube::runtime::Controller;
use kube::runtime::reflector::ObjectRef;

use super::plan::{self, Facts, Plan, Step};
use super::{AWSAccount, AWSAccountStatus};
use crate::context::Context;
use crate::error::Error;
use crate::managed::Managed;
use crate::managed::apiserver::set_finalizer;
use crate::managed::locate::AccountUsers;
use crate::managed::placement::{Source, Target};

impl Managed for AWSAccount {
    const KIND: &'static str = "AWSAccount";
    type Ctx = Context;
    type Facts = Facts;
    type Step = Step;
    type Plan = Plan;
    type Answer = ();
    type Status = AWSAccountStatus;
    type Where = ();

    /// A resource anywhere in the cluster that starts or stops using an account wakes it (its
    /// count, its deletion): every release sharing the cluster counts the same users.
    fn watches(
        controller: Controller<AWSAccount>,
        ctx: &Context,
        _: Option<&str>,
    ) -> Controller<AWSAccount> {
        let users = ctx.shared::<AccountUsers>().changes(&ctx.client);
        controller.reconcile_on(users.map(|name| ObjectRef::new(&name)))
    }

    /// Located nowhere; with `--shards`, AWSAccounts are the first shard's.
    async fn locate(&self, ctx: &Context) -> Result<(), Error> {
        crate::managed::locate::shard(ctx, crate::managed::locate::ACCOUNTS_SHARD_KEY).map(|_| ())
    }

    fn may_act(ctx: &Context, _: &()) -> bool {
        crate::managed::locate::shard(ctx, crate::managed::locate::ACCOUNTS_SHARD_KEY).is_ok()
    }

    async fn read(&self, ctx: &Context, _: &()) -> Result<Facts, Error> {
        let name = self.name_any();
        let reached = match self.metadata.deletion_timestamp {
            Some(_) => None,
            None => Some(reach(self, ctx).await?),
        };
        let users = ctx.shared::<AccountUsers>().of(&ctx.client, &name).await?;
        Ok(Facts {
            account: self.clone(),
            reached,
            users,
            drift_interval: ctx.locations.intervals().settled,
            now: crate::duration::now(),
        })
    }

    fn plan(facts: &Facts) -> Plan {
        plan::plan(facts)
    }

    async fn act(&self, ctx: &Context, _: &(), step: &Step) -> Result<Option<()>, Error> {
        match step {
            Step::AddFinalizer => set_finalizer(ctx, self, true).await?,
            Step::Forget => ctx.locations.forget(&self.uid().unwrap_or_default()),
            Step::RemoveFinalizer => set_finalizer(ctx, self, false).await?,
        }
        Ok(None)
    }

    fn status(&self) -> Option<&AWSAccountStatus> {
        self.status.as_ref()
    }

    crate::reported_status!(AWSAccountStatus);
}

/// STS's answer through the account's chain in its first region: who the operator is there, or
/// AWS's message why it cannot be.
async fn reach(
    account: &AWSAccount,
    ctx: &Context,
) -> Result<Result<crate::rds_state::AwsIdentity, String>, Error> {
    let Some(region) = account.spec.regions.first() else {
        return Ok(Err("the account allows no region".into()));
    };
    let target = Target {
        source: Source::account(&account.account()),
        region: region.clone(),
    };
    let location = match ctx.locations.get(&target, &ctx.own_secrets(), false).await {
        Ok(location) => location,
        Err(e @ (Error::Account { .. } | Error::Placement { .. })) => {
            return Ok(Err(e.user_facing().map(|(_, m)| m).unwrap_or_default()));
        }
        Err(e) => return Err(e),
    };
    Ok(location
        .identity()
        .await
        .map_err(|e| format!("{} failed: {}: {}", e.operation, e.code, e.message)))
}
