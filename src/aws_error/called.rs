//! Every AWS operation the operator calls, read from its source: each call's error is classed
//! under its operation's name (`aws_error("…"`), and each call is counted under it (`Rds::count`,
//! the feed's and the credentials' `record`, and the names `parameter_group_calls!` and
//! `snapshot_calls!` are given). The error table's coverage test and the IAM policy's test
//! both start from it.

/// The sources that make calls.
const SOURCES: &[&str] = &[
    include_str!("../rds/mod.rs"),
    include_str!("../rds/tagging.rs"),
    include_str!("../rds/shared.rs"),
    include_str!("../dbinstance/aws/mod.rs"),
    include_str!("../dbinstance/aws/restore.rs"),
    include_str!("../dbinstance/aws/replicas.rs"),
    include_str!("../database/blue_green/aws.rs"),
    include_str!("../dbsubnetgroup/aws.rs"),
    include_str!("../dbparametergroup/aws.rs"),
    include_str!("../dbcluster/aws.rs"),
    include_str!("../dbcluster/restore.rs"),
    include_str!("../dbclusterparametergroup/aws.rs"),
    include_str!("../dbsnapshot/aws.rs"),
    include_str!("../dbclustersnapshot/aws.rs"),
    include_str!("../globalcluster/aws.rs"),
    include_str!("../dbclusterendpoint/aws.rs"),
    include_str!("../optiongroup/aws.rs"),
    include_str!("../maintenance/aws.rs"),
    include_str!("../dbproxy/aws.rs"),
    include_str!("../accounts/credentials.rs"),
];

/// The operations, sorted, each once.
pub fn operations() -> Vec<&'static str> {
    let counted = (SOURCES.iter()).flat_map(|s| {
        (s.split("self.count(\"").skip(1))
            .chain(s.split("aws_error(\"").skip(1))
            .chain(s.split(".record(&self.place, \"").skip(1))
    });
    let feed = (include_str!("../feed.rs")
        .split(".record(\n            &self.place,\n            \""))
    .skip(1);
    // `parameter_group_calls!`: every quoted name in an invocation is an operation.
    let invoked = (SOURCES.iter())
        .flat_map(|s| s.split("parameter_group_calls!(\n").skip(1))
        .filter_map(|rest| rest.split(");").next())
        .flat_map(|call| call.split('"').skip(1).step_by(2));
    // `snapshot_calls!`: each quoted label is an operation, but the request's field names
    // (…Identifier) and the not-found code.
    let snapshot_calls = (SOURCES.iter())
        .flat_map(|s| s.split("snapshot_calls! {\n").skip(1))
        .filter_map(|rest| rest.split("\n}").next())
        .flat_map(|call| call.split('"').skip(1).step_by(2))
        .filter(|q| !q.ends_with("Identifier") && !q.ends_with("NotFound"));
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
}
