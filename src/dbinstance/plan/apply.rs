//! Rules for a DBInstance that is not being deleted: whose instance the identifier names (create
//! or restore in `create.rs`, adopt our own, refuse a foreign one, out-of-band deletion in
//! `absence.rs`, our own in `sync.rs`).

use kube::runtime::events::EventType;

use crate::dbinstance::{ADOPTED_TAG, AdoptionPolicy, OWNER_NAME_TAG, OWNER_TAG, RETAINED_TAG};
use crate::rds_state::ObservedInstance;

use super::create::{Creation, create, create_replica, restore_source};
use super::password::{password, password_refused};
use super::spec::{self, owned_by};
use super::status::{observed_plan, observed_status, refuse};
use super::tenancy::{self, Claim};
use super::types::{Facts, PasswordFacts, Plan, Requeue, Step};
use super::{absence, observe, replica, sync};

/// Whose instance the identifier names, and so which branch of the rules applies.
#[derive(Clone, Debug, PartialEq)]
pub enum Ownership<'a> {
    /// No instance with the identifier, and none was ever observed for this DBInstance: create it.
    Create,
    /// No instance with the identifier, and adoptionPolicy Adopt creates none: report and wait.
    NothingToAdopt,
    /// Our instance was observed before and is gone: deleted (or renamed) outside the operator.
    Gone,
    /// The instance this DBInstance observed, never its own, is gone: nothing is created.
    Lost,
    /// An instance with the identifier exists but is not ours: never touch it.
    Foreign(Foreign),
    /// An instance that is not ours and may be taken over.
    Adopt(&'a ObservedInstance, Adoptee),
    /// Our instance: report what RDS says and put right what differs.
    Ours(&'a ObservedInstance),
}

/// Why an instance that is not ours is left alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Foreign {
    /// No adoption policy asks for it.
    NotAsked { retained_here: bool },
    /// It belongs to a DBInstance of another namespace.
    OtherNamespace,
    /// It belongs to another DBInstance of this namespace that still exists (or whose existence
    /// could not be learnt).
    Claimed,
    /// No DBInstance owns it, and nothing grants this namespace its adoption.
    NotGranted,
    /// No DBInstance owns it, and a DBInstance of another namespace observes it.
    ObservedElsewhere,
}

/// What kind of instance is adopted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adoptee {
    /// No ownership tags: created by the console, CloudFormation, Terraform...
    Untagged,
    /// Retained by a DBInstance of this namespace and name.
    Retained,
    /// Tagged for a DBInstance of this namespace that no longer exists.
    Unclaimed,
}

/// Whose instance the identifier names. An instance recorded in status counts as once there only
/// when it was this DBInstance's own (`status.owned`); `f.owner_alive` says whether the DBInstance
/// the instance's tags name still exists; an untagged one is claimed only where it is granted.
pub fn ownership(f: &Facts) -> Ownership<'_> {
    let db = &f.db;
    let uid = db.metadata.uid.as_deref().unwrap_or_default();
    let policy = spec::adoption_policy(db).unwrap_or_default();
    let asked = policy != AdoptionPolicy::Never;
    let recorded = db.status.as_ref().is_some_and(|s| s.common.arn.is_some());
    let owner_alive = f.owner_alive;
    match f.observed.as_ref() {
        None if spec::was_owned(db) => Ownership::Gone,
        None if recorded => Ownership::Lost,
        None if policy == AdoptionPolicy::Adopt => Ownership::NothingToAdopt,
        None => Ownership::Create,
        Some(o) if owned_by(o, uid) => Ownership::Ours(o),
        Some(o) if spec::of_another_namespace(o, db) => Ownership::Foreign(Foreign::OtherNamespace),
        Some(o) if !o.tags.contains_key(OWNER_TAG) && !asked => {
            Ownership::Foreign(Foreign::NotAsked {
                retained_here: false,
            })
        }
        Some(o) if !o.tags.contains_key(OWNER_TAG) => {
            match tenancy::claim(o, db, &f.grants, &f.observers) {
                Claim::Granted => Ownership::Adopt(o, Adoptee::Untagged),
                Claim::NotGranted => Ownership::Foreign(Foreign::NotGranted),
                Claim::ObservedElsewhere => Ownership::Foreign(Foreign::ObservedElsewhere),
            }
        }
        // Tagged for a DBInstance of this namespace: only once that one is known to be gone.
        Some(_) if owner_alive != Some(false) => Ownership::Foreign(Foreign::Claimed),
        Some(o) if spec::retained_for(o, db) => Ownership::Adopt(o, Adoptee::Retained),
        Some(o) if asked => Ownership::Adopt(o, Adoptee::Unclaimed),
        Some(o) => Ownership::Foreign(Foreign::NotAsked {
            retained_here: spec::tagged_owner(o, db)
                .is_some_and(|(_, name, _)| Some(name.as_str()) == db.metadata.name.as_deref()),
        }),
    }
}

/// The plan for a DBInstance that is not being deleted.
pub fn plan(f: &Facts) -> Plan {
    let db = &f.db;
    let valid = spec::validate(db).and_then(|()| spec::validate_against(db, &f.peers));
    if let Err(message) = valid {
        let plan = Plan::new(Requeue::AwaitChange);
        return refuse(plan, f, "InvalidSpec", &message, Some("InvalidSpec"));
    }
    let mut plan = Plan::new(Requeue::After(f.intervals.busy));
    if !spec::has_finalizer(db) {
        plan.step(Step::AddFinalizer);
    }
    let namespace = db.metadata.namespace.as_deref().unwrap_or_default();
    let foreign_groups = tenancy::foreign_groups(&f.groups, namespace);
    if !foreign_groups.is_empty() {
        plan.requeue = Requeue::After(spec::drift_interval(&db.spec, &f.intervals));
        let message = format!(
            "{} names a group that another namespace manages; use a group of this namespace \
             (dbSubnetGroupRef, dbParameterGroupRef) or one made outside the operator",
            foreign_groups.join(" and ")
        );
        return refuse(plan, f, "GroupNotOwned", &message, Some("NotOwned"));
    }
    // A reference waits for what it names; resolved, it reads as the plain name field.
    let resolved;
    let f = match resolve(f) {
        Err(why) => {
            plan.requeue = Requeue::After(spec::drift_interval(&db.spec, &f.intervals));
            return refuse(plan, f, "ReferencesUnresolved", &why, None);
        }
        Ok(None) => f,
        Ok(Some(facts)) => {
            resolved = facts;
            &resolved
        }
    };
    let db = &f.db;
    if spec::observe_only(db) {
        return observe::plan(f, plan);
    }
    let identifier = db.identifier();
    match ownership(f) {
        Ownership::Create if restore_refused(f).is_some() => {
            plan.requeue = Requeue::After(spec::drift_interval(&db.spec, &f.intervals));
            let (reason, message) = restore_refused(f).unwrap_or_default();
            refuse(plan, f, reason, &message, Some("NotOwned"))
        }
        Ownership::Create if replica::wanted(db) => create_replica(f, plan),
        Ownership::Create => create(f, plan, Creation::from_spec(db)),
        Ownership::Lost => {
            plan.requeue = Requeue::After(spec::drift_interval(&db.spec, &f.intervals));
            let message = format!(
                "RDS has no instance {identifier}; it was only observed by this DBInstance, never its own, \
                 so nothing is created or restored in its place"
            );
            refuse(plan, f, "NotFound", &message, None)
        }
        Ownership::NothingToAdopt => {
            plan.requeue = Requeue::After(spec::drift_interval(&db.spec, &f.intervals));
            let message = format!(
                "adoptionPolicy is Adopt and there is no RDS instance named {identifier} to adopt; \
                 the operator creates none (AdoptOrCreate would)"
            );
            refuse(plan, f, "NothingToAdopt", &message, None)
        }
        Ownership::Gone => absence::plan(f, plan),
        Ownership::Foreign(why) => foreign(f, plan, why),
        // Taken over on what RDS says now, never on the shared poll's snapshot.
        Ownership::Adopt(..) if !f.observed_directly => plan,
        Ownership::Adopt(observed, from) => adopt(f, plan, observed, from),
        Ownership::Ours(observed) => sync::plan(f, plan, observed),
    }
}

/// Why spec.restoreFrom may not be acted on (reason, message); None: there is none, or it may.
/// A snapshot or an instance must be this namespace's own or granted to it, as read in this
/// reconcile; a backup in S3 is reached through its ingestion role, which must be the
/// namespace's (`managed::roles`).
fn restore_refused(f: &Facts) -> Option<(&'static str, String)> {
    let r = f.db.spec.restore_from.as_ref()?;
    let namespace = f.db.metadata.namespace.as_deref().unwrap_or_default();
    if let Some(s3) = &r.s3 {
        let field = "restoreFrom.s3.ingestionRole";
        let why = crate::managed::roles::refused_role(
            &f.grants.roles,
            namespace,
            field,
            &s3.ingestion_role,
        );
        return why.map(|why| ("RoleNotGranted", why));
    }
    if tenancy::may_restore(f.restore_source.as_ref(), namespace, &f.grants) {
        return None;
    }
    let message = format!(
        "restoreFrom names {}, which is not found, or is neither this namespace's own nor \
         granted to it (tag {} on it, or the operator's --grant-restore); nothing is restored",
        restore_source(r),
        crate::dbinstance::RESTORABLE_BY_TAG
    );
    Some(("RestoreSourceNotOwned", message))
}

/// The facts with the spec's references replaced by the names they resolve to (and a member's
/// spec as [`spec::member_view`] reads it, with its cluster's RDS identifier); the first reason
/// one cannot be used yet; None when the spec refers to nothing.
fn resolve(f: &Facts) -> Result<Option<Facts>, String> {
    let member = spec::is_member(&f.db);
    let replica = replica::wanted(&f.db);
    let unresolved = f.subnet_group.is_none()
        && f.parameter_group.is_none()
        && f.option_group.is_none()
        && f.snapshot_ref.is_none();
    if unresolved && !member && !replica {
        return Ok(None);
    }
    let mut resolved = f.clone();
    if let (Some(snapshot), Some(r)) = (&f.snapshot_ref, &mut resolved.db.spec.restore_from) {
        r.db_snapshot_identifier = Some(snapshot.clone()?);
        r.db_snapshot_ref = None;
    }
    if replica {
        resolved.db.spec = replica::view(&f.db.spec);
    }
    if member {
        resolved.db.spec = spec::member_view(&f.db.spec);
        let cluster =
            (f.cluster.clone()).unwrap_or_else(|| Err("its DBCluster is not read yet".into()));
        resolved.db.spec.db_cluster_identifier = Some(cluster?);
    }
    if let Some(group) = &f.subnet_group {
        resolved.db.spec.network.db_subnet_group_name = Some(group.clone()?);
    }
    if let Some(group) = &f.parameter_group {
        resolved.db.spec.db_parameter_group_name = Some(group.clone()?);
    }
    if let Some(group) = &f.option_group {
        resolved.db.spec.option_group_name = Some(group.clone()?);
    }
    Ok(Some(resolved))
}

fn foreign(f: &Facts, mut plan: Plan, why: Foreign) -> Plan {
    let identifier = f.db.identifier();
    plan.requeue = Requeue::After(f.intervals.settled);
    let owner = f.observed.as_ref().and_then(|o| o.tags.get(OWNER_NAME_TAG));
    // Who owns it is for the operator's log, not for every tenant who can read status.
    plan.ext.log = Some(format!(
        "RDS instance {identifier} is not this DBInstance's: {}",
        owner.map_or("it has no rds-operator ownership tag", String::as_str)
    ));
    let message = match why {
        Foreign::NotAsked {
            retained_here: true,
        } => format!(
            "an RDS instance named {identifier} already exists: it was created for an earlier DBInstance \
             of this namespace and name and not released by deletionPolicy Retain; set \
             spec.adoptionPolicy: Adopt to take it over, or choose another dbInstanceIdentifier"
        ),
        Foreign::NotAsked { .. } => format!(
            "an RDS instance named {identifier} already exists and is not managed by this DBInstance; \
             choose another dbInstanceIdentifier, or set spec.adoptionPolicy: Adopt to take it over"
        ),
        Foreign::OtherNamespace | Foreign::Claimed => format!(
            "an RDS instance named {identifier} already exists and is managed by another DBInstance; \
             choose another dbInstanceIdentifier"
        ),
        Foreign::NotGranted => format!(
            "an RDS instance named {identifier} already exists and no DBInstance manages it, but nothing \
             grants this namespace its adoption: a platform admin tags it {} with this namespace's \
             name, or lists the namespace in the operator's --grant-adoption",
            crate::dbinstance::ADOPTABLE_BY_TAG
        ),
        Foreign::ObservedElsewhere => format!(
            "an RDS instance named {identifier} already exists and is observed by a DBInstance of \
             another namespace; it is not adopted from this one"
        ),
    };
    refuse(plan, f, "IdentifierInUse", &message, None)
}

/// Takes over an instance that is not ours: adds the ownership tags and nothing else. Its
/// differences from the spec are reported until the spec next changes (`adoptedGeneration`), and
/// its master password is taken as the one the spec refers to, never sent.
fn adopt(f: &Facts, mut plan: Plan, observed: &ObservedInstance, from: Adoptee) -> Plan {
    let db = &f.db;
    let identifier = db.identifier();
    if !matches!(
        f.password,
        PasswordFacts::Referenced(_) | PasswordFacts::Managed(_)
    ) {
        let message = format!(
            "RDS instance {identifier} keeps its master password when it is adopted, and the operator \
             does not know it: put it in a Secret and reference it with spec.masterUserPassword \
             (a Secret the operator generated and kept at deletion is named {}, key password), \
             or set manageMasterUserPassword",
            spec::generated_secret_name(db)
        );
        plan.requeue = Requeue::AwaitChange;
        return refuse(plan, f, "PasswordUnknown", &message, Some("InvalidSpec"));
    }
    if let Err(problem) = password(f, &mut plan) {
        return password_refused(plan, f, problem);
    }
    let Some(arn) = observed.arn.clone() else {
        plan.requeue = Requeue::After(f.intervals.busy);
        return plan;
    };
    let uid = db.metadata.uid.as_deref().unwrap_or_default();
    let namespace = db.metadata.namespace.as_deref().unwrap_or_default();
    let name = db.metadata.name.as_deref().unwrap_or_default();
    let ownership_tags = [
        (OWNER_TAG.to_owned(), uid.to_owned()),
        (OWNER_NAME_TAG.to_owned(), format!("{namespace}/{name}")),
        (ADOPTED_TAG.to_owned(), f.now.clone()),
    ];
    plan.step(Step::AddTags {
        identifier: identifier.clone(),
        arn: arn.clone(),
        tags: ownership_tags.into(),
    });
    if observed.tags.contains_key(RETAINED_TAG) {
        plan.step(Step::RemoveTags {
            identifier: identifier.clone(),
            arn,
            keys: vec![RETAINED_TAG.to_owned()],
        });
    }
    let what = match from {
        Adoptee::Untagged => "adopted RDS instance",
        Adoptee::Retained => {
            "adopted again RDS instance, retained by an earlier DBInstance of this name,"
        }
        Adoptee::Unclaimed => {
            "adopted RDS instance, tagged for a DBInstance that no longer exists,"
        }
    };
    let password_note = match &f.password {
        PasswordFacts::Managed(_) => {
            "its master password stays the one RDS manages in Secrets Manager"
        }
        _ => {
            "its master password was not changed and is taken to be the one in spec.masterUserPassword \
              (if it is not, connections fail: change the Secret, and the operator sends the new password \
              once the spec has been confirmed)"
        }
    };
    let note = format!(
        "{what} {identifier}: only the ownership tags were added; differences from the spec are \
         reported and put right once the spec is next changed; {password_note}"
    );
    plan.event(EventType::Normal, "Adopted", "Adopt", note);
    let mut fields = observed_status(&identifier, observed);
    fields.common.adopted_generation = db.metadata.generation;
    fields.common.owned = Some(true);
    fields.common.connection_secret = db
        .status
        .as_ref()
        .and_then(|s| s.common.connection_secret.clone());
    let message = format!("{what} {identifier}: its differences from the spec are reported next");
    plan.status = Some(observed_plan(fields, true, "Adopted", message));
    plan
}
