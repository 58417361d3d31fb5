//! Proves the test bed itself: a kube-apiserver that serves our CRD, and an emulator whose RDS
//! instances take time to become available.

use std::time::Duration;

use kube::api::{Api, PostParams};
use rds_operator::dbinstance::{DBInstance, DBInstanceSpec};

use crate::common::{self, wait_for};

#[tokio::test]
async fn control_plane_serves_the_crd() {
    let client = common::client_with_crd().await;
    let version = client.apiserver_version().await.expect("server version");
    println!(
        "test bed: kube-apiserver {} ({}) at {}",
        version.git_version,
        version.platform,
        common::kubeconfig().display()
    );
    assert_eq!(format!("{}.{}", version.major, version.minor), "1.36");

    let ns = common::namespace(&client, "smoke").await;
    let api: Api<DBInstance> = Api::namespaced(client.clone(), &ns);
    let db = DBInstance::new(
        "readback",
        DBInstanceSpec {
            engine: "mysql".into(),
            db_instance_class: "db.t3.micro".into(),
            allocated_storage: Some(20),
            ..Default::default()
        },
    );
    api.create(&PostParams::default(), &db)
        .await
        .expect("create DBInstance");
    let back = api.get("readback").await.expect("read DBInstance back");
    assert_eq!(back.spec, db.spec);
    assert!(back.metadata.uid.is_some(), "the API server assigned a uid");
}

#[tokio::test]
async fn emulator_instances_go_from_creating_to_available() {
    let rds = common::rds().await;
    let identifier = common::unique("smoke");
    println!("test bed: AWS emulator at {}", common::aws_endpoint());
    rds.create_db_instance()
        .db_instance_identifier(&identifier)
        .engine("mysql")
        .engine_version("8.0.42")
        .db_instance_class("db.t3.micro")
        .allocated_storage(20)
        .master_username("admin")
        .master_user_password("smoke-test-password")
        .send()
        .await
        .expect("CreateDBInstance");
    let mut seen = Vec::<String>::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while seen.last().map(String::as_str) != Some("available") {
        assert!(
            std::time::Instant::now() < deadline,
            "not available after 60 s; states seen: {seen:?}"
        );
        let db = common::describe(&rds, &identifier)
            .await
            .expect("the instance exists");
        let status = db.db_instance_status().unwrap_or_default().to_owned();
        if seen.last() != Some(&status) {
            seen.push(status);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    println!("test bed: instance {identifier} went through {seen:?}");
    assert_eq!(
        seen.first().map(String::as_str),
        Some("creating"),
        "states seen: {seen:?}"
    );
    assert_eq!(seen.last().map(String::as_str), Some("available"));

    rds.delete_db_instance()
        .db_instance_identifier(&identifier)
        .skip_final_snapshot(true)
        .send()
        .await
        .expect("DeleteDBInstance");
    wait_for("the instance to be gone", Duration::from_secs(60), || {
        let rds = rds.clone();
        let identifier = identifier.clone();
        async move {
            common::describe(&rds, &identifier)
                .await
                .is_none()
                .then_some(())
        }
    })
    .await;
}
