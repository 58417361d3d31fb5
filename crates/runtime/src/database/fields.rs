//! A database kind's fields as one table: a row per field says how the spec's value is sent at
//! create, how a change is sent in a modify, how RDS's value is read back, and the drift rule that
//! compares the two. [`field_table!`] makes from the table the kind's modification struct (one slot
//! per row), its comparison, its create and modify setters and its read-back, so a field is added
//! or changed in one row. The rules a row names ([`Fields`]) are pure and tested here.
//!
//! Why a declarative macro, and not generation from the SDK's model at build time:
//! `docs/architecture.md`, "A field is one row".

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;

/// One field whose observed value differs from the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    pub field: &'static str,
    pub observed: String,
    pub desired: String,
}

/// A difference as status and the dry run show it.
impl From<&Diff> for crate::database::parts::FieldDrift {
    fn from(d: &Diff) -> Self {
        crate::database::parts::FieldDrift {
            field: d.field.to_owned(),
            observed: d.observed.clone(),
            desired: d.desired.clone(),
        }
    }
}

impl Diff {
    /// Whether RDS is more protective than the spec here: deletion protection on, a longer backup
    /// retention, or a Multi-AZ standby that the spec does not ask for. Putting such a field back
    /// would weaken the database's protection.
    pub fn strengthens_protection(&self) -> bool {
        match self.field {
            "deletionProtection" | "multiAZ" => self.observed == "true" && self.desired == "false",
            "backupRetentionPeriod" => {
                let (have, want) = (self.observed.parse::<i32>(), self.desired.parse::<i32>());
                matches!((have, want), (Ok(h), Ok(w)) if h > w)
            }
            _ => false,
        }
    }
}

/// "dbInstanceClass, tags"
pub fn field_list(diffs: &[Diff]) -> String {
    diffs.iter().map(|d| d.field).collect::<Vec<_>>().join(", ")
}

/// Where a comparison records what it finds: the differences, the changes RDS cannot make, and
/// RDS's pending changes (by spec field name), which are not sent again.
pub struct Fields<'a> {
    pub diffs: &'a mut Vec<Diff>,
    pub refused: &'a mut Vec<String>,
    pub pending: &'a BTreeMap<String, String>,
}

impl Fields<'_> {
    /// A field the spec sets: differs when the observed value is not equal and RDS does not
    /// already hold the desired value as pending.
    pub fn field<T: Clone + Display>(
        &mut self,
        name: &'static str,
        want: &T,
        have: Option<&T>,
        eq: impl Fn(&T, &T) -> bool,
        slot: &mut Option<T>,
    ) {
        if have.is_some_and(|h| eq(want, h)) {
            return;
        }
        if self
            .pending
            .get(name)
            .is_some_and(|p| p.eq_ignore_ascii_case(&want.to_string()))
        {
            return;
        }
        self.diffs.push(Diff {
            field: name,
            observed: have
                .map(ToString::to_string)
                .unwrap_or_else(|| "(unset)".into()),
            desired: want.to_string(),
        });
        *slot = Some(want.clone());
    }

    /// A field the spec may leave unset (then it is not managed).
    pub fn opt<T: Clone + Display>(
        &mut self,
        name: &'static str,
        want: Option<&T>,
        have: Option<&T>,
        eq: impl Fn(&T, &T) -> bool,
        slot: &mut Option<T>,
    ) {
        if let Some(want) = want {
            self.field(name, want, have, eq, slot);
        }
    }

    /// A list compared as a set (security groups): the spec's list is sent when the sets differ.
    pub fn set(
        &mut self,
        name: &'static str,
        want: Option<&Vec<String>>,
        have: &[String],
    ) -> Option<Vec<String>> {
        let want = want?;
        let (w, h): (BTreeSet<&String>, BTreeSet<&String>) =
            (want.iter().collect(), have.iter().collect());
        if w == h {
            return None;
        }
        self.diffs.push(Diff {
            field: name,
            observed: have.join(","),
            desired: want.join(","),
        });
        Some(want.clone())
    }

    /// CloudWatch log exports, compared as sets: one change enables what is missing and disables
    /// what the spec no longer lists.
    pub fn logs(
        &mut self,
        name: &'static str,
        want: Option<&Vec<String>>,
        have: &[String],
    ) -> Option<(Vec<String>, Vec<String>)> {
        let want = want?;
        let (w, h): (BTreeSet<&String>, BTreeSet<&String>) =
            (want.iter().collect(), have.iter().collect());
        if w == h {
            return None;
        }
        let enable = w.difference(&h).map(|s| s.to_string()).collect();
        let disable = h.difference(&w).map(|s| s.to_string()).collect();
        self.diffs.push(Diff {
            field: name,
            observed: have.join(","),
            desired: want.join(","),
        });
        Some((enable, disable))
    }

    /// Allocated storage, which grows and never shrinks: a larger `want` is sent; a smaller one is
    /// refused, unless `autoscaled` (storage autoscaling grew it within its limit: not drift).
    pub fn storage(
        &mut self,
        want: Option<i32>,
        have: Option<i32>,
        autoscaled: bool,
    ) -> Option<i32> {
        let want = want?;
        let current = have.unwrap_or_default();
        let mut slot = None;
        match want.cmp(&current) {
            std::cmp::Ordering::Greater => {
                self.field("allocatedStorage", &want, have.as_ref(), |a, b| a == b, &mut slot)
            }
            std::cmp::Ordering::Less if !autoscaled => self.refused.push(format!(
                "allocatedStorage cannot shrink from {current} to {want} GiB: RDS storage only grows"
            )),
            _ => {}
        }
        slot
    }

    /// An engine version upgrade within what the spec allows; a downgrade or a major upgrade not
    /// allowed is refused.
    pub fn version(
        &mut self,
        engine: &str,
        want: Option<&String>,
        have: Option<&String>,
        allow_major: bool,
    ) -> Option<String> {
        use super::version::{VersionChange, engine_version_change};
        let (want, have) = (want?, have?);
        let mut slot = None;
        match engine_version_change(engine, want, have, allow_major) {
            VersionChange::None => {}
            VersionChange::Upgrade => {
                self.field("engineVersion", want, Some(have), |a, b| a == b, &mut slot)
            }
            VersionChange::Refused(why) => self.refused.push(why),
        }
        slot
    }
}

#[allow(clippy::ptr_arg)] // passed where Fn(&String, &String) is expected
pub fn eq_ignore_case(a: &String, b: &String) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// How an SDK getter's value becomes the observed value: `Option<&str>` is owned, the rest copied.
impl ReadBack for Option<&aws_sdk_rds::types::DatabaseInsightsMode> {
    type Owned = Option<String>;
    fn read_back(self) -> Option<String> {
        self.map(|m| m.as_str().to_owned())
    }
}

/// The Database Insights mode RDS takes, from the spec's text (a field table's conversion, which
/// maps an `Option<String>` by reference).
#[allow(clippy::ptr_arg)]
pub fn insights_mode(mode: &String) -> aws_sdk_rds::types::DatabaseInsightsMode {
    aws_sdk_rds::types::DatabaseInsightsMode::from(mode.as_str())
}

/// The create requests' setter of the Database Insights mode, from the spec's text (the field
/// table sends a row's value as it compares it).
pub trait InsightsModeText {
    fn set_database_insights_mode_text(self, mode: Option<String>) -> Self;
}

macro_rules! insights_mode_text {
    ($($builder:ty),*) => {$(
        impl InsightsModeText for $builder {
            fn set_database_insights_mode_text(self, mode: Option<String>) -> Self {
                self.set_database_insights_mode(mode.as_ref().map(insights_mode))
            }
        }
    )*};
}

insights_mode_text!(
    aws_sdk_rds::operation::create_db_instance::builders::CreateDBInstanceFluentBuilder,
    aws_sdk_rds::operation::create_db_cluster::builders::CreateDBClusterFluentBuilder
);

pub trait ReadBack {
    type Owned;
    fn read_back(self) -> Self::Owned;
}

impl ReadBack for Option<&str> {
    type Owned = Option<String>;
    fn read_back(self) -> Option<String> {
        self.map(str::to_owned)
    }
}

impl ReadBack for Option<i32> {
    type Owned = Option<i32>;
    fn read_back(self) -> Option<i32> {
        self
    }
}

impl ReadBack for Option<bool> {
    type Owned = Option<bool>;
    fn read_back(self) -> Option<bool> {
        self
    }
}

impl ReadBack for &[String] {
    type Owned = Vec<String>;
    fn read_back(self) -> Vec<String> {
        self.to_vec()
    }
}

/// A kind's field table. The header names the modification struct made (with its other members),
/// the functions' struct and the types they take; then a row per field:
///
/// ```text
/// "specName" slot: Type = <the spec's value, an Option<Type> or what the rule takes>,
///     have <observed field> <- <SDK getter, or (a fn of the SDK value)>,
///     drift <same | text | set | logs | (a fn of Fields, spec, observed)>,
///     create <create setter>, modify <modify setter> [(a fn of &Type to what it takes)];
/// ```
///
/// `same` compares with `==`, `text` ignoring ASCII case, `set` and `logs` as sets; a named fn is
/// a rule of the kind's own. The comparison runs the rows in the table's order (the order drift
/// is reported in). Made: the struct with a slot per row, `carried` (the spec names of the slots
/// set) and `clear`, and on the functions' struct `compare`, `create` (every row's setter with the
/// spec's value) and `read` (every row's observed field from the SDK's value); `send` on the
/// modification sets the modify setters of its slots.
#[macro_export]
macro_rules! field_table {
    (
        $(#[$meta:meta])*
        pub struct $M:ident { $($(#[$xmeta:meta])* pub $extra:ident: $xt:ty,)* }
        impl $Table:ident for ($spec:ident: $Spec:ty, $o:ident: $Obs:ty, $db:ident: $Sdk:ty);
        create $Create:ty;
        modify $Modify:ty;
        $(
            $(#[$rmeta:meta])*
            $name:literal $slot:ident: $T:ty = $want:expr,
                have $have:ident <- $read:tt,
                drift $rule:tt,
                create $cset:ident,
                modify $mset:ident $(($conv:expr))?;
        )*
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct $M {
            $( $(#[$rmeta])* pub $slot: Option<$T>, )*
            $( $(#[$xmeta])* pub $extra: $xt, )*
        }

        impl $M {
            /// The spec fields this modification carries, in the table's order.
            pub fn carried(&self) -> Vec<&'static str> {
                let mut out = Vec::new();
                $( if self.$slot.is_some() { out.push($name); } )*
                out
            }

            /// Takes the spec field named out of the modification.
            pub fn clear(&mut self, field: &str) {
                match field {
                    $( $name => self.$slot = None, )*
                    _ => {}
                }
            }

            /// The modify request with the setter of each slot set (unset slots send nothing).
            pub fn send(&self, request: $Modify) -> $Modify {
                request $( .$mset($crate::database::fields::field_table!(@conv self.$slot $(, $conv)?)) )*
            }
        }

        /// The field table's comparison, create setters and read-back.
        pub struct $Table;

        impl $Table {
            /// Every row's drift rule, in the table's order, into `m`.
            pub fn compare(
                $spec: &$Spec,
                $o: &$Obs,
                f: &mut $crate::database::fields::Fields,
                m: &mut $M,
            ) {
                $( $crate::database::fields::field_table!(@drift $rule, f, m, $slot, $name, $want, $spec, $o, $have); )*
            }

            /// The create request with every row's setter given the spec's value.
            pub fn create($spec: &$Spec, request: $Create) -> $Create {
                request $( .$cset($want) )*
            }

            /// Every row's observed field, read from RDS's answer.
            pub fn read($db: &$Sdk, $o: &mut $Obs) {
                $( $o.$have = $crate::database::fields::field_table!(@read $db, $read); )*
            }
        }
    };
    (@conv $value:expr) => { $value.clone() };
    (@conv $value:expr, $conv:expr) => { $value.as_ref().map($conv) };
    (@read $db:ident, ($read:expr)) => { ($read)($db) };
    (@read $db:ident, $getter:ident) => {
        $crate::database::fields::ReadBack::read_back($db.$getter())
    };
    (@drift same, $f:ident, $m:ident, $slot:ident, $name:literal, $want:expr,
        $spec:ident, $o:ident, $have:ident) => {
        $f.opt($name, ($want).as_ref(), $o.$have.as_ref(), |a, b| a == b, &mut $m.$slot)
    };
    (@drift text, $f:ident, $m:ident, $slot:ident, $name:literal, $want:expr,
        $spec:ident, $o:ident, $have:ident) => {
        $f.opt(
            $name,
            ($want).as_ref(),
            $o.$have.as_ref(),
            $crate::database::fields::eq_ignore_case,
            &mut $m.$slot,
        )
    };
    (@drift set, $f:ident, $m:ident, $slot:ident, $name:literal, $want:expr,
        $spec:ident, $o:ident, $have:ident) => {
        $m.$slot = $f.set($name, ($want).as_ref(), &$o.$have)
    };
    (@drift logs, $f:ident, $m:ident, $slot:ident, $name:literal, $want:expr,
        $spec:ident, $o:ident, $have:ident) => {
        $m.$slot = $f.logs($name, ($want).as_ref(), &$o.$have)
    };
    (@drift ($rule:path), $f:ident, $m:ident, $slot:ident, $name:literal, $want:expr,
        $spec:ident, $o:ident, $have:ident) => {
        $m.$slot = $rule($f, $spec, $o)
    };
}

pub use field_table;

/// The rows of the fields DBInstance and DBCluster share, from the groups of `database::spec` and
/// the two specs' own `engineVersion` and `backupRetentionPeriod`, written once. A kind's table is
/// written `with_database_rows! { spec; field_table! { header } rows }`, where a row may be
/// `shared "specName";`: this macro puts the shared row in its place and hands the whole table to
/// [`field_table!`]. `spec` names the spec as the header does; a
/// kind that takes `vpcSecurityGroupIDs` has its own `security_groups(&SdkValue)`.
#[macro_export]
macro_rules! with_database_rows {
    ($spec:ident; field_table! { $($head:tt)* } $($rows:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; { $($head)* } {} $($rows)*);
    };
    (@rows $spec:ident; { $($head:tt)* } { $($done:tt)* }) => {
        $crate::database::fields::field_table! { $($head)* $($done)* }
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* } shared "engineVersion"; $($rest:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            "engineVersion" engine_version: String = $spec.engine_version.clone(),
                have engine_version <- engine_version, drift (version),
                create set_engine_version, modify set_engine_version;
        } $($rest)*);
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* } shared "backupRetentionPeriod"; $($rest:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            "backupRetentionPeriod" backup_retention_period: i32 =
                $spec.backup_retention_period,
                have backup_retention_period <- backup_retention_period, drift same,
                create set_backup_retention_period, modify set_backup_retention_period;
        } $($rest)*);
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* } shared "preferredBackupWindow"; $($rest:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            "preferredBackupWindow" preferred_backup_window: String =
                $spec.backups.preferred_backup_window.clone(),
                have preferred_backup_window <- preferred_backup_window, drift text,
                create set_preferred_backup_window, modify set_preferred_backup_window;
        } $($rest)*);
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* } shared "preferredMaintenanceWindow"; $($rest:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            "preferredMaintenanceWindow" preferred_maintenance_window: String =
                $spec.maintenance.preferred_maintenance_window.clone(),
                have preferred_maintenance_window <- preferred_maintenance_window, drift text,
                create set_preferred_maintenance_window, modify set_preferred_maintenance_window;
        } $($rest)*);
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* } shared "vpcSecurityGroupIDs"; $($rest:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            "vpcSecurityGroupIDs" vpc_security_group_ids: Vec<String> =
                $spec.network.vpc_security_group_ids.clone(),
                have vpc_security_group_ids <- (security_groups), drift set,
                create set_vpc_security_group_ids, modify set_vpc_security_group_ids;
        } $($rest)*);
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* } shared "enableIAMDatabaseAuthentication"; $($rest:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            "enableIAMDatabaseAuthentication" iam_database_authentication: bool =
                $spec.security.enable_iam_database_authentication,
                have iam_database_authentication_enabled <- iam_database_authentication_enabled,
                drift same,
                create set_enable_iam_database_authentication,
                modify set_enable_iam_database_authentication;
        } $($rest)*);
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* } shared "enableCloudwatchLogsExports"; $($rest:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            #[doc = "CloudWatch log types to enable and to disable."]
            "enableCloudwatchLogsExports" logs_exports: (Vec<String>, Vec<String>) =
                $spec.security.enable_cloudwatch_logs_exports.clone(),
                have enabled_cloudwatch_logs_exports <- enabled_cloudwatch_logs_exports,
                drift logs,
                create set_enable_cloudwatch_logs_exports,
                modify set_cloudwatch_logs_export_configuration(
                    $crate::database::fields::logs_configuration
                );
        } $($rest)*);
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* } shared "deletionProtection"; $($rest:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            "deletionProtection" deletion_protection: bool = $spec.deletion.deletion_protection,
                have deletion_protection <- deletion_protection, drift same,
                create set_deletion_protection, modify set_deletion_protection;
        } $($rest)*);
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* } shared "databaseInsightsMode"; $($rest:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            "databaseInsightsMode" database_insights_mode: String =
                $spec.insights.database_insights_mode.map(|m| m.as_str().to_owned()),
                have database_insights_mode <- database_insights_mode, drift text,
                create set_database_insights_mode_text,
                modify set_database_insights_mode($crate::database::fields::insights_mode);
        } $($rest)*);
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* } shared "enablePerformanceInsights"; $($rest:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            "enablePerformanceInsights" performance_insights: bool =
                $spec.insights.enable_performance_insights,
                have performance_insights_enabled <- performance_insights_enabled, drift same,
                create set_enable_performance_insights, modify set_enable_performance_insights;
        } $($rest)*);
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* } shared "performanceInsightsRetentionPeriod"; $($rest:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            #[doc = "The retention means something only while Performance Insights is on."]
            "performanceInsightsRetentionPeriod" performance_insights_retention_period: i32 =
                ($spec.insights.performance_insights_retention_period)
                    .filter(|_| $spec.insights.enable_performance_insights != Some(false)),
                have performance_insights_retention_period <- performance_insights_retention_period,
                drift same,
                create set_performance_insights_retention_period,
                modify set_performance_insights_retention_period;
        } $($rest)*);
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* } shared "monitoringInterval"; $($rest:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            "monitoringInterval" monitoring_interval: i32 = $spec.insights.monitoring_interval,
                have monitoring_interval <- monitoring_interval, drift same,
                create set_monitoring_interval, modify set_monitoring_interval;
        } $($rest)*);
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* } shared "monitoringRoleARN"; $($rest:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            #[doc = "The monitoring role means something only while Enhanced Monitoring is on."]
            "monitoringRoleARN" monitoring_role_arn: String =
                ($spec.insights.monitoring_role_arn.clone())
                    .filter(|_| $spec.insights.monitoring_interval != Some(0)),
                have monitoring_role_arn <- monitoring_role_arn, drift same,
                create set_monitoring_role_arn, modify set_monitoring_role_arn;
        } $($rest)*);
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* } shared "copyTagsToSnapshot"; $($rest:tt)*) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            "copyTagsToSnapshot" copy_tags_to_snapshot: bool =
                $spec.backups.copy_tags_to_snapshot,
                have copy_tags_to_snapshot <- copy_tags_to_snapshot, drift same,
                create set_copy_tags_to_snapshot, modify set_copy_tags_to_snapshot;
        } $($rest)*);
    };
    (@rows $spec:ident; $head:tt { $($done:tt)* }
        $(#[$meta:meta])*
        $name:literal $slot:ident: $T:ty = $want:expr,
            have $have:ident <- $read:tt,
            drift $rule:tt,
            create $cset:ident,
            modify $mset:ident $(($conv:expr))?;
        $($rest:tt)*
    ) => {
        $crate::database::fields::with_database_rows!(@rows $spec; $head {
            $($done)*
            $(#[$meta])*
            $name $slot: $T = $want,
                have $have <- $read,
                drift $rule,
                create $cset,
                modify $mset $(($conv))?;
        } $($rest)*);
    };
}

pub use with_database_rows;

/// The log exports as ModifyDBInstance and ModifyDBCluster take them.
pub fn logs_configuration(
    (enable, disable): &(Vec<String>, Vec<String>),
) -> aws_sdk_rds::types::CloudwatchLogsExportConfiguration {
    aws_sdk_rds::types::CloudwatchLogsExportConfiguration::builder()
        .set_enable_log_types(Some(enable.clone()))
        .set_disable_log_types(Some(disable.clone()))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn check<R>(pending: &[(&str, &str)], run: impl FnOnce(&mut Fields) -> R) -> (R, Vec<Diff>) {
        let pending = (pending.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let (mut diffs, mut refused) = (Vec::new(), Vec::new());
        let mut f = Fields {
            diffs: &mut diffs,
            refused: &mut refused,
            pending: &pending,
        };
        let out = run(&mut f);
        (out, diffs)
    }

    #[test]
    fn a_field_differs_unless_equal_pending_or_unset() {
        type Row<'a> = (
            Option<i32>,
            Option<i32>,
            &'a [(&'a str, &'a str)],
            Option<i32>,
        );
        let table: [Row; 5] = [
            (Some(7), Some(7), &[], None),
            (Some(7), Some(1), &[], Some(7)),
            (Some(7), None, &[], Some(7)),
            (Some(7), Some(1), &[("backupRetentionPeriod", "7")], None),
            (None, Some(1), &[], None),
        ];
        for (want, have, pending, sent) in table {
            let mut slot = None;
            let (_, diffs) = check(pending, |f| {
                f.opt(
                    "backupRetentionPeriod",
                    want.as_ref(),
                    have.as_ref(),
                    |a, b| a == b,
                    &mut slot,
                )
            });
            assert_eq!(slot, sent, "{want:?} against {have:?}, pending {pending:?}");
            assert_eq!(diffs.len(), usize::from(sent.is_some()));
        }
    }

    #[test]
    fn text_ignores_case_only() {
        let (want, have) = (
            "Sun:05:00-Sun:05:30".to_string(),
            "sun:05:00-sun:05:30".to_string(),
        );
        let mut slot = None;
        check(&[], |f| {
            f.field("w", &want, Some(&have), eq_ignore_case, &mut slot)
        });
        assert_eq!(slot, None);
        check(&[], |f| {
            f.field("w", &want, Some(&"mon".into()), eq_ignore_case, &mut slot)
        });
        assert_eq!(slot, Some(want));
    }

    #[test]
    fn sets_and_logs_compare_without_order() {
        let (sent, diffs) = check(&[], |f| {
            f.set("sg", Some(&strings(&["b", "a"])), &strings(&["a", "b"]))
        });
        assert_eq!((sent, diffs.len()), (None, 0));
        let (sent, _) = check(&[], |f| {
            f.set("sg", Some(&strings(&["b", "a"])), &strings(&["a"]))
        });
        assert_eq!(
            sent,
            Some(strings(&["b", "a"])),
            "the spec's list, as written"
        );
        let (sent, diffs) = check(&[], |f| {
            f.logs(
                "logs",
                Some(&strings(&["slowquery", "error"])),
                &strings(&["error", "general"]),
            )
        });
        assert_eq!(sent, Some((strings(&["slowquery"]), strings(&["general"]))));
        assert_eq!(diffs[0].observed, "error,general");
        let (sent, _) = check(&[], |f| f.logs("logs", None, &strings(&["error"])));
        assert_eq!(sent, None, "unset is not managed");
    }

    #[test]
    fn versions_upgrade_or_are_refused() {
        let v = |s: &str| Some(s.to_string());
        let table = [
            ("8.0.43", "8.0.42", false, &[][..], v("8.0.43"), false),
            ("8.0", "8.0.42", false, &[], None, false),
            ("8.4.3", "8.0.42", false, &[], None, true),
            ("8.4.3", "8.0.42", true, &[], v("8.4.3"), false),
            ("5.7", "8.0.42", true, &[], None, true),
            (
                "8.0.43",
                "8.0.42",
                false,
                &[("engineVersion", "8.0.43")],
                None,
                false,
            ),
        ];
        for (want, have, major, pending, sent, refused) in table {
            let pending_map = (pending.iter())
                .map(|(k, w): &(&str, &str)| (k.to_string(), w.to_string()))
                .collect();
            let (mut diffs, mut why) = (Vec::new(), Vec::new());
            let mut f = Fields {
                diffs: &mut diffs,
                refused: &mut why,
                pending: &pending_map,
            };
            let out = f.version("mysql", v(want).as_ref(), v(have).as_ref(), major);
            assert_eq!(out, sent, "{want} over {have}");
            assert_eq!(!why.is_empty(), refused, "{want} over {have}: {why:?}");
        }
    }
}
