//! Rules for a DBInstance with managementPolicy ObserveOnly: report the instance and write the
//! connection Secret, never change it (no create, no tag, no modify, no delete). An instance no
//! DBInstance owns is observed only from a namespace granted it.

use crate::dbinstance::{ADOPTABLE_BY_TAG, OWNER_TAG};

use super::spec;
use super::status::refuse;
use super::sync;
use super::tenancy::{self, Claim};
use super::types::{Facts, Plan, Requeue};

/// The plan for an observe-only DBInstance that is not being deleted.
pub fn plan(f: &Facts, mut plan: Plan) -> Plan {
    let db = &f.db;
    let identifier = db.identifier();
    plan.requeue = Requeue::After(spec::drift_interval(&db.spec, &f.intervals));
    match f.observed.as_ref() {
        None => {
            let message = format!(
                "there is no RDS instance named {identifier}; managementPolicy is ObserveOnly, so \
                 the operator creates none"
            );
            refuse(plan, f, "NotFound", &message, None)
        }
        Some(o) if spec::of_another_namespace(o, db) => {
            let message = format!(
                "RDS instance {identifier} is managed by a DBInstance of another namespace and is \
                 not observed from this one"
            );
            refuse(plan, f, "IdentifierInUse", &message, None)
        }
        Some(o)
            if !o.tags.contains_key(OWNER_TAG)
                && tenancy::claim(o, db, &f.grants, &[]) != Claim::Granted =>
        {
            let message = format!(
                "RDS instance {identifier} is managed by no DBInstance, and nothing grants this namespace \
                 its observation: a platform admin tags it {ADOPTABLE_BY_TAG} with this namespace's name, \
                 or lists the namespace in the operator's --grant-adoption"
            );
            refuse(plan, f, "NotGranted", &message, Some("NotOwned"))
        }
        Some(o) => sync::plan(f, plan, o),
    }
}
