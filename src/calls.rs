//! Every AWS operation the operator calls, read from its source, and what is checked against
//! that list across the crates: the error table classes every code the models list for each
//! (`aws_error::table`), and the shipped IAM policy allows each and no more.
//!
//! Each call's error is classed under its operation's name (`aws_error("…"`), and each call is
//! counted under it (`Rds::count` and `Rds::counted`, the feed's and the credentials' `record`, and the names
//! `parameter_group_calls!` and `snapshot_calls!` are given).

/// The sources that make calls.
const SOURCES: &[&str] = &[
    include_str!("../crates/aws/src/rds/mod.rs"),
    include_str!("../crates/aws/src/rds/tagging.rs"),
    include_str!("../crates/aws/src/rds/shared.rs"),
    include_str!("../crates/aws/src/rds/roles.rs"),
    include_str!("../crates/aws/src/rds/data_api.rs"),
    include_str!("../crates/aws/src/rds/export.rs"),
    include_str!("../crates/aws/src/rds/cloudwatch.rs"),
    include_str!("dbinstance/aws/mod.rs"),
    include_str!("dbinstance/aws/restore.rs"),
    include_str!("dbinstance/aws/replicas.rs"),
    include_str!("dbinstance/aws/classes.rs"),
    include_str!("../crates/runtime/src/database/blue_green/aws.rs"),
    include_str!("dbsubnetgroup/aws.rs"),
    include_str!("dbparametergroup/aws.rs"),
    include_str!("dbcluster/aws.rs"),
    include_str!("dbcluster/restore.rs"),
    include_str!("dbclusterparametergroup/aws.rs"),
    include_str!("dbsnapshot/aws.rs"),
    include_str!("dbclustersnapshot/aws.rs"),
    include_str!("globalcluster/aws.rs"),
    include_str!("dbclusterendpoint/aws.rs"),
    include_str!("optiongroup/aws.rs"),
    include_str!("eventsubscription/aws.rs"),
    include_str!("integration/aws.rs"),
    include_str!("dbshardgroup/aws.rs"),
    include_str!("../crates/runtime/src/database/shard_group.rs"),
    include_str!("../crates/runtime/src/maintenance/aws.rs"),
    include_str!("dbproxy/aws.rs"),
    include_str!("../crates/aws/src/accounts/credentials.rs"),
];

/// The operations, sorted, each once.
pub fn operations() -> Vec<&'static str> {
    let counted = (SOURCES.iter()).flat_map(|s| {
        (s.split("self.count(\"").skip(1))
            .chain(s.split("self.counted(\"").skip(1))
            .chain(s.split("aws_error(\"").skip(1))
            .chain(s.split(".record(&self.place, \"").skip(1))
    });
    let feed = (include_str!("../crates/runtime/src/feed.rs")
        .split(".record(\n            &self.place,\n            \""))
    .skip(1);
    // `parameter_group_calls!`: every quoted name in an invocation is an operation.
    let invoked = (SOURCES.iter())
        .flat_map(|s| s.split("parameter_group_calls!(\n").skip(1))
        .filter_map(|rest| rest.split(");").next())
        .flat_map(|call| call.split('"').skip(1).step_by(2));
    // `snapshot_calls!`: each quoted label is an operation, but the request's field names
    // (…Identifier).
    let snapshot_calls = (SOURCES.iter())
        .flat_map(|s| s.split("snapshot_calls! {\n").skip(1))
        .filter_map(|rest| rest.split("\n}").next())
        .flat_map(|call| call.split('"').skip(1).step_by(2))
        .filter(|q| !q.ends_with("Identifier"));
    let mut operations: Vec<&str> = (counted.chain(feed))
        .filter_map(|rest| rest.split('"').next())
        .chain(invoked)
        .chain(snapshot_calls)
        .collect();
    operations.sort();
    operations.dedup();
    operations
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_calls_are_found_in_every_way_they_are_made() {
        let operations = super::operations();
        for made in [
            "CreateDBInstance",
            "CopyDBClusterSnapshot",
            "ModifyDBSnapshotAttribute",
            "CreateDBParameterGroup",
            "ReceiveMessage",
            "GetResources",
            "AssumeRole",
        ] {
            assert!(operations.contains(&made), "{made}: {operations:?}");
        }
    }

    #[test]
    fn every_code_the_models_list_for_a_call_the_operator_makes_is_classed() {
        let model = include_str!("../crates/aws/src/aws_error/model_errors.txt");
        let listed: Vec<(&str, Vec<&str>)> = (model.lines())
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let mut words = l.split_whitespace().skip(1);
                let operation = words.next().expect("an operation");
                (operation, words.collect())
            })
            .collect();
        let called = super::operations();
        let mut unclassed = Vec::new();
        for operation in &called {
            let Some((_, codes)) = listed.iter().find(|(o, _)| o == operation) else {
                panic!("{operation} is not in model_errors.txt: `make model-errors`");
            };
            for code in codes {
                if crate::aws_error::table::meaning(operation, code).is_none() {
                    unclassed.push(format!("{operation}: {code}"));
                }
            }
        }
        assert!(called.len() >= 80, "{called:?}");
        assert_eq!(unclassed, Vec::<String>::new(), "codes the table lacks");
    }

    /// Every AWS operation this adapter calls (each is counted by name) is allowed by the shipped
    /// least-privilege policy, and every mutating one only under the owner tag.
    #[test]
    fn the_iam_policy_allows_every_call_and_no_more() {
        let policy: serde_json::Value =
            serde_json::from_str(include_str!("../deploy/iam-policy.json")).expect("policy JSON");
        let statements = policy["Statement"].as_array().expect("statements");
        let allows = |action: &str| {
            statements
                .iter()
                .filter(|s| s["Effect"] == "Allow")
                .find(|s| {
                    let actions = &s["Action"];
                    actions == action
                        || actions
                            .as_array()
                            .is_some_and(|a| a.iter().any(|x| x == action))
                })
        };
        let operations = super::operations();
        assert!(operations.len() >= 10, "{operations:?}");
        // And no more: every action an Allow names is one the operator calls, or one AWS
        // authorizes as part of a call it makes.
        let part_of_a_call = [
            // CreateDBProxy passes the proxy's role to RDS.
            "iam:PassRole",
            // CreateSecret with tags also authorizes TagResource.
            "secretsmanager:TagResource",
            // DeleteMessageBatch authorizes as DeleteMessage.
            "sqs:DeleteMessage",
            // PutMetricAlarm with tags also authorizes TagResource.
            "cloudwatch:TagResource",
        ];
        for statement in statements.iter().filter(|s| s["Effect"] == "Allow") {
            let actions = match &statement["Action"] {
                serde_json::Value::Array(a) => a.iter().filter_map(|a| a.as_str()).collect(),
                a => vec![a.as_str().expect("an action")],
            };
            for action in actions {
                let called =
                    (action.split_once(':')).is_some_and(|(_, op)| operations.contains(&op));
                assert!(
                    called || part_of_a_call.contains(&action),
                    "{action} is allowed, and the operator never calls it"
                );
            }
        }
        let mut sqs = 0;
        for operation in operations {
            let action = match operation {
                // Needs no permission: it says who the caller is.
                "GetCallerIdentity" => continue,
                // The accounts' role chains: their own policy, of the member accounts' roles only.
                "AssumeRole" => {
                    let roles: serde_json::Value = serde_json::from_str(include_str!(
                        "../deploy/iam/operator-assume-roles.json"
                    ))
                    .expect("policy JSON");
                    let statement = &roles["Statement"][0];
                    assert_eq!(statement["Action"], "sts:AssumeRole");
                    assert_eq!(
                        statement["Resource"],
                        "arn:aws:iam::*:role/rds-operator-member"
                    );
                    continue;
                }
                "GetSecretValue" | "CreateSecret" | "PutSecretValue" | "DeleteSecret"
                | "DescribeSecret" => format!("secretsmanager:{operation}"),
                // The rotation rules of the secret RDS manages for a database: RDS's own secrets
                // only (rds!db-..., rds!cluster-...), which carry RDS's tags, never the operator's.
                "RotateSecret" => {
                    let statement = allows("secretsmanager:RotateSecret")
                        .expect("secretsmanager:RotateSecret is allowed");
                    assert_eq!(
                        statement["Resource"],
                        "arn:aws:secretsmanager:*:*:secret:rds!*"
                    );
                    continue;
                }
                // The groups' tags, 100 a page (the shared poll of the groups).
                "GetResources" => format!("tag:{operation}"),
                // RDS's metrics in CloudWatch (the health poll), and the databases' alarms.
                "GetMetricData" | "DescribeAlarms" | "PutMetricAlarm" | "DeleteAlarms" => {
                    format!("cloudwatch:{operation}")
                }
                // The event feed's queue: no tags to condition on; the statement names the queue.
                "ReceiveMessage" | "DeleteMessageBatch" => {
                    let action = operation.replace("Batch", "");
                    let statement = allows(&format!("sqs:{action}"))
                        .unwrap_or_else(|| panic!("sqs:{action} is not allowed"));
                    assert_eq!(statement["Resource"], "arn:aws:sqs:*:*:rds-operator-events");
                    sqs += 1;
                    continue;
                }
                _ => format!("rds:{operation}"),
            };
            let statement = allows(&action).unwrap_or_else(|| panic!("{action} is not allowed"));
            let read = ["Describe", "Get", "List"]
                .iter()
                .any(|p| operation.starts_with(p));
            if !read {
                assert!(
                    statement["Condition"]
                        .to_string()
                        .contains("rds.operator.rs/owner-uid"),
                    "{action} is allowed without the owner tag condition"
                );
            }
        }
        assert_eq!(sqs, 2, "the feed's two SQS calls are checked");
    }

    /// The second barrier of the tenancy rules (docs/tenancy.md): AWS itself refuses a restore
    /// from a snapshot that carries neither ownership nor a grant, and the adopting AddTags on an
    /// instance that carries neither. Condition keys as the Service Authorization Reference lists
    /// them for RDS ("Actions, resources, and condition keys for Amazon RDS").
    #[test]
    fn the_iam_policy_refuses_what_the_tenancy_rules_refuse() {
        let policy: serde_json::Value =
            serde_json::from_str(include_str!("../deploy/iam-policy.json")).expect("policy JSON");
        let deny = |sid: &str| {
            (policy["Statement"].as_array().expect("statements").iter())
                .find(|s| s["Sid"] == sid && s["Effect"] == "Deny")
                .unwrap_or_else(|| panic!("no Deny statement {sid}"))
                .clone()
        };
        let restore = deny("RestoreOnlyOwnedOrGrantedSnapshots");
        assert_eq!(restore["Action"], "rds:RestoreDBInstanceFromDBSnapshot");
        assert_eq!(restore["Resource"], "arn:aws:rds:*:*:snapshot:*");
        let null = &restore["Condition"]["Null"];
        assert_eq!(
            null[format!("aws:ResourceTag/{}", crate::crd::OWNER_TAG)],
            "true"
        );
        assert_eq!(
            null[format!("aws:ResourceTag/{}", crate::crd::RESTORABLE_BY_TAG)],
            "true"
        );
        let adopt = deny("AdoptOnlyGrantedInstancesAndSnapshots");
        assert_eq!(adopt["Action"], "rds:AddTagsToResource");
        assert_eq!(
            adopt["Resource"],
            serde_json::json!([
                "arn:aws:rds:*:*:db:*",
                "arn:aws:rds:*:*:snapshot:*",
                "arn:aws:rds:*:*:cluster-snapshot:*"
            ])
        );
        let null = &adopt["Condition"]["Null"];
        // Only the adopting call carries the adopted tag: creates, restores and syncs are not
        // refused by it.
        assert_eq!(
            null[format!("aws:RequestTag/{}", crate::crd::ADOPTED_TAG)],
            "false"
        );
        assert_eq!(
            null[format!("aws:ResourceTag/{}", crate::crd::OWNER_TAG)],
            "true"
        );
        assert_eq!(
            null[format!("aws:ResourceTag/{}", crate::crd::ADOPTABLE_BY_TAG)],
            "true"
        );
    }
}

#[cfg(test)]
mod codes {
    use std::path::{Path, PathBuf};

    /// Where a line compares an AWS error's code as text: `.code == "…"`, `.code == SOME_CODE`,
    /// `"…" == e.code`, `.code.starts_with(…)` and the other string methods, `.code.as_str()` in a
    /// `match` or `matches!`, `[…].contains(&e.code…)`, the SDK's `.code() == Some(…)`: what only
    /// `aws_error`'s table may do. A Kubernetes status code (`e.code == 404`) is a number.
    fn compares_a_code(line: &str) -> bool {
        let code = line.trim_start();
        if code.starts_with("//") || !code.contains("code") {
            return false;
        }
        let text = |rest: &str| {
            let rest = rest.trim_start();
            !rest.starts_with(|c: char| c.is_ascii_digit())
        };
        let operators = [
            "code ==",
            "code !=",
            "code.as_str() ==",
            "code.as_str() !=",
            "code() ==",
            "code() !=",
        ];
        let by_operator = (operators.iter()).any(|op| code.split(op).skip(1).any(text));
        let reversed = code.contains(".code") && (code.contains("\" ==") || code.contains("\" !="));
        let methods = [
            ".code.starts_with(",
            ".code.ends_with(",
            ".code.contains(",
            ".code.eq(",
            ".code.eq_ignore_ascii_case(",
            ".code.as_str().starts_with(",
            ".code.as_str().ends_with(",
            ".code.as_str().contains(",
            ".code.as_str().eq",
            ".code().is_some_and(",
            ".code().map(",
        ];
        let by_method = methods.iter().any(|m| code.contains(m));
        let by_match = (code.contains("match ") || code.contains("matches!("))
            && (code.contains(".code.as_str()")
                || code.contains(".code()")
                || code.ends_with(".code {"));
        let in_a_list = code.contains("contains(&") && code.contains(".code");
        by_operator || reversed || by_method || by_match || in_a_list
    }

    fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a source folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                sources(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }

    /// What an AWS error code means is decided in one place, the error table
    /// (`crates/aws/src/aws_error/`): a call site asks `gone()`, `exists()`, `busy()`, … and never
    /// compares the code as text, which missed a code's other spelling (…NotFound and
    /// …NotFoundFault) and matched codes it did not mean (`contains("NotFound")`).
    #[test]
    fn no_aws_error_code_is_compared_outside_the_error_table() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        sources(&root.join("src"), &mut files);
        for krate in std::fs::read_dir(root.join("crates"))
            .expect("crates")
            .flatten()
        {
            sources(&krate.path().join("src"), &mut files);
        }
        // The table, and this module of this file (the detector and its examples).
        let (table, here) = (
            root.join("crates/aws/src/aws_error"),
            root.join("src/calls.rs"),
        );
        let found: Vec<String> = (files.iter())
            .filter(|f| !f.starts_with(&table))
            .flat_map(|f| {
                let mut text = std::fs::read_to_string(f).expect("a source");
                if *f == here {
                    text.truncate(text.find("mod codes {").expect("this module"));
                }
                (text.lines().enumerate())
                    .filter(|(_, l)| compares_a_code(l))
                    .map(|(n, l)| format!("{}:{}: {}", f.display(), n + 1, l.trim()))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert!(files.len() > 200, "the sources were found: {}", files.len());
        assert!(
            found.is_empty(),
            "AWS codes compared outside the error table:\n{}",
            found.join("\n")
        );
    }

    /// The detector finds each way a code was compared before, and no Kubernetes status code.
    #[test]
    fn the_detector_finds_each_way_a_code_was_compared() {
        for (line, compares) in [
            (
                r#"Err(e) if e.code == "DBSnapshotNotFound" => Ok(None),"#,
                true,
            ),
            ("Err(e) if e.code == NOT_FOUND => Ok(None),", true),
            (
                r#"Err(e) if e.code.starts_with("GlobalClusterNotFound") => Ok(None),"#,
                true,
            ),
            (
                r#"Err(e) if e.code.contains("NotFound") => Ok(None),"#,
                true,
            ),
            ("match e.code.as_str() {", true),
            ("Err(e) => match e.code.as_str() {", true),
            (
                r#"Err(e) if matches!(e.code.as_str(), "A" | "B") => Ok(None),"#,
                true,
            ),
            (
                r#"Err(e) if e.code.eq_ignore_ascii_case("DBSnapshotNotFound") => Ok(None),"#,
                true,
            ),
            (
                r#"Err(e) if "DBSnapshotNotFound" == e.code => Ok(None),"#,
                true,
            ),
            (
                r#"Err(e) if ["A", "B"].contains(&e.code.as_str()) => Ok(None),"#,
                true,
            ),
            (
                r#"Err(e) if e.code.as_str().starts_with("Global") => Ok(None),"#,
                true,
            ),
            (
                r#"Err(err) if err.code() == Some("DBProxyNotFoundFault") => Ok(None),"#,
                true,
            ),
            (
                "Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),",
                false,
            ),
            ("Err(e) if e.gone() => Ok(None),", false),
            (r#"// e.code == "X" in a comment"#, false),
        ] {
            assert_eq!(compares_a_code(line), compares, "{line}");
        }
    }
}
