//! Where drift is decided: the spec compared with the observed RDS instance, field by field, with
//! the rules that keep values RDS normalises from looking like drift. Pure; every rule has a test.
//!
//! A field the spec leaves unset is not managed: whatever RDS has (its default, or a person's
//! choice) is in sync. A change RDS already holds in PendingModifiedValues is not sent again.

use std::collections::BTreeMap;

use crate::database::fields::Fields;
use crate::dbinstance::DBInstanceSpec;
use crate::rds_state::ObservedInstance;

mod fields;

pub use crate::database::fields::{Diff, field_list};
pub use fields::{InstanceFields, Modification};

pub use crate::database::version::{
    VersionChange, compare_versions, engine_version_change, major_version,
};

impl Modification {
    /// Whether the modification carries the spec field.
    pub fn carries(&self, field: &str) -> bool {
        self.carried().contains(&field)
    }
}

/// Everything that differs, and the calls that would put it right.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    pub diffs: Vec<Diff>,
    /// None when no ModifyDBInstance is needed.
    pub modification: Option<Modification>,
    pub tags_to_add: BTreeMap<String, String>,
    pub tags_to_remove: Vec<String>,
    /// Differences RDS cannot apply (storage shrink, version downgrade, major upgrade not allowed).
    pub refused: Vec<String>,
    /// Differences the plan chose to leave as they are (see [`Comparison::leave`]).
    pub left: Vec<Diff>,
}

impl Comparison {
    /// True when RDS matches the spec and nothing is to be sent.
    pub fn in_sync(&self) -> bool {
        self.diffs.is_empty() && self.modification.is_none()
    }

    /// The fields that differ, for messages: "dbInstanceClass, tags".
    pub fn field_list(&self) -> String {
        field_list(&self.diffs)
    }

    /// Stops putting this field right: its difference moves to `left` and its value leaves the
    /// ModifyDBInstance (which is dropped when nothing else is in it). Tags and the password are
    /// never left this way.
    pub fn leave(&mut self, field: &str) {
        if let Some(diff) = self.take(field) {
            self.left.push(diff);
        }
    }

    /// Takes this field's difference out, and its value out of the ModifyDBInstance (dropped when
    /// nothing else is in it): something else carries it (a blue/green deployment).
    pub fn take(&mut self, field: &str) -> Option<Diff> {
        let at = self.diffs.iter().position(|d| d.field == field)?;
        let diff = self.diffs.remove(at);
        let Some(m) = self.modification.as_mut() else {
            return Some(diff);
        };
        m.clear(field);
        let empty = Modification {
            apply_immediately: m.apply_immediately,
            allow_major_version_upgrade: m.allow_major_version_upgrade,
            ..Default::default()
        };
        if *m == empty {
            self.modification = None;
        } else if m.engine_version.is_none() {
            m.allow_major_version_upgrade = false;
        }
        Some(diff)
    }
}

/// Compares the spec with the observed instance. `desired_tags` are the spec's tags plus the
/// ownership tags; `managed_tag_keys` are the keys the operator applied before (only those are
/// removed when they leave the spec); `rotate_password` says the Secret's password differs from
/// the one last sent.
pub fn compare(
    spec: &DBInstanceSpec,
    observed: &ObservedInstance,
    desired_tags: &BTreeMap<String, String>,
    managed_tag_keys: &[String],
    rotate_password: bool,
) -> Comparison {
    let mut c = Comparison::default();
    let mut m = Modification {
        apply_immediately: spec.maintenance.apply_immediately.unwrap_or(true),
        allow_major_version_upgrade: spec
            .maintenance
            .allow_major_version_upgrade
            .unwrap_or(false),
        rotate_password,
        ..Default::default()
    };
    let mut f = Fields {
        diffs: &mut c.diffs,
        refused: &mut c.refused,
        pending: &observed.pending_modified_values,
    };
    InstanceFields::compare(spec, observed, &mut f, &mut m);
    password(observed, &mut f, &mut m);
    tags(observed, desired_tags, managed_tag_keys, &mut c);

    let template = Modification {
        apply_immediately: m.apply_immediately,
        allow_major_version_upgrade: m.allow_major_version_upgrade,
        ..Default::default()
    };
    if m != template {
        if m.engine_version.is_none() {
            m.allow_major_version_upgrade = false;
        }
        c.modification = Some(m);
    }
    c
}

/// The master password: sent when the Secret's changed, unless RDS already holds a change.
fn password(o: &ObservedInstance, f: &mut Fields, m: &mut Modification) {
    if m.rotate_password && !o.pending_modified_values.contains_key("masterUserPassword") {
        f.diffs.push(Diff {
            field: "masterUserPassword",
            observed: "(previous password)".into(),
            desired: "(password in the Secret)".into(),
        });
    } else {
        m.rotate_password = false;
    }
}

/// Tags: the desired ones added or updated; of the others, only those the operator applied itself
/// are removed. Tags set by others (AWS Backup selections, cost allocation, `aws:`) stay.
fn tags(
    o: &ObservedInstance,
    desired: &BTreeMap<String, String>,
    managed: &[String],
    c: &mut Comparison,
) {
    (c.tags_to_add, c.tags_to_remove) = crate::managed::tags::changes(&o.tags, desired, managed);
    if !c.tags_to_add.is_empty() || !c.tags_to_remove.is_empty() {
        c.diffs.push(Diff {
            field: "tags",
            observed: format_tags(o.tags.iter().filter(|(k, _)| !k.starts_with("aws:"))),
            desired: format_tags(desired.iter()),
        });
    }
}

fn format_tags<'a>(tags: impl Iterator<Item = (&'a String, &'a String)>) -> String {
    tags.map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::spec::Deletion;
    use std::cmp::Ordering;

    fn spec() -> DBInstanceSpec {
        DBInstanceSpec {
            backup_retention_period: Some(1),
            multi_az: Some(false),
            deletion: Deletion {
                deletion_protection: Some(false),
                ..Default::default()
            },
            ..crate::dbinstance::coffee_spec()
        }
    }

    fn observed() -> ObservedInstance {
        ObservedInstance {
            identifier: "db".into(),
            status: "available".into(),
            engine: Some("mysql".into()),
            engine_version: Some("8.0.42".into()),
            db_instance_class: Some("db.t3.micro".into()),
            allocated_storage: Some(20),
            storage_type: Some("gp2".into()),
            backup_retention_period: Some(1),
            multi_az: Some(false),
            deletion_protection: Some(false),
            // Defaults RDS fills in for fields the spec leaves unset:
            preferred_backup_window: Some("03:00-03:30".into()),
            preferred_maintenance_window: Some("sun:05:00-sun:05:30".into()),
            auto_minor_version_upgrade: Some(true),
            port: Some(3306),
            vpc_security_group_ids: vec!["sg-default".into()],
            db_parameter_group_name: Some("default.mysql8.0".into()),
            tags: tags(&[("owner", "uid"), ("aws:cloudformation:stack-name", "x")]),
            ..Default::default()
        }
    }

    fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn desired_tags() -> BTreeMap<String, String> {
        tags(&[("owner", "uid")])
    }

    #[test]
    fn features_rds_changes_in_place_go_in_one_modification() {
        let mut s = spec();
        s.storage_throughput = Some(250);
        s.ca_certificate_identifier = Some("rds-ca-rsa2048-g1".into());
        s.security.enable_iam_database_authentication = Some(true);
        s.insights.enable_performance_insights = Some(true);
        s.insights.performance_insights_retention_period = Some(7);
        s.insights.monitoring_interval = Some(60);
        s.insights.monitoring_role_arn =
            Some("arn:aws:iam::123456789012:role/rds-monitoring".into());
        s.option_group_name = Some("coffee-options".into());
        s.network_type = Some(crate::dbinstance::NetworkType::Dual);
        s.security.enable_cloudwatch_logs_exports = Some(vec!["error".into(), "slowquery".into()]);
        // Create-time only: never compared (a failover moves the AZ).
        s.availability_zone = Some("us-east-1a".into());
        s.character_set_name = Some("AL32UTF8".into());
        let mut o = observed();
        o.enabled_cloudwatch_logs_exports = vec!["error".into(), "general".into()];
        o.monitoring_interval = Some(0);
        let c = compare(&s, &o, &desired_tags(), &[], false);
        let m = c.modification.expect("one ModifyDBInstance");
        assert_eq!(m.storage_throughput, Some(250));
        assert_eq!(
            m.ca_certificate_identifier.as_deref(),
            Some("rds-ca-rsa2048-g1")
        );
        assert_eq!(m.iam_database_authentication, Some(true));
        assert_eq!(m.performance_insights, Some(true));
        assert_eq!(m.performance_insights_retention_period, Some(7));
        assert_eq!(m.monitoring_interval, Some(60));
        assert!(m.monitoring_role_arn.is_some());
        assert_eq!(m.option_group_name.as_deref(), Some("coffee-options"));
        assert_eq!(m.network_type.as_deref(), Some("DUAL"));
        assert_eq!(
            m.logs_exports,
            Some((vec!["slowquery".into()], vec!["general".into()])),
            "enable what is missing, disable what left the spec"
        );
        let fields: Vec<_> = c.diffs.iter().map(|d| d.field).collect();
        assert!(!fields.contains(&"availabilityZone") && !fields.contains(&"characterSetName"));

        // In sync, case aside, and the logs as a set: nothing to send.
        let mut same = o.clone();
        same.storage_throughput = Some(250);
        same.ca_certificate_identifier = Some("RDS-CA-RSA2048-G1".into());
        same.iam_database_authentication_enabled = Some(true);
        same.performance_insights_enabled = Some(true);
        same.performance_insights_retention_period = Some(7);
        same.monitoring_interval = Some(60);
        same.monitoring_role_arn = s.insights.monitoring_role_arn.clone();
        same.option_group_name = Some("coffee-options".into());
        same.network_type = Some("DUAL".into());
        same.enabled_cloudwatch_logs_exports = vec!["slowquery".into(), "error".into()];
        assert!(compare(&s, &same, &desired_tags(), &[], false).in_sync());

        // Retention and role mean nothing while their feature is off.
        let mut off = spec();
        off.insights.enable_performance_insights = Some(false);
        off.insights.performance_insights_retention_period = Some(731);
        off.insights.monitoring_interval = Some(0);
        off.insights.monitoring_role_arn = Some("arn:aws:iam::123456789012:role/x".into());
        let mut o = observed();
        o.performance_insights_enabled = Some(false);
        o.monitoring_interval = Some(0);
        assert!(compare(&off, &o, &desired_tags(), &[], false).in_sync());
    }

    #[test]
    fn in_sync_instance_needs_nothing() {
        let c = compare(&spec(), &observed(), &desired_tags(), &[], false);
        assert!(c.in_sync(), "{c:?}");
        assert!(c.tags_to_add.is_empty() && c.tags_to_remove.is_empty());
    }

    #[test]
    fn short_engine_version_matches_the_full_one() {
        assert_eq!(
            engine_version_change("mysql", "8.0", "8.0.42", false),
            VersionChange::None
        );
        assert_eq!(
            engine_version_change("mysql", "8.0.42", "8.0.42", false),
            VersionChange::None
        );
    }

    #[test]
    fn minor_upgrade_done_by_rds_is_not_drift() {
        assert_eq!(
            engine_version_change("mysql", "8.0.40", "8.0.42", false),
            VersionChange::None
        );
    }

    #[test]
    fn engine_upgrades_and_refusals() {
        assert_eq!(
            engine_version_change("mysql", "8.0.43", "8.0.42", false),
            VersionChange::Upgrade
        );
        assert!(
            matches!(engine_version_change("mysql", "8.4.3", "8.0.42", false), VersionChange::Refused(m) if m.contains("allowMajorVersionUpgrade"))
        );
        assert_eq!(
            engine_version_change("mysql", "8.4.3", "8.0.42", true),
            VersionChange::Upgrade
        );
        assert!(
            matches!(engine_version_change("mysql", "5.7", "8.0.42", true), VersionChange::Refused(m) if m.contains("downgrade"))
        );
        assert_eq!(
            engine_version_change("postgres", "16.4", "16.3", false),
            VersionChange::Upgrade
        );
        assert!(matches!(
            engine_version_change("postgres", "17.1", "16.3", false),
            VersionChange::Refused(_)
        ));
    }

    #[test]
    fn major_versions_by_engine() {
        assert_eq!(major_version("mysql", "8.0.42"), "8.0");
        assert_eq!(major_version("postgres", "16.3"), "16");
        assert_eq!(major_version("postgres", "9.6.22"), "9.6");
        assert_eq!(compare_versions("8.0.42", "8.0.9"), Ordering::Greater);
        assert_eq!(compare_versions("8.0", "8.0.0"), Ordering::Equal);
    }

    #[test]
    fn class_and_type_case_is_not_drift() {
        let mut o = observed();
        o.db_instance_class = Some("DB.T3.MICRO".into());
        o.storage_type = Some("GP2".into());
        assert!(compare(&spec(), &o, &desired_tags(), &[], false).in_sync());
    }

    #[test]
    fn unset_fields_are_not_managed() {
        let mut o = observed();
        o.preferred_maintenance_window = Some("mon:01:00-mon:01:30".into());
        o.port = Some(3307);
        o.copy_tags_to_snapshot = Some(true);
        assert!(compare(&spec(), &o, &desired_tags(), &[], false).in_sync());
    }

    #[test]
    fn window_case_is_not_drift() {
        let mut s = spec();
        s.maintenance.preferred_maintenance_window = Some("Sun:05:00-Sun:05:30".into());
        assert!(compare(&s, &observed(), &desired_tags(), &[], false).in_sync());
    }

    #[test]
    fn changed_fields_and_only_those_are_sent() {
        let mut s = spec();
        s.db_instance_class = "db.t3.small".into();
        s.backup_retention_period = Some(7);
        let c = compare(&s, &observed(), &desired_tags(), &[], false);
        let m = c.modification.clone().expect("a modification");
        assert_eq!(m.db_instance_class.as_deref(), Some("db.t3.small"));
        assert_eq!(m.backup_retention_period, Some(7));
        assert_eq!(
            Modification {
                db_instance_class: None,
                backup_retention_period: None,
                ..m.clone()
            },
            Modification {
                apply_immediately: true,
                ..Default::default()
            }
        );
        assert_eq!(c.field_list(), "dbInstanceClass, backupRetentionPeriod");
    }

    #[test]
    fn pending_change_is_not_sent_again() {
        let mut s = spec();
        s.db_instance_class = "db.t3.small".into();
        s.maintenance.apply_immediately = Some(false);
        let mut o = observed();
        o.pending_modified_values
            .insert("dbInstanceClass".into(), "db.t3.small".into());
        let c = compare(&s, &o, &desired_tags(), &[], false);
        assert!(c.in_sync(), "{c:?}");
    }

    #[test]
    fn storage_grows_but_never_shrinks() {
        let mut s = spec();
        s.allocated_storage = Some(30);
        assert_eq!(
            compare(&s, &observed(), &desired_tags(), &[], false)
                .modification
                .unwrap()
                .allocated_storage,
            Some(30)
        );
        s.allocated_storage = Some(10);
        let c = compare(&s, &observed(), &desired_tags(), &[], false);
        assert!(c.modification.is_none());
        assert!(c.refused[0].contains("cannot shrink"), "{:?}", c.refused);
    }

    #[test]
    fn storage_grown_by_autoscaling_is_not_drift() {
        let mut s = spec();
        s.max_allocated_storage = Some(100);
        let mut o = observed();
        o.allocated_storage = Some(40);
        o.max_allocated_storage = Some(100);
        let c = compare(&s, &o, &desired_tags(), &[], false);
        assert!(c.in_sync() && c.refused.is_empty(), "{c:?}");
    }

    #[test]
    fn tags_sync_leaves_aws_tags_alone() {
        let mut o = observed();
        o.tags.insert("added-in-console".into(), "x".into());
        let mut want = desired_tags();
        want.insert("team".into(), "coffee".into());
        // A tag someone else set is left alone (it used to be removed)...
        let c = compare(&spec(), &o, &want, &[], false);
        assert_eq!(c.tags_to_add, tags(&[("team", "coffee")]));
        assert!(c.tags_to_remove.is_empty());
        // ...and one the operator applied is removed once it leaves the spec.
        let c = compare(&spec(), &o, &want, &["added-in-console".into()], false);
        assert_eq!(c.tags_to_remove, vec!["added-in-console".to_string()]);
        assert!(c.modification.is_none(), "tags need no ModifyDBInstance");
        assert_eq!(c.field_list(), "tags");
    }

    #[test]
    fn security_groups_compare_as_sets() {
        let mut s = spec();
        s.network.vpc_security_group_ids = Some(vec!["sg-b".into(), "sg-a".into()]);
        let mut o = observed();
        o.vpc_security_group_ids = vec!["sg-a".into(), "sg-b".into()];
        assert!(compare(&s, &o, &desired_tags(), &[], false).in_sync());
        o.vpc_security_group_ids = vec!["sg-a".into()];
        let m = compare(&s, &o, &desired_tags(), &[], false)
            .modification
            .unwrap();
        assert_eq!(
            m.vpc_security_group_ids,
            Some(vec!["sg-b".into(), "sg-a".into()])
        );
    }

    #[test]
    fn password_rotation_is_a_modification_unless_pending() {
        let c = compare(&spec(), &observed(), &desired_tags(), &[], true);
        assert!(c.modification.unwrap().rotate_password);
        let mut o = observed();
        o.pending_modified_values
            .insert("masterUserPassword".into(), "****".into());
        assert!(compare(&spec(), &o, &desired_tags(), &[], true).in_sync());
    }

    #[test]
    fn major_upgrade_flag_is_sent_only_with_a_version_change() {
        let mut s = spec();
        s.maintenance.allow_major_version_upgrade = Some(true);
        s.multi_az = Some(true);
        let m = compare(&s, &observed(), &desired_tags(), &[], false)
            .modification
            .unwrap();
        assert!(!m.allow_major_version_upgrade);
        s.engine_version = Some("8.4.3".into());
        let m = compare(&s, &observed(), &desired_tags(), &[], false)
            .modification
            .unwrap();
        assert!(m.allow_major_version_upgrade);
        assert_eq!(m.engine_version.as_deref(), Some("8.4.3"));
    }

    #[test]
    fn apply_immediately_false_is_carried() {
        let mut s = spec();
        s.maintenance.apply_immediately = Some(false);
        s.multi_az = Some(true);
        assert!(
            !compare(&s, &observed(), &desired_tags(), &[], false)
                .modification
                .unwrap()
                .apply_immediately
        );
    }

    #[test]
    fn protective_differences_are_recognised() {
        let diff = |field, observed: &str, desired: &str| Diff {
            field,
            observed: observed.into(),
            desired: desired.into(),
        };
        assert!(diff("deletionProtection", "true", "false").strengthens_protection());
        assert!(!diff("deletionProtection", "false", "true").strengthens_protection());
        assert!(diff("multiAZ", "true", "false").strengthens_protection());
        assert!(diff("backupRetentionPeriod", "7", "1").strengthens_protection());
        assert!(!diff("backupRetentionPeriod", "1", "7").strengthens_protection());
        assert!(!diff("dbInstanceClass", "db.t3.large", "db.t3.micro").strengthens_protection());
    }

    #[test]
    fn a_left_field_leaves_the_modification() {
        let mut o = observed();
        o.deletion_protection = Some(true);
        o.db_instance_class = Some("db.t3.large".into());
        let mut c = compare(&spec(), &o, &desired_tags(), &[], false);
        c.leave("deletionProtection");
        let m = c.modification.clone().expect("the class is still sent");
        assert_eq!(m.deletion_protection, None);
        assert_eq!(m.db_instance_class.as_deref(), Some("db.t3.micro"));
        assert_eq!(c.field_list(), "dbInstanceClass");
        assert_eq!(c.left[0].field, "deletionProtection");
        c.leave("dbInstanceClass");
        assert_eq!(c.modification, None, "nothing left to send");
        assert!(c.in_sync());
    }
}
