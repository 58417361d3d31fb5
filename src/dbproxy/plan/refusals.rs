//! What a DBProxy's plan refuses before any call, from what it can read: a target of another
//! engine family, a role that is not the namespace's. Each is InvalidSpec-like: Stalled until the
//! spec changes. Table tests in `tests.rs`.

use super::Facts;
use crate::dbproxy::{DBProxy, EngineFamily, Resolved};

/// The reason and the words of the first refusal, if any.
pub(super) fn refused(f: &Facts, targets: &[Resolved]) -> Option<(&'static str, String)> {
    let g = &f.object;
    if let Some(why) = of_another_family(g, targets) {
        return Some(("InvalidSpec", why));
    }
    // RDS Proxy reads Secrets Manager as roleARN: a namespace names only its own (issue 77), as
    // exportTo.iamRole and restoreFrom.s3's role (`managed::roles`).
    let namespace = g.metadata.namespace.as_deref().unwrap_or_default();
    let granted = &f.extra.role_grants;
    crate::managed::roles::refused_role(granted, namespace, "roleARN", &g.spec.role_arn)
        .map(|why| ("RoleNotGranted", why))
}

/// A target whose engine is not of the proxy's engineFamily, in words: RDS refuses it
/// (RegisterDBProxyTargets, InvalidDBInstanceState "is not of engine family", a code that
/// otherwise means busy), so it is refused here, from the target's own spec, with no call.
fn of_another_family(g: &DBProxy, targets: &[Resolved]) -> Option<String> {
    let family = g.spec.engine_family;
    let (n, t) = (targets.iter().enumerate())
        .find(|(_, t)| EngineFamily::of(&t.engine).is_some_and(|e| e != family))?;
    let kind = if t.cluster { "DBCluster" } else { "DBInstance" };
    Some(format!(
        "targets[{n}]: {kind} {} runs {}, which is not of engineFamily {}: a proxy's targets \
         must be of its engineFamily",
        t.identifier,
        t.engine,
        family.as_str()
    ))
}
