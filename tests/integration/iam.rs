//! The operator under the shipped least-privilege IAM policy (deploy/iam-policy.json), with an IAM
//! user's own key whose only policy it is: the emulator evaluates every RDS request that key signs
//! as AWS would (resources, request and resource tags, explicit denies: moto_ext/access.py).

use aws_sdk_rds::error::ProvideErrorMetadata;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::dbsubnetgroup::DBSubnetGroup;
use serde_json::json;

use crate::common::{self, Operator, TIMEOUT, is_ready, setup, unique, wait_dbi};

#[tokio::test]
async fn under_the_shipped_policy_no_call_is_denied_and_a_call_outside_it_is() {
    let (client, ns, api, rds) = setup("iam").await;
    let user = unique("rds-operator");
    let policy = include_str!("../../deploy/iam-policy.json");
    let (key, secret) = common::create_policy_user(&user, policy);
    let caller = format!("arn:aws:iam::123456789012:user/{user}");
    let env = [
        ("AWS_ACCESS_KEY_ID", key.as_str()),
        ("AWS_SECRET_ACCESS_KEY", secret.as_str()),
    ];
    let _operator = Operator::start_with_env(&ns, &[], &env);

    // A DB subnet group of its own and the Coffee Manage instance in it: made, changed, deleted
    // (with its final snapshot, the default deletionPolicy).
    let groups: Api<DBSubnetGroup> = Api::namespaced(client.clone(), &ns);
    let group_name = unique("iam-subnets");
    let subnets = common::coffee_subnets(&rds).await;
    let group = crate::subnetgroups::group("subnets", &group_name, &subnets);
    (groups.create(&PostParams::default(), &group).await).expect("create the group");
    let id = unique("iam-db");
    let spec = json!({"dbSubnetGroupName": group_name});
    (api.create(&PostParams::default(), &common::dbinstance("db", &id, spec)))
        .await
        .expect("create the instance");
    wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    // A change that names a parameter group made outside the operator (no owner tag): RDS
    // authorizes ModifyDBInstance on the group as well (NameAnyGroupInAChange).
    let parameters = unique("iam-pg");
    (rds.create_db_parameter_group())
        .db_parameter_group_name(&parameters)
        .db_parameter_group_family("mysql8.0")
        .description("made outside the operator")
        .send()
        .await
        .expect("a parameter group of no owner");
    let patch = json!({"spec": {
        "allocatedStorage": 25,
        "backupRetentionPeriod": 3,
        "dbParameterGroupName": parameters,
    }});
    (api.patch("db", &PatchParams::default(), &Patch::Merge(&patch)))
        .await
        .expect("change the instance");
    common::wait_for("RDS to hold the change", TIMEOUT, || async {
        let out = rds
            .describe_db_instances()
            .db_instance_identifier(&id)
            .send()
            .await
            .ok()?;
        let db = out.db_instances().first()?;
        let group = (db.db_parameter_groups().first())
            .and_then(|g| g.db_parameter_group_name())
            .is_some_and(|name| name == parameters);
        (db.allocated_storage() == Some(25) && db.backup_retention_period() == Some(3) && group)
            .then_some(())
    })
    .await;
    common::delete_and_wait(&api, "db").await;
    (groups.delete("subnets", &DeleteParams::default()).await).expect("delete the group");
    common::wait_object_gone(&groups, "subnets").await;
    let mutations = common::calls(&id, "ModifyDBInstance") + common::calls(&id, "DeleteDBInstance");
    assert!(
        mutations >= 2,
        "the operator changed and deleted the instance"
    );
    assert_eq!(
        common::denied(&caller),
        vec![],
        "no call of the operator was denied"
    );

    // Outside the policy: the shared subnet group carries no owner tag, so the operator's key
    // cannot delete it; AWS's AccessDenied, and the group is still there.
    let conf = aws_sdk_rds::config::Builder::from(&common::emulator_sdk_config().await)
        .credentials_provider(aws_sdk_rds::config::Credentials::new(
            &key, &secret, None, None, "iam-test",
        ))
        .build();
    let as_operator = aws_sdk_rds::Client::from_conf(conf);
    let shared = "coffee-manage-db-subnets";
    let refused = (as_operator.delete_db_subnet_group())
        .db_subnet_group_name(shared)
        .send()
        .await
        .expect_err("outside the policy");
    assert_eq!(refused.code(), Some("AccessDenied"), "{refused:?}");
    let still = rds
        .describe_db_subnet_groups()
        .db_subnet_group_name(shared)
        .send()
        .await;
    assert!(still.is_ok(), "the shared group is still there: {still:?}");
    assert_eq!(
        common::denied(&caller),
        vec![(
            "rds:DeleteDBSubnetGroup".to_owned(),
            format!("arn:aws:rds:us-east-1:123456789012:subgrp:{shared}")
        )]
    );
}
