//! `kubectl rds port-ack FILE...`: ACK rds-controller manifests (`rds.services.k8s.aws/v1alpha1`)
//! as this operator's, on stdout, and what could not be carried listed on stderr. The rules are
//! docs/porting-from-ack.md's:
//!
//! - the apiVersion becomes `rds.operator.rs/v1alpha1`; the kind stays;
//! - ACK's references `{from: {name}}` become `{name}` where this operator has the reference;
//! - a `masterUserPassword.namespace` of the object's own namespace is dropped (only that one is
//!   taken);
//! - a replica's `sourceDBInstanceIdentifier` becomes `replicaOf: {dbInstanceIdentifier}`;
//! - a DBSnapshot's `dbInstanceIdentifier` and a DBClusterSnapshot's `dbClusterIdentifier`
//!   become their `source`;
//! - any other spec field the kind's CRD does not have is left out and listed, with the advice
//!   the reference gives, as is `services.k8s.aws/adoption-fields`.
//!
//! Other documents (a Secret, a Namespace) pass through unchanged. Pure but for reading the
//! files.

use serde_yaml::{Mapping, Value};

const ACK_API: &str = "rds.services.k8s.aws/";
const API: &str = "rds.operator.rs/v1alpha1";

/// The ported documents, and what was left out ("DBInstance shop/coffee: kmsKeyRef: ...").
#[derive(Debug, Default)]
pub struct Ported {
    pub documents: Vec<Value>,
    pub left: Vec<String>,
}

/// The advice for a field ACK has and this operator does not (docs/porting-from-ack.md).
fn advice(field: &str) -> &'static str {
    match field {
        "kmsKeyRef" => "use kmsKeyID",
        "vpcSecurityGroupRefs" => "use vpcSecurityGroupIDs",
        "dbSnapshotIdentifier" => "use restoreFrom: {dbSnapshotIdentifier} or dbSnapshotRef",
        "globalClusterIdentifier" => {
            "use globalClusterRef: {name} (a GlobalCluster of the namespace)"
        }
        "sourceDBClusterIdentifier" => {
            "use sourceDBClusterRef: {name} (a DBCluster of the namespace)"
        }
        "masterUserSecretKMSKeyRef" => "use masterUserSecretKmsKeyId",
        "timezone" | "ncharCharacterSetName" | "replicaMode" => "not supported",
        f if f.starts_with("domain") => "not supported (Active Directory domains)",
        _ => "this kind has no such field",
    }
}

/// Ports every document of `text` (YAML, one or more documents).
pub fn port(text: &str, ported: &mut Ported) -> anyhow::Result<()> {
    for document in serde_yaml::Deserializer::from_str(text) {
        let value = <Value as serde::Deserialize>::deserialize(document)?;
        if value.is_null() {
            continue;
        }
        ported.documents.push(port_one(value, &mut ported.left)?);
    }
    Ok(())
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn port_one(mut doc: Value, left: &mut Vec<String>) -> anyhow::Result<Value> {
    if !text(&doc, "apiVersion").is_some_and(|a| a.starts_with(ACK_API)) {
        return Ok(doc);
    }
    let kind = text(&doc, "kind").unwrap_or_default().to_owned();
    let meta = doc.get("metadata").cloned().unwrap_or(Value::Null);
    let namespace = text(&meta, "namespace").map(str::to_owned);
    let name = text(&meta, "name").unwrap_or_default();
    let who = match &namespace {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    };
    let Some(fields) = spec_fields(&kind) else {
        left.push(format!(
            "{who}: this operator has no {kind} kind; the document is left out"
        ));
        return Ok(Value::Null);
    };
    doc["apiVersion"] = Value::from(API);
    if let Some(annotations) = doc
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_mapping_mut)
        && annotations
            .shift_remove("services.k8s.aws/adoption-fields")
            .is_some()
    {
        left.push(format!(
            "{who}: services.k8s.aws/adoption-fields: not supported, the identifier field names \
             what is adopted"
        ));
    }
    if let Some(meta) = doc.get_mut("metadata").and_then(Value::as_mapping_mut)
        && meta
            .get("annotations")
            .and_then(Value::as_mapping)
            .is_some_and(Mapping::is_empty)
    {
        meta.shift_remove("annotations");
    }
    if let Some(spec) = doc.get_mut("spec").and_then(Value::as_mapping_mut) {
        rename(&kind, spec);
        carry_refs(spec);
        password_namespace(spec, namespace.as_deref(), &who, left);
        let unknown: Vec<Value> = (spec.keys())
            .filter(|k| k.as_str().is_some_and(|k| !fields.iter().any(|f| f == k)))
            .cloned()
            .collect();
        for key in unknown {
            spec.shift_remove(&key);
            let field = key.as_str().unwrap_or_default();
            left.push(format!("{who}: {field}: {}", advice(field)));
        }
    }
    Ok(doc)
}

/// ACK's fields this operator has under another name or place.
fn rename(kind: &str, spec: &mut Mapping) {
    let moves: &[(&str, &str, &str)] = match kind {
        "DBInstance" => &[(
            "sourceDBInstanceIdentifier",
            "replicaOf",
            "dbInstanceIdentifier",
        )],
        "DBSnapshot" => &[("dbInstanceIdentifier", "source", "dbInstanceIdentifier")],
        "DBClusterSnapshot" => &[("dbClusterIdentifier", "source", "dbClusterIdentifier")],
        _ => &[],
    };
    for (from, to, key) in moves {
        if let Some(v) = spec.shift_remove(*from) {
            let mut inner = Mapping::new();
            inner.insert(Value::from(*key), v);
            spec.insert(Value::from(*to), Value::Mapping(inner));
        }
    }
}

/// `xRef: {from: {name}}` as `xRef: {name}` (the fields the CRD lacks are left out after).
fn carry_refs(spec: &mut Mapping) {
    for (key, value) in spec.iter_mut() {
        let is_ref = key.as_str().is_some_and(|k| k.ends_with("Ref"));
        let name = value.get("from").and_then(|f| f.get("name")).cloned();
        if let (true, Some(name)) = (is_ref, name) {
            let mut inner = Mapping::new();
            inner.insert(Value::from("name"), name);
            *value = Value::Mapping(inner);
        }
    }
}

/// masterUserPassword.namespace: dropped when it is the object's own (or the object names none),
/// listed otherwise (only the object's own namespace is taken).
fn password_namespace(spec: &mut Mapping, own: Option<&str>, who: &str, left: &mut Vec<String>) {
    let Some(password) = spec
        .get_mut("masterUserPassword")
        .and_then(Value::as_mapping_mut)
    else {
        return;
    };
    let Some(ns) = password
        .get("namespace")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return;
    };
    if own.is_none_or(|own| own == ns) {
        password.shift_remove("namespace");
    } else {
        left.push(format!(
            "{who}: masterUserPassword.namespace {ns}: only the object's own namespace is taken; \
             copy the Secret into it"
        ));
    }
}

/// The spec's fields of this operator's kind (its CRD's schema), None for a kind it has not.
fn spec_fields(kind: &str) -> Option<Vec<String>> {
    let crd: Value =
        serde_yaml::from_str(&rds_operator::kinds::crd_yaml(&kind.to_lowercase())?).ok()?;
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    let properties = spec.get("properties")?.as_mapping()?;
    Some(
        properties
            .keys()
            .filter_map(|k| k.as_str().map(str::to_owned))
            .collect(),
    )
}

/// The documents as one YAML stream.
pub fn to_yaml(documents: &[Value]) -> anyhow::Result<String> {
    let mut out = String::new();
    for d in documents.iter().filter(|d| !d.is_null()) {
        out.push_str("---\n");
        out.push_str(&serde_yaml::to_string(d)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ACK's samples: a DBCluster with its references by `from`, a KMS key and security groups
    /// by reference; a replica; a snapshot; and a Secret, which passes through.
    const ACK: &str = r#"
apiVersion: rds.services.k8s.aws/v1alpha1
kind: DBCluster
metadata:
  name: coffee
  namespace: shop
  annotations:
    services.k8s.aws/adoption-fields: '{"dbClusterIdentifier": "coffee"}'
spec:
  dbClusterIdentifier: coffee
  engine: aurora-mysql
  masterUsername: admin
  masterUserPassword: {namespace: shop, name: db-password, key: password}
  dbSubnetGroupRef: {from: {name: coffee-subnets}}
  dbClusterParameterGroupRef: {from: {name: coffee-params}}
  kmsKeyRef: {from: {name: coffee-key}}
  vpcSecurityGroupRefs: [{from: {name: coffee-sg}}]
---
apiVersion: rds.services.k8s.aws/v1alpha1
kind: DBInstance
metadata: {name: coffee-replica, namespace: shop}
spec:
  dbInstanceIdentifier: coffee-replica
  dbInstanceClass: db.t3.micro
  engine: mysql
  sourceDBInstanceIdentifier: coffee-db
  masterUserPassword: {namespace: other, name: db-password, key: password}
  timezone: UTC
---
apiVersion: rds.services.k8s.aws/v1alpha1
kind: DBSnapshot
metadata: {name: before-upgrade}
spec: {dbInstanceIdentifier: coffee-db, dbSnapshotIdentifier: before-upgrade}
---
apiVersion: v1
kind: Secret
metadata: {name: db-password}
stringData: {password: hunter2hunter2}
"#;

    #[test]
    fn ack_manifests_become_this_operators_and_what_is_left_out_is_listed() {
        let mut ported = Ported::default();
        port(ACK, &mut ported).expect("ported");
        let out = to_yaml(&ported.documents).unwrap();
        let golden = include_str!("golden/port-ack.yaml");
        assert_eq!(out, golden, "\n{out}");
        assert_eq!(
            ported.left,
            [
                "DBCluster shop/coffee: services.k8s.aws/adoption-fields: not supported, the \
                 identifier field names what is adopted",
                "DBCluster shop/coffee: kmsKeyRef: use kmsKeyID",
                "DBCluster shop/coffee: vpcSecurityGroupRefs: use vpcSecurityGroupIDs",
                "DBInstance shop/coffee-replica: masterUserPassword.namespace other: only the \
                 object's own namespace is taken; copy the Secret into it",
                "DBInstance shop/coffee-replica: timezone: not supported",
            ]
        );
    }

    /// Each ported document is a valid object of this operator's kind.
    #[test]
    fn the_ported_documents_are_this_operators_objects() {
        let mut ported = Ported::default();
        port(ACK, &mut ported).expect("ported");
        let [cluster, replica, snapshot, secret] = &ported.documents[..] else {
            panic!("{:?}", ported.documents);
        };
        let c: rds_operator::dbcluster::DBCluster =
            serde_yaml::from_value(cluster.clone()).unwrap();
        let subnets = c
            .spec
            .network
            .db_subnet_group_ref
            .expect("dbSubnetGroupRef");
        assert_eq!(subnets.name, "coffee-subnets");
        let r: rds_operator::dbinstance::DBInstance =
            serde_yaml::from_value(replica.clone()).unwrap();
        let of = r.spec.replica_of.expect("replicaOf");
        assert_eq!(of.db_instance_identifier.as_deref(), Some("coffee-db"));
        let s: rds_operator::dbsnapshot::DBSnapshot =
            serde_yaml::from_value(snapshot.clone()).unwrap();
        let source = s.spec.source.expect("source");
        assert_eq!(source.db_instance_identifier.as_deref(), Some("coffee-db"));
        assert_eq!(
            s.spec.db_snapshot_identifier.as_deref(),
            Some("before-upgrade")
        );
        assert_eq!(secret["apiVersion"], "v1", "passed through");
    }
}
