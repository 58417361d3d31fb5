//! Which IAM roles a namespace may have RDS act as. RDS reads and writes S3 (a restore from S3, a
//! snapshot export) as the role the spec names, so a role is a reach into whatever its policy
//! allows: another team's bucket as much as this one's. A namespace names only a role a platform
//! admin made or granted for it:
//! - a role under the IAM path `/rds-operator/<namespace>/` is the namespace's own (making IAM
//!   roles, and choosing their path, is the account admin's act, never a namespace's);
//! - the operator's `--grant-roles` (`tenancy.grantRoles`) lets the namespaces it lists name any
//!   role (`*`: every namespace).
//!
//! Pure: the ARN is read, nothing is called.

use crate::managed::tags::listed;

/// The first segment of the IAM path under which a role is a namespace's own:
/// `arn:aws:iam::<account>:role/rds-operator/<namespace>/<name>`.
pub const ROLE_PATH: &str = "rds-operator";

/// Whether the namespace may name this role (its ARN) for RDS to act as; `granted`: the
/// namespaces the operator's --grant-roles lists.
pub fn may_pass_role(granted: &[String], namespace: &str, arn: &str) -> bool {
    if listed(granted, namespace) {
        return true;
    }
    let Some((head, resource)) = arn.split_once(":role/") else {
        return false;
    };
    let iam = head.starts_with("arn:") && head.contains(":iam::");
    let own = (resource.strip_prefix(ROLE_PATH))
        .and_then(|r| r.strip_prefix('/'))
        .and_then(|r| r.split_once('/'))
        .is_some_and(|(ns, name)| ns == namespace && !name.is_empty() && !name.contains('/'));
    iam && own
}

/// Why the namespace may not name this role, for a condition and an Event; None: it may.
pub fn refused_role(granted: &[String], namespace: &str, field: &str, arn: &str) -> Option<String> {
    (!may_pass_role(granted, namespace, arn)).then(|| {
        format!(
            "{field} names IAM role {arn}, which is not this namespace's: a role it may name is under \
             the IAM path /{ROLE_PATH}/{namespace}/ (made by the account's admin), or any role when \
             the operator's --grant-roles (tenancy.grantRoles) lists the namespace; nothing is sent \
             (docs/tenancy.md, \"IAM roles\")"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::Grants;

    #[test]
    fn a_namespace_names_only_a_role_under_its_own_path_or_one_granted() {
        let none = Grants::default();
        let granted = Grants {
            roles: vec!["shop".into()],
            ..Grants::default()
        };
        let every = Grants {
            roles: vec!["*".into()],
            ..Grants::default()
        };
        let own = "arn:aws:iam::123456789012:role/rds-operator/shop/s3-import";
        let rows: Vec<(&str, &Grants, &str, bool)> = vec![
            ("its own path", &none, own, true),
            (
                "another namespace's path",
                &none,
                "arn:aws:iam::123456789012:role/rds-operator/bar/s3-import",
                false,
            ),
            (
                "a namespace whose name begins the same",
                &none,
                "arn:aws:iam::123456789012:role/rds-operator/shopping/s3-import",
                false,
            ),
            (
                "a deeper path under its own: another level the admin did not make for it",
                &none,
                "arn:aws:iam::123456789012:role/rds-operator/shop/bar/s3-import",
                false,
            ),
            (
                "no name after the path",
                &none,
                "arn:aws:iam::123456789012:role/rds-operator/shop/",
                false,
            ),
            (
                "a role at the root",
                &none,
                "arn:aws:iam::123456789012:role/s3-import",
                false,
            ),
            (
                "not an IAM role ARN",
                &none,
                "arn:aws:s3:::role/rds-operator/shop/x",
                false,
            ),
            ("a name, not an ARN", &none, "rds-operator/shop/x", false),
            (
                "--grant-roles lists it",
                &granted,
                "arn:aws:iam::123456789012:role/s3-import",
                true,
            ),
            (
                "--grant-roles lists another",
                &granted,
                "arn:aws:iam::123456789012:role/rds-operator/bar/s3-import",
                true,
            ),
            (
                "--grant-roles '*'",
                &every,
                "arn:aws:iam::123456789012:role/anything",
                true,
            ),
        ];
        for (what, grants, arn, may) in rows {
            assert_eq!(may_pass_role(&grants.roles, "shop", arn), may, "{what}");
            let field = "restoreFrom.s3.ingestionRole";
            let refused = refused_role(&grants.roles, "shop", field, arn);
            assert_eq!(refused.is_none(), may, "{what}");
        }
    }
}
