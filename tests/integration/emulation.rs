//! The emulator keeps RDS's promises on creates: a create RDS refuses leaves nothing behind, and
//! every instance has a resource id of its own from the moment it exists, so the tenancy rules,
//! which key on DbiResourceId, can trust it. A DBInstance deleted and applied again at once with
//! the same identifier (its automated backups retained, the operator's default) is created once,
//! as a new instance.

use std::collections::BTreeSet;

use kube::api::PostParams;
use serde_json::json;

use crate::common::{
    Operator, TIMEOUT, calls, dbinstance, delete_and_wait, describe, is_ready, setup, unique,
    wait_dbi,
};

/// 100 creates, one in four first refused (a parameter group that does not exist): each refused
/// one leaves no instance, and the 100 instances made have 100 distinct DbiResourceIds; an
/// identifier deleted with its automated backups retained is created again at once, as another
/// instance.
#[tokio::test]
async fn a_refused_create_leaves_nothing_and_every_instance_has_its_own_resource_id() {
    let rds = crate::common::rds().await;
    let prefix = unique("many");
    let create = |id: String, group: Option<&str>| {
        let call = rds
            .create_db_instance()
            .db_instance_identifier(id)
            .engine("mysql")
            .db_instance_class("db.t3.micro")
            .allocated_storage(20)
            .master_username("admin")
            .master_user_password("coffee-password-1")
            .backup_retention_period(1);
        match group {
            Some(g) => call.db_parameter_group_name(g),
            None => call,
        }
        .send()
    };
    let mut ids = BTreeSet::new();
    for i in 0..100 {
        let id = format!("{prefix}-{i}");
        if i % 4 == 0 {
            let refused = create(id.clone(), Some("no-such-group")).await;
            let error = refused.expect_err("a missing parameter group is refused");
            let code = error.as_service_error().and_then(|e| e.meta().code());
            assert_eq!(code, Some("DBParameterGroupNotFound"), "{error:?}");
            assert!(
                describe(&rds, &id).await.is_none(),
                "{id}: nothing left after the refusal"
            );
        }
        let made =
            (create(id.clone(), None).await).unwrap_or_else(|e| panic!("create {id}: {e:?}"));
        let resource = made
            .db_instance()
            .and_then(|d| d.dbi_resource_id())
            .expect("an id");
        ids.insert(resource.to_owned());
    }
    assert_eq!(ids.len(), 100, "100 instances, 100 resource ids");

    // Deleted with its automated backups retained, then created again in the same minute.
    let again = format!("{prefix}-0");
    (rds.delete_db_instance()
        .db_instance_identifier(&again)
        .skip_final_snapshot(true)
        .delete_automated_backups(false)
        .send()
        .await)
        .expect("delete");
    crate::common::wait_for("the instance gone", TIMEOUT, || async {
        describe(&rds, &again).await.is_none().then_some(())
    })
    .await;
    let made = (create(again.clone(), None).await).expect("the same identifier again");
    let resource = made
        .db_instance()
        .and_then(|d| d.dbi_resource_id())
        .unwrap();
    assert!(!ids.contains(resource), "a new instance, a new resource id");
    for i in 0..100 {
        let _ = rds
            .delete_db_instance()
            .db_instance_identifier(format!("{prefix}-{i}"))
            .skip_final_snapshot(true)
            .send()
            .await;
    }
}

/// A DBInstance deleted and applied again at once with the same identifier: one CreateDBInstance
/// each time, both accepted (moto named the new instance's first automated snapshot like the
/// retained one of the same minute and refused the create, leaving the instance behind with
/// another instance's DbiResourceId), and a resource id of its own.
#[tokio::test]
async fn a_dbinstance_deleted_and_applied_again_at_once_is_created_once_as_a_new_instance() {
    let (client, ns, instances, rds) = setup("again").await;
    let _operator = Operator::start(&ns);
    let id = unique("again");
    let db = dbinstance("db", &id, json!({"backupRetentionPeriod": 1}));
    (instances.create(&PostParams::default(), &db).await).expect("create");
    let first = wait_dbi(&instances, "db", "Ready", TIMEOUT, is_ready).await;
    let first_id = first
        .status
        .and_then(|s| s.dbi_resource_id)
        .expect("a resource id");
    delete_and_wait(&instances, "db").await;
    (instances.create(&PostParams::default(), &db).await).expect("apply again");
    let second = wait_dbi(&instances, "db", "Ready again", TIMEOUT, is_ready).await;
    let second_id = second
        .status
        .and_then(|s| s.dbi_resource_id)
        .expect("a resource id");
    assert_ne!(first_id, second_id, "another instance");
    assert_eq!(calls(&id, "CreateDBInstance"), 2, "one create each time");
    let warnings: Vec<_> = (crate::common::events(&client, &ns, "db").await.into_iter())
        .filter(|e| e.type_.as_deref() == Some("Warning"))
        .map(|e| (e.reason, e.note))
        .collect();
    assert!(warnings.is_empty(), "no create was refused: {warnings:?}");
    let rds_now = describe(&rds, &id).await.expect("the instance");
    assert_eq!(rds_now.dbi_resource_id(), Some(second_id.as_str()));
    delete_and_wait(&instances, "db").await;
}

/// A point-in-time restore (which moto makes by copying the source instance) answers while
/// another instance's server is behind a proxy endpoint listening on a socket: the copy is of the
/// instance, never of the emulator's state. It failed, empty-handed, whenever another test had an
/// endpoint open (the operator's PITR test timed out on it now and then).
#[tokio::test]
async fn a_point_in_time_restore_answers_while_an_endpoint_listens() {
    let rds = crate::common::rds().await;
    let (real, source, pitr, proxy) = (
        unique("emu-real"),
        unique("emu-src"),
        unique("emu-pitr"),
        unique("emu-px"),
    );
    for (id, tags) in [(&real, true), (&source, false)] {
        let tag = aws_sdk_rds::types::Tag::builder()
            .key("moto-ext:real-engine")
            .value("true")
            .build();
        (rds.create_db_instance())
            .db_instance_identifier(id)
            .engine("mysql")
            .db_instance_class("db.t3.micro")
            .allocated_storage(20)
            .master_username("admin")
            .master_user_password("coffee-password-1")
            .backup_retention_period(1)
            .set_tags(tags.then(|| vec![tag]))
            .send()
            .await
            .expect("create");
    }
    for id in [&real, &source] {
        crate::common::wait_for("available", TIMEOUT, || async {
            let i = describe(&rds, id).await?;
            (i.db_instance_status() == Some("available")).then_some(())
        })
        .await;
    }
    let config = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(crate::common::aws_endpoint())
        .region(aws_config::Region::new(crate::common::region()))
        .load()
        .await;
    let sm = aws_sdk_secretsmanager::Client::new(&config);
    let secret = (sm.create_secret())
        .name(format!("emulation/{proxy}"))
        .secret_string(r#"{"username": "admin", "password": "coffee-password-1"}"#)
        .send()
        .await
        .expect("secret");
    let auth = aws_sdk_rds::types::UserAuthConfig::builder()
        .secret_arn(secret.arn().unwrap_or_default())
        .build();
    (rds.create_db_proxy())
        .db_proxy_name(&proxy)
        .engine_family(aws_sdk_rds::types::EngineFamily::Mysql)
        .auth(auth)
        .role_arn("arn:aws:iam::123456789012:role/emulation")
        .set_vpc_subnet_ids(Some(crate::common::coffee_subnets(&rds).await))
        .send()
        .await
        .expect("proxy");
    crate::common::wait_for("the proxy available", TIMEOUT, || async {
        let out = rds
            .describe_db_proxies()
            .db_proxy_name(&proxy)
            .send()
            .await
            .ok()?;
        let status = out.db_proxies().first()?.status()?.as_str().to_owned();
        (status == "available").then_some(())
    })
    .await;
    (rds.register_db_proxy_targets())
        .db_proxy_name(&proxy)
        .db_instance_identifiers(&real)
        .send()
        .await
        .expect("register: the proxy endpoint opens");
    let restored = (rds.restore_db_instance_to_point_in_time())
        .source_db_instance_identifier(&source)
        .target_db_instance_identifier(&pitr)
        .use_latest_restorable_time(true)
        .send()
        .await;
    assert!(restored.is_ok(), "the restore answers: {restored:?}");
    rds.delete_db_proxy()
        .db_proxy_name(&proxy)
        .send()
        .await
        .expect("delete proxy");
    for id in [&real, &source, &pitr] {
        let _ = (rds.delete_db_instance())
            .db_instance_identifier(id)
            .skip_final_snapshot(true)
            .send()
            .await;
    }
}

/// A major upgrade of an Aurora cluster through a blue/green deployment, as RDS answers it: refused
/// (InvalidParameterCombination, with RDS's words) while a member uses a custom DB parameter group
/// and no TargetDBParameterGroupName names the members' new one; with it, green's member carries
/// that group and the cluster the new version, and each green member the tags of its blue member.
#[tokio::test]
async fn an_aurora_major_blue_green_needs_the_members_new_parameter_group() {
    let rds = crate::common::rds().await;
    let (id, member) = (unique("bgmaj"), unique("bgmaj-w"));
    let (group, new_group) = (unique("bgmaj-pg57"), unique("bgmaj-pg80"));
    for (name, family) in [(&group, "aurora-mysql5.7"), (&new_group, "aurora-mysql8.0")] {
        (rds.create_db_parameter_group()
            .db_parameter_group_name(name)
            .db_parameter_group_family(family)
            .description("the members' own")
            .send()
            .await)
            .expect("a custom DB parameter group");
    }
    // The cluster in a custom DB cluster parameter group with binary logging on, as RDS asks of the
    // source of an Aurora MySQL deployment (Aurora blue-green-deployments-creating.html), and green
    // in one of the new family (a custom group needs a target on a major upgrade).
    let (cluster_group, new_cluster_group) = (unique("bgmaj-cpg57"), unique("bgmaj-cpg80"));
    for (name, family) in [
        (&cluster_group, "aurora-mysql5.7"),
        (&new_cluster_group, "aurora-mysql8.0"),
    ] {
        (rds.create_db_cluster_parameter_group()
            .db_cluster_parameter_group_name(name)
            .db_parameter_group_family(family)
            .description("binary logging on")
            .send()
            .await)
            .expect("a custom DB cluster parameter group");
        let binlog = aws_sdk_rds::types::Parameter::builder()
            .parameter_name("binlog_format")
            .parameter_value("ROW")
            .apply_method(aws_sdk_rds::types::ApplyMethod::PendingReboot)
            .build();
        (rds.modify_db_cluster_parameter_group()
            .db_cluster_parameter_group_name(name)
            .parameters(binlog)
            .send()
            .await)
            .expect("binlog_format on");
    }
    let made = (rds
        .create_db_cluster()
        .db_cluster_identifier(&id)
        .engine("aurora-mysql")
        .engine_version("5.7.mysql_aurora.2.11.2")
        .db_cluster_parameter_group_name(&cluster_group)
        .master_username("admin")
        .master_user_password("coffee-password-1")
        .send()
        .await)
        .expect("the cluster");
    let arn = made
        .db_cluster()
        .unwrap()
        .db_cluster_arn()
        .unwrap()
        .to_owned();
    let tag = aws_sdk_rds::types::Tag::builder()
        .key("owner")
        .value("the-member")
        .build();
    (rds.create_db_instance()
        .db_instance_identifier(&member)
        .db_cluster_identifier(&id)
        .engine("aurora-mysql")
        .db_instance_class("db.r6g.large")
        .db_parameter_group_name(&group)
        .tags(tag)
        .send()
        .await)
        .expect("the member");
    crate::common::wait_for("the cluster available", TIMEOUT, || async {
        let out = rds
            .describe_db_clusters()
            .db_cluster_identifier(&id)
            .send()
            .await
            .ok()?;
        (out.db_clusters()[0].status() == Some("available")).then_some(())
    })
    .await;
    let create = |name: &str, members_group: Option<&str>| {
        rds.create_blue_green_deployment()
            .blue_green_deployment_name(name)
            .source(&arn)
            .target_engine_version("8.0.mysql_aurora.3.08.0")
            .target_db_cluster_parameter_group_name(&new_cluster_group)
            .set_target_db_parameter_group_name(members_group.map(str::to_owned))
            .send()
    };
    let refused = create(&format!("{id}-1"), None).await.expect_err("refused");
    let refused = refused.into_service_error();
    assert_eq!(refused.meta().code(), Some("InvalidParameterCombination"));
    assert!(
        refused
            .meta()
            .message()
            .unwrap_or_default()
            .contains(&format!(
                "The current DB instance parameter group {group} is custom"
            )),
        "{refused:?}"
    );
    let made = create(&format!("{id}-2"), Some(&new_group))
        .await
        .expect("accepted with the members' new group");
    let green = made.blue_green_deployment().unwrap().target().unwrap();
    let green = green.rsplit(':').next().unwrap().to_owned();
    let g = rds
        .describe_db_clusters()
        .db_cluster_identifier(&green)
        .send()
        .await
        .unwrap();
    let g = &g.db_clusters()[0];
    assert_eq!(g.engine_version(), Some("8.0.mysql_aurora.3.08.0"));
    let gm = g.db_cluster_members()[0].db_instance_identifier().unwrap();
    let gm = rds
        .describe_db_instances()
        .db_instance_identifier(gm)
        .send()
        .await
        .unwrap();
    let gm = &gm.db_instances()[0];
    let groups: Vec<_> = (gm.db_parameter_groups().iter())
        .filter_map(|p| p.db_parameter_group_name())
        .collect();
    assert_eq!(groups, [new_group.as_str()]);
    let tags: Vec<_> = (gm.tag_list().iter())
        .map(|t| (t.key(), t.value()))
        .collect();
    assert_eq!(
        tags,
        [(Some("owner"), Some("the-member"))],
        "blue member's tags"
    );
}
