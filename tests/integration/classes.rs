//! The DB instance class a DBInstance asks for, checked against what RDS offers for its engine
//! and version in its region (DescribeOrderableDBInstanceOptions) before any CreateDBInstance.

use kube::api::PostParams;
use serde_json::json;

use crate::common::{self, *};

/// `db.t3.nonexistent` matches the CRD's pattern, so the API server takes it; RDS does not offer
/// it. The DBInstance is Stalled, InvalidSpec naming dbInstanceClass, and no CreateDBInstance
/// reaches the emulator over three passes of the operator's (each woken by an edit); the offered
/// answer is read once (two calls: the class, then the engine), then kept. Changed to a class RDS offers, it is made.
#[tokio::test]
async fn a_class_rds_does_not_offer_is_refused_naming_the_field_and_never_sent() {
    let (_client, ns, api, _rds) = setup("badclass").await;
    let operator = Operator::start(&ns);
    let id = common::unique("badclass");
    let spec = json!({"dbInstanceClass": "db.t3.nonexistent"});
    (api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await)
        .expect("the schema's pattern takes it");
    let db = wait_dbi(&api, "db", "InvalidSpec", TIMEOUT, |db| {
        condition(db, "Synced").is_some_and(|c| c.1 == "InvalidSpec")
    })
    .await;
    let message = condition(&db, "Synced").unwrap().2;
    assert!(
        message.contains("dbInstanceClass db.t3.nonexistent is not offered for mysql 8.0.42")
            && message.contains("describe-orderable-db-instance-options"),
        "{message}"
    );
    assert_eq!(
        condition(&db, "Stalled").map(|c| c.0).as_deref(),
        Some("True")
    );
    let read = common::operator_calls(&operator, "DescribeOrderableDBInstanceOptions");
    assert!(read >= 1, "the offered classes were read");
    let unsent = || async { common::calls(&id, "CreateDBInstance") == 0 };
    let db = ("DBInstance", "db");
    common::holds_over_pokes(&operator, &api, db, "no CreateDBInstance sent", unsent).await;
    assert_eq!(
        common::operator_calls(&operator, "DescribeOrderableDBInstanceOptions"),
        read,
        "read once (its pages), then from the cache"
    );
    // A class RDS offers: made.
    patch_spec(&api, "db", json!({"dbInstanceClass": "db.t3.micro"})).await;
    wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    assert_eq!(common::calls(&id, "CreateDBInstance"), 1);
    common::delete_and_wait(&api, "db").await;
}
