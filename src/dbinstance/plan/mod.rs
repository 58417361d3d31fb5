//! The pure middle of every reconcile: [`Facts`] (what the read step gathered) in, [`Plan`] (the
//! steps to take, the status to report, the Events to publish, when to look again) out. No I/O, no
//! clock (`now` is a fact), no randomness (a candidate password is a fact), no `async`.
//!
//! Where a rule lives:
//! - [`apply`]: a DBInstance that is not being deleted (adopt, foreign; [`create`], [`absence`]
//!   for an out-of-band deletion, [`sync`]: drift, tags, password rotation, connection Secret);
//!   [`password`] for the master password; [`tenancy`] for what one namespace may reach;
//! - [`cleanup`]: a DBInstance that is being deleted (deletion policy, protection);
//! - [`spec`]: what the spec alone decides (validation, tags, hashes, names, intervals);
//! - [`status`]: conditions, readiness and the status written after the act step;
//! - `crate::dbinstance::drift`: which fields differ and the ModifyDBInstance that puts them right.

pub mod absence;
pub mod activation;
pub mod apply;
pub mod backups;
pub mod blue_green;
pub mod cleanup;
pub mod connection_secret;
pub mod create;
pub mod dry_run;
pub mod health;
pub mod maintenance;
pub mod observe;
pub mod password;
pub mod replica;
pub mod roles;
pub mod spec;
pub mod status;
pub mod sync;
pub mod tenancy;
#[cfg(test)]
mod tenancy_tests;
#[cfg(test)]
mod tests;
pub mod types;

use crate::dbinstance::DBInstance;
use crate::rds_state::ObservedInstance;

pub use types::*;

/// The one decision of a reconcile.
pub fn plan(facts: &Facts) -> Plan {
    if spec::paused(&facts.db) {
        let (status, event) = status::paused(facts.db.status.as_ref());
        let mut plan = Plan::new(Requeue::AwaitChange);
        plan.status = Some(status);
        plan.events.extend(event);
        return plan;
    }
    let mut plan = if facts.db.metadata.deletion_timestamp.is_some() {
        cleanup::plan(facts)
    } else {
        let mut plan = apply::plan(facts);
        // Where Ready follows RDS's state, it also waits for the connection Secret.
        if let Some(status) = plan.status.as_mut().filter(|s| s.reports_rds_state()) {
            status.secret_pending = connection_secret::pending(facts, &plan.steps);
        }
        plan
    };
    if let Some(status) = plan.status.as_mut() {
        status.fields.advisories = tenancy::password_advisory(&facts.db).into_iter().collect();
    }
    health::report(facts, &mut plan);
    health::alarms(facts, &mut plan);
    match spec::dry_run(&facts.db) {
        true => dry_run::preview(facts, plan),
        false => plan,
    }
}

/// How the read step looks at RDS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Look {
    /// Not at all: a DBInstance the operator has let go of, or a spec refused before looking.
    None,
    /// Through the shared poll's snapshot where it is fresh enough.
    Shared,
    /// Through the shared poll's snapshot if it has the instance now, without waiting for a first
    /// poll (a new leader's may take a drift interval): an edit not yet reported (or an object
    /// never reported), which a new leader acts on in its first pass.
    SharedNow,
    /// A DescribeDBInstances of its own: a destructive step may follow (deletion).
    Direct,
}

/// How the read step must look at RDS for this DBInstance.
pub fn look(db: &DBInstance) -> Look {
    let deleting = db.metadata.deletion_timestamp.is_some();
    let ours = spec::has_finalizer(db);
    if spec::paused(db) {
        Look::None
    } else if deleting && ours && !spec::observe_only(db) {
        Look::Direct
    } else if deleting || spec::validate(db).is_err() {
        Look::None
    } else if edited(db) {
        Look::SharedNow
    } else {
        Look::Shared
    }
}

/// Whether the spec has a generation no pass has reported yet.
fn edited(db: &DBInstance) -> bool {
    let reported = db
        .status
        .as_ref()
        .and_then(|s| s.reported.observed_generation);
    reported != db.metadata.generation
}

/// What the read step fetches, given the observed instance.
pub fn reads(db: &DBInstance, observed: Option<&ObservedInstance>) -> Reads {
    let connection = db
        .spec
        .connection
        .connection_secret
        .as_ref()
        .map(|c| c.name.clone());
    if spec::paused(db) {
        return Reads::default();
    }
    if db.metadata.deletion_timestamp.is_some() {
        let candidates = std::iter::once(spec::generated_secret_name(db)).chain(connection);
        return Reads {
            release_candidates: candidates.collect(),
            blue_green: blue_green::reads(db, observed),
            ..Reads::default()
        };
    }
    let uid = db.metadata.uid.as_deref().unwrap_or_default();
    if let Some(o) = observed.filter(|o| !spec::owned_by(o, uid)) {
        // Never read a secret of an instance that is not ours. Taking it over or observing it
        // needs the password the spec refers to (the user's own Secret), and whether the
        // DBInstance its tags name still exists.
        if !spec::may_claim(db, o) {
            return Reads::default();
        }
        return Reads {
            password: match password_read(db, None) {
                PasswordRead::Referenced { name, key } => PasswordRead::Referenced { name, key },
                PasswordRead::Managed { .. } => PasswordRead::Managed { secret_arn: None },
                _ => PasswordRead::None,
            },
            connection_secret: connection.filter(|_| spec::observe_only(db)),
            owner: spec::tagged_owner(o, db),
            references: true,
            direct: !spec::observe_only(db),
            observers: true,
            ..Reads::default()
        };
    }
    let gone = observed.is_none() && spec::was_owned(db);
    let recorded = db.status.as_ref().is_some_and(|s| s.common.arn.is_some());
    let restoring = observed.is_none() && !recorded && !spec::observe_only(db);
    Reads {
        password: password_read(db, observed),
        connection_secret: connection.filter(|_| observed.is_some()),
        release_candidates: Vec::new(),
        snapshots_of: gone.then(|| db.identifier()),
        identity: gone,
        owner: None,
        references: true,
        // A promotion (one-way) is decided on what RDS says now.
        direct: observed.is_some_and(|o| retags(db, o) || replica::promotes(db, o)),
        restore_source: db.spec.restore_from.clone().filter(|_| restoring),
        replica_source: observed.is_none() && replica::wanted(db) && !spec::observe_only(db),
        blue_green: blue_green::reads(db, observed).filter(|_| !spec::observe_only(db)),
        groups: group_reads(db, observed),
        observers: false,
        class: class_read(db, observed),
    }
}

/// The class a create is checked against, when RDS has no instance of the identifier: with the
/// spec's version only for a plain create (a restore and a replica take their source's) and only
/// a full one (a major version alone, "8.0" or "16", is RDS's to resolve: the engine alone then).
pub fn class_read(db: &DBInstance, observed: Option<&ObservedInstance>) -> Option<ClassRead> {
    let wanted = observed.is_none() && !spec::observe_only(db);
    if !wanted || db.spec.db_instance_class.is_empty() {
        return None;
    }
    let plain = db.spec.restore_from.is_none() && !replica::wanted(db) && !spec::was_owned(db);
    let full = |v: &&str| match db.spec.engine.as_str() {
        "postgres" | "aurora-postgresql" => v.split('.').count() >= 2,
        _ => v.split('.').count() >= 3,
    };
    let version = (db.spec.engine_version.as_deref())
        .filter(full)
        .filter(|_| plain);
    Some(ClassRead {
        engine: db.spec.engine.clone(),
        version: version.map(str::to_owned),
        class: db.spec.db_instance_class.clone(),
    })
}

/// Whether a sync of our instance would add or remove tags: it is then decided on a direct read,
/// since which keys count as the operator's (and so may later be removed) depends on the tags RDS
/// has now, not on those the shared poll last saw.
fn retags(db: &DBInstance, observed: &ObservedInstance) -> bool {
    if spec::observe_only(db) {
        return false;
    }
    let managed = (db.status.as_ref()).map_or(&[][..], |s| &s.common.applied_tag_keys[..]);
    let (add, remove) = crate::managed::tags::changes(&observed.tags, &spec::tags_of(db), managed);
    !add.is_empty() || !remove.is_empty()
}

/// The groups the spec names by name whose tags must be read: those the plan may send, at
/// creation or as a change (a name RDS already shows is settled).
fn group_reads(db: &DBInstance, observed: Option<&ObservedInstance>) -> Vec<GroupRead> {
    let fields = [
        (
            "dbSubnetGroupName",
            "subgrp",
            db.spec.network.db_subnet_group_name.as_ref(),
            observed.and_then(|o| o.db_subnet_group_name.as_ref()),
        ),
        (
            "dbParameterGroupName",
            "pg",
            db.spec.db_parameter_group_name.as_ref(),
            observed.and_then(|o| o.db_parameter_group_name.as_ref()),
        ),
    ];
    (fields.into_iter())
        .filter_map(|(field, resource, wanted, shown)| {
            // RDS stores group names in lower case: a name it shows, in any case, is settled.
            let name = wanted.filter(|w| !shown.is_some_and(|s| s.eq_ignore_ascii_case(w)))?;
            Some(GroupRead {
                field,
                resource,
                name: name.clone(),
            })
        })
        .collect()
}

fn password_read(db: &DBInstance, observed: Option<&ObservedInstance>) -> PasswordRead {
    // A member's master password is its cluster's, which it never sends.
    if spec::is_member(db) {
        return PasswordRead::None;
    }
    // A replica's is its source's, which it never sends.
    if replica::wanted(db) {
        return replica::password_read(db);
    }
    if let Some(r) = &db.spec.password.master_user_password {
        return PasswordRead::Referenced {
            name: r.name.clone(),
            key: r.key.clone(),
        };
    }
    if db.spec.password.manage_master_user_password == Some(true) {
        return PasswordRead::Managed {
            secret_arn: observed.and_then(|o| o.master_user_secret_arn.clone()),
        };
    }
    PasswordRead::Generated {
        name: spec::generated_secret_name(db),
    }
}

pub use crate::duration::backoff_delay;
