//! The placement rules, a row each.

use std::collections::BTreeMap;

use super::*;
use crate::accounts::{Account, NamespaceSelector};

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    (pairs.iter())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// An account as an AWSAccount (uid-NAME, generation 3) gives it to placement.
fn account(name: &str, namespaces: &[&str], regions: &[&str]) -> Account {
    Account {
        name: name.to_owned(),
        uid: format!("uid-{name}"),
        generation: 3,
        regions: regions.iter().map(|r| r.to_string()).collect(),
        namespace_selector: NamespaceSelector {
            names: namespaces.iter().map(|n| n.to_string()).collect(),
            ..Default::default()
        },
        reach: Default::default(),
    }
}

fn facts<'a>(account: Option<&'a Account>) -> Facts<'a> {
    Facts {
        namespace: "team-a",
        account,
        own_region: "us-east-1",
        ..Default::default()
    }
}

fn reason(result: Result<Target, Refusal>) -> Result<(String, String), &'static str> {
    match result {
        Ok(Target { source, region }) => Ok((
            match source {
                Source::Own => "own".into(),
                Source::Account {
                    name,
                    uid,
                    generation,
                    ..
                } => format!("{name}/{uid}/{generation}"),
                Source::AckRole {
                    account_id,
                    role_arn,
                } => format!("ack:{account_id}:{role_arn}"),
            },
            region,
        )),
        Err(r) => Err(r.reason),
    }
}

#[test]
fn where_each_object_is_reached() {
    let prod = account("prod", &["team-a"], &["us-east-1", "eu-west-1"]);
    let other = account("other", &["team-b"], &["us-east-1"]);
    let ok = |s: &str, r: &str| Ok((s.to_string(), r.to_string()));
    type Change = fn(&mut Facts);
    type Row<'a> = (
        &'a str,
        Option<&'a Account>,
        Change,
        Result<(String, String), &'a str>,
    );
    let rows: Vec<Row> = vec![
        (
            "nothing named: the operator's own, in its region",
            None,
            |_| {},
            ok("own", "us-east-1"),
        ),
        (
            "a region of its own, with the operator's credentials",
            None,
            |f| f.region = Some("eu-west-1"),
            ok("own", "eu-west-1"),
        ),
        (
            "the namespace's region",
            None,
            |f| f.namespace_annotations = map(&[(REGION_ANNOTATION, "eu-central-1")]),
            ok("own", "eu-central-1"),
        ),
        (
            "the object's region wins over its namespace's",
            None,
            |f| {
                f.region = Some("eu-west-1");
                f.namespace_annotations = map(&[(REGION_ANNOTATION, "eu-central-1")]);
            },
            ok("own", "eu-west-1"),
        ),
        (
            "an account that selects the namespace",
            Some(&prod),
            |f| f.account_ref = Some("prod"),
            ok("prod/uid-prod/3", "us-east-1"),
        ),
        (
            "an account and a region it allows",
            Some(&prod),
            |f| {
                f.account_ref = Some("prod");
                f.region = Some("eu-west-1");
            },
            ok("prod/uid-prod/3", "eu-west-1"),
        ),
        (
            "the namespace's account",
            Some(&prod),
            |f| f.namespace_annotations = map(&[(ACCOUNT_ANNOTATION, "prod")]),
            ok("prod/uid-prod/3", "us-east-1"),
        ),
        (
            "an account that does not exist: wait",
            None,
            |f| f.account_ref = Some("prod"),
            Err("AccountNotFound"),
        ),
        (
            "the cache holds another account of the name it asks for: wait",
            Some(&other),
            |f| f.account_ref = Some("prod"),
            Err("AccountNotFound"),
        ),
        (
            "an account that does not select the namespace: refused",
            Some(&other),
            |f| f.account_ref = Some("other"),
            Err("AccountNotGranted"),
        ),
        (
            "the namespace's account does not select it: refused",
            Some(&other),
            |f| f.namespace_annotations = map(&[(ACCOUNT_ANNOTATION, "other")]),
            Err("AccountNotGranted"),
        ),
        (
            "a region the account does not allow: refused",
            Some(&prod),
            |f| {
                f.account_ref = Some("prod");
                f.region = Some("ap-south-1");
            },
            Err("RegionNotAllowed"),
        ),
        (
            "a region AWS's partitions do not have (a typo): a spec error, before any account",
            Some(&prod),
            |f| {
                f.account_ref = Some("prod");
                f.region = Some("eu-west-9");
            },
            Err("InvalidSpec"),
        ),
        (
            "a namespace's region AWS's partitions do not have: the same",
            None,
            |f| f.namespace_annotations = map(&[(REGION_ANNOTATION, "us-east-7")]),
            Err("InvalidSpec"),
        ),
        (
            "a region of another partition the SDK knows: placed",
            None,
            |f| f.region = Some("cn-north-1"),
            ok("own", "cn-north-1"),
        ),
        (
            "ACK annotations are ignored without --ack-compat",
            None,
            |f| {
                f.namespace_annotations = map(&[
                    (ACK_ACCOUNT_ANNOTATION, "111122223333"),
                    (ACK_DEFAULT_REGION_ANNOTATION, "eu-west-1"),
                ])
            },
            ok("own", "us-east-1"),
        ),
        (
            "ACK: the role map's role for the namespace's account, in its default region",
            None,
            |f| {
                f.namespace_annotations = map(&[
                    (ACK_ACCOUNT_ANNOTATION, "111122223333"),
                    (ACK_DEFAULT_REGION_ANNOTATION, "eu-west-1"),
                ]);
                f.ack = Some(Ack {
                    role_map: map(&[("111122223333", "arn:aws:iam::111122223333:role/ack")]),
                });
            },
            ok(
                "ack:111122223333:arn:aws:iam::111122223333:role/ack",
                "eu-west-1",
            ),
        ),
        (
            "ACK: the resource's region annotation wins over the namespace's default",
            None,
            |f| {
                f.namespace_annotations = map(&[(ACK_DEFAULT_REGION_ANNOTATION, "eu-west-1")]);
                f.annotations = map(&[(ACK_REGION_ANNOTATION, "eu-central-1")]);
                f.ack = Some(Ack::default());
            },
            ok("own", "eu-central-1"),
        ),
        (
            "ACK: an account the role map does not map: refused",
            None,
            |f| {
                f.namespace_annotations = map(&[(ACK_ACCOUNT_ANNOTATION, "111122223333")]);
                f.ack = Some(Ack::default());
            },
            Err("AccountNotGranted"),
        ),
        (
            "an AWSAccount wins over ACK's annotation",
            Some(&prod),
            |f| {
                f.account_ref = Some("prod");
                f.namespace_annotations = map(&[(ACK_ACCOUNT_ANNOTATION, "111122223333")]);
                f.ack = Some(Ack::default());
            },
            ok("prod/uid-prod/3", "us-east-1"),
        ),
    ];
    for (name, account, change, want) in rows {
        let mut f = facts(account);
        change(&mut f);
        assert_eq!(reason(decide(&f)), want, "{name}");
    }
}

#[test]
fn a_namespace_selected_by_labels_is_granted() {
    let mut labelled = account("shared", &[], &["us-east-1"]);
    labelled.namespace_selector.match_labels = map(&[("tier", "prod")]);
    let mut f = facts(Some(&labelled));
    f.account_ref = Some("shared");
    assert_eq!(reason(decide(&f)), Err("AccountNotGranted"));
    f.namespace_labels = map(&[("tier", "prod")]);
    assert!(decide(&f).is_ok());
}

fn placed(account_id: &str, region: &str) -> Placement {
    Placement {
        account: None,
        account_id: account_id.into(),
        region: region.into(),
    }
}

#[test]
fn once_created_a_resource_stays_where_it_was_recorded() {
    let own = Target {
        source: Source::Own,
        region: "us-east-1".into(),
    };
    let here = placed("111111111111", "us-east-1");
    let rows = [
        (
            "never recorded: take it",
            None,
            true,
            placed("111111111111", "eu-west-1"),
            Ok(()),
        ),
        (
            "not created yet: it may move",
            Some(&here),
            false,
            placed("222222222222", "eu-west-1"),
            Ok(()),
        ),
        (
            "created, same account and region",
            Some(&here),
            true,
            here.clone(),
            Ok(()),
        ),
        (
            "created, another region: refused",
            Some(&here),
            true,
            placed("111111111111", "eu-west-1"),
            Err("AccountOrRegionMismatch"),
        ),
        (
            "created, another account: refused",
            Some(&here),
            true,
            placed("222222222222", "us-east-1"),
            Err("AccountOrRegionMismatch"),
        ),
    ];
    for (name, recorded, created, now, want) in rows {
        assert_eq!(
            check(recorded, created, &now, &own).map_err(|r| r.reason),
            want,
            "{name}"
        );
        let kept = record(recorded, created, &now);
        match (recorded, created) {
            (Some(was), true) => assert_eq!(&kept, was, "{name}"),
            _ => assert_eq!(kept, now, "{name}"),
        }
    }
    let renamed = Placement {
        account: Some("renamed".into()),
        ..here.clone()
    };
    assert_eq!(
        check(Some(&here), true, &renamed, &own),
        Ok(()),
        "an account renamed over the same id is the same account"
    );
}

#[test]
fn an_ack_role_that_reaches_another_account_is_refused() {
    let target = Target {
        source: Source::AckRole {
            account_id: "111111111111".into(),
            role_arn: "arn:aws:iam::111111111111:role/ack".into(),
        },
        region: "us-east-1".into(),
    };
    let elsewhere = placed("222222222222", "us-east-1");
    assert_eq!(
        check(None, false, &elsewhere, &target).map_err(|r| r.reason),
        Err("AccountOrRegionMismatch")
    );
    assert_eq!(
        check(None, false, &placed("111111111111", "us-east-1"), &target),
        Ok(())
    );
}
