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
