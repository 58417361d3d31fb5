//! The pure plan of a DBProxy: [`Facts`] in, [`Plan`] out. Its Secrets Manager secret made
//! before the proxy and rewritten when the target's password changes; one CreateDBProxy once the
//! targets resolve, never again once made; settings (ModifyDBProxy), pool
//! (ModifyDBProxyTargetGroup) and targets (Register/DeregisterDBProxyTargets) kept while RDS
//! reports it available; its connection Secret written when it differs and only if it is this
//! object's; deletion as every group kind's (`managed::named`: the proxy and the operator's
//! secret go, the targets stay). Table tests in `plan/tests.rs`.

use std::collections::BTreeMap;
use std::time::Duration;

use kube::runtime::events::EventType;

use crate::database::connection::ConnectionInfo;
use crate::database::secret::{SecretStep, Writer, connection_write, plan_write};
use crate::managed::named;
use crate::managed::plan::{ConditionPlan, Requeue};
use crate::managed::tags;
use crate::sensitive::Sensitive;

use super::{
    ConnectionPool, Credentials, DBProxy, DBProxyStatus, IamAuth, ObservedProxy, Resolved,
};
use crate::database::parts::ConnectionSecretSpec;
use k8s_openapi::api::core::v1::Secret;

pub type Facts = named::Facts<DBProxy>;

/// The proxy's settings ModifyDBProxy keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub require_tls: bool,
    pub idle_client_timeout: Option<i32>,
    pub security_groups: Vec<String>,
    pub role_arn: String,
    /// The Secrets Manager secret and the IAM setting of its auth.
    pub auth: (String, String),
}

/// A call or write only this kind makes.
#[derive(Clone, Debug, PartialEq)]
pub enum Own {
    /// CreateSecret of the proxy's credentials, tagged with the owner.
    CreateSecret {
        name: String,
        username: String,
        password: Sensitive,
        tags: BTreeMap<String, String>,
    },
    /// PutSecretValue: the target's password changed.
    PutSecret {
        arn: String,
        username: String,
        password: Sensitive,
    },
    /// CreateDBProxy, tagged.
    Create {
        name: String,
        engine_family: String,
        subnets: Vec<String>,
        settings: Settings,
        tags: BTreeMap<String, String>,
    },
    Modify {
        name: String,
        settings: Settings,
    },
    ModifyPool {
        name: String,
        pool: ConnectionPool,
    },
    /// RegisterDBProxyTargets (`true`) or DeregisterDBProxyTargets of these targets.
    Targets {
        name: String,
        register: bool,
        targets: Vec<Resolved>,
    },
    /// CreateDBProxyEndpoint, tagged.
    CreateEndpoint {
        proxy: String,
        name: String,
        role: String,
        subnets: Vec<String>,
        tags: BTreeMap<String, String>,
    },
    DeleteEndpoint {
        name: String,
    },
    Secret(SecretStep),
}

pub type Step = named::Step<Own>;
pub type Plan = named::NamedPlan<DBProxy>;

/// The one decision of a reconcile of a DBProxy.
pub fn plan(f: &Facts) -> Plan {
    named::plan(f, |plan, desired| apply(f, plan, desired))
}

fn observed_fields(g: &DBProxy, o: &ObservedProxy) -> DBProxyStatus {
    let previous = g.status.clone().unwrap_or_default();
    DBProxyStatus {
        db_proxy_name: Some(o.name.clone()),
        arn: o.arn.clone(),
        state: Some(o.status.clone()),
        endpoint: o.endpoint.clone(),
        targets: o.targets.clone(),
        endpoints: o.endpoints.clone(),
        ..previous
    }
}

/// How soon a proxy whose targets are not all available yet is looked at again.
const TARGETS_POLL: Duration = Duration::from_secs(5);

/// The status to write: Ready once RDS reports it available (`named::by_state`), every target
/// the spec names registered, and every registered target available (a connection through it
/// reaches a database then). No target registered is not "all available": a proxy RDS reports
/// available before RegisterDBProxyTargets went out refuses every connection.
fn status(plan: &mut Plan, g: &DBProxy, fields: DBProxyStatus, synced: ConditionPlan) {
    status_with(plan, (g, None), fields, synced, None)
}

/// The targets the spec names that RDS has not registered: by their RDS identifier once they
/// are resolved (`resolved`), else, while RDS lists none, by the names the spec gives them.
fn unregistered(g: &DBProxy, fields: &DBProxyStatus, resolved: Option<&[Resolved]>) -> Vec<String> {
    let listed = |id: &str| (fields.targets.iter()).any(|t| t.identifier == id);
    match resolved {
        Some(resolved) => (resolved.iter())
            .filter(|r| !listed(&r.identifier))
            .map(|r| r.identifier.clone())
            .collect(),
        None if fields.targets.is_empty() => (g.spec.targets.iter())
            .filter_map(|t| t.db_instance_ref.as_ref().or(t.db_cluster_ref.as_ref()))
            .map(|r| r.name.clone())
            .collect(),
        None => Vec::new(),
    }
}

/// [`status`], with why a connection Secret the spec asks for is not written (`pending`), and the
/// targets as resolved in this pass, if they were.
fn status_with(
    plan: &mut Plan,
    (g, resolved): (&DBProxy, Option<&[Resolved]>),
    fields: DBProxyStatus,
    synced: ConditionPlan,
    pending: Option<String>,
) {
    let missing = unregistered(g, &fields, resolved);
    let state = fields.state.clone();
    let not_available: Vec<String> = (fields.targets.iter())
        .filter(|t| t.state.as_deref() != Some("AVAILABLE"))
        .map(|t| {
            let state = t.state.as_deref().unwrap_or("unknown");
            let reason = t.reason.as_deref().unwrap_or_default();
            let words = t.description.as_deref().unwrap_or_default();
            let text = format!("{}: {state} {reason} {words}", t.identifier);
            text.trim().to_owned()
        })
        .collect();
    let unavailable = (fields.targets.iter()).any(|t| t.state.as_deref() == Some("UNAVAILABLE"));
    let mut report = named::by_state(fields, state.as_deref(), synced);
    if report.ready.ok && !missing.is_empty() {
        let message = format!(
            "RDS has not registered the targets yet: {}",
            missing.join(", ")
        );
        report.ready = ConditionPlan::new(false, "TargetRegistering", message);
        if matches!(plan.requeue, Requeue::After(d) if d > TARGETS_POLL) {
            plan.requeue = Requeue::After(TARGETS_POLL);
        }
    }
    if report.ready.ok && !not_available.is_empty() {
        let reason = match unavailable {
            true => "TargetUnavailable",
            false => "TargetRegistering",
        };
        let message = format!(
            "RDS reports targets not available: {}",
            not_available.join("; ")
        );
        report.ready = ConditionPlan::new(false, reason, message);
        if matches!(plan.requeue, Requeue::After(d) if d > TARGETS_POLL) {
            plan.requeue = Requeue::After(TARGETS_POLL);
        }
    }
    if report.ready.ok
        && pending.is_some()
        && matches!(plan.requeue, Requeue::After(d) if d > TARGETS_POLL)
    {
        plan.requeue = Requeue::After(TARGETS_POLL);
    }
    report.ready = crate::managed::conditions::ready_with_secret(report.ready, pending);
    plan.status = Some(report);
}

fn wait(mut plan: Plan, f: &Facts, reason: &str, message: String) -> Plan {
    let pending = secret_asked(&f.object).then(|| message.clone());
    let synced = plan.waiting(f.busy_interval, reason, message);
    let fields = (f.observed.as_ref()).map(|o| observed_fields(&f.object, o));
    let fields = fields.unwrap_or_else(|| f.object.status.clone().unwrap_or_default());
    status_with(&mut plan, (&f.object, None), fields, synced, pending);
    plan
}

/// Whether the spec asks for a connection Secret, of the proxy or of one of its endpoints.
fn secret_asked(g: &DBProxy) -> bool {
    g.spec.connection_secret.is_some()
        || (g.spec.endpoints.iter()).any(|e| e.connection_secret.is_some())
}

fn apply(f: &Facts, mut plan: Plan, desired_tags: BTreeMap<String, String>) -> Plan {
    let g = &f.object;
    let targets = match &f.extra.targets {
        Some(Ok(targets)) => targets.clone(),
        Some(Err(why)) => return wait(plan, f, "ReferencesUnresolved", why.clone()),
        None => return wait(plan, f, "ReferencesUnresolved", "not read".into()),
    };
    if let Some((reason, why)) = refusals::refused(f, &targets) {
        let mut plan = wait(plan, f, reason, why);
        (plan.requeue, plan.refusal) = (Requeue::AwaitChange, Some(reason));
        return plan;
    }
    let mut changed = Vec::new();
    let auth_arn = match auth_secret(f, &mut plan, &desired_tags, &mut changed) {
        Ok(arn) => arn,
        Err(why) => return wait(plan, f, "AuthSecret", why),
    };
    let Some(o) = &f.observed else {
        let Some(arn) = auth_arn else {
            plan.requeue = Requeue::After(f.busy_interval);
            let fields = g.status.clone().unwrap_or_default();
            let message = "its Secrets Manager secret is being made";
            status(
                &mut plan,
                g,
                fields,
                ConditionPlan::new(false, "Creating", message),
            );
            return plan;
        };
        return create(f, plan, &arn, desired_tags);
    };
    if !named::owned(g, &o.tags) {
        let refused = named::refuse_name_in_use(g, &mut plan);
        status(&mut plan, g, Default::default(), refused);
        return plan;
    }
    let mut fields = observed_fields(g, o);
    fields.auth_secret_arn = auth_arn
        .clone()
        .filter(|_| g.spec.auth.secret_arn.is_none());
    let (tags_changed, applied) =
        named::retag(&mut plan, g, (&o.tags, o.arn.as_deref()), &desired_tags);
    changed.extend(tags_changed);
    fields.applied_tag_keys = applied;
    if o.status != "available" {
        plan.requeue = Requeue::After(f.busy_interval);
    } else if let Some(arn) = &auth_arn {
        changed.extend(keep(f, &mut plan, o, arn, &targets));
        match endpoints(f, &mut plan, o, &desired_tags) {
            Ok(made) => changed.extend(made),
            Err(message) => {
                plan.requeue = Requeue::AwaitChange;
                let refused = ConditionPlan::new(false, "UnsupportedChange", message);
                status(&mut plan, g, fields, refused);
                return plan;
            }
        }
        fields.applied_endpoints = g.spec.endpoints.iter().map(|e| e.name.clone()).collect();
    }
    let pending = match secret(f, &mut plan, &mut fields, o) {
        Ok(pending) => pending,
        Err(message) => {
            let refused = plan.secret_conflict(message.clone());
            status_with(
                &mut plan,
                (g, Some(&targets)),
                fields,
                refused,
                Some(message),
            );
            return plan;
        }
    };
    let synced = plan.synced_after(&changed, f.busy_interval, "the proxy");
    status_with(&mut plan, (g, Some(&targets)), fields, synced, pending);
    plan
}

/// The Secrets Manager secret the proxy authenticates with: the spec's, or the operator's, made
/// (before the proxy) and rewritten when the target's password changes. Ok(None): being made.
fn auth_secret(
    f: &Facts,
    plan: &mut Plan,
    desired_tags: &BTreeMap<String, String>,
    changed: &mut Vec<String>,
) -> Result<Option<String>, String> {
    let g = &f.object;
    if let Some(arn) = &g.spec.auth.secret_arn {
        return Ok(Some(arn.clone()));
    }
    let credentials = f.extra.credentials.as_ref();
    let Some((c, password)) = credentials.and_then(|c| Some((c, c.password.clone()?))) else {
        return Err("the first target's password is not known yet".into());
    };
    let Some((arn, matches)) = f.extra.auth_secret.clone() else {
        plan.step(Step::Own(Own::CreateSecret {
            name: g.auth_secret_name(),
            username: c.username.clone(),
            password,
            tags: desired_tags.clone(),
        }));
        changed.push(format!("secret {} created", g.auth_secret_name()));
        return Ok(None);
    };
    if !matches {
        let username = c.username.clone();
        let put = Own::PutSecret {
            arn: arn.clone(),
            username,
            password,
        };
        plan.step(Step::Own(put));
        changed.push("the target's password written to the proxy's secret".into());
    }
    Ok(Some(arn))
}

/// RDS has no proxy of the name: made once, tagged, never again once made.
fn create(f: &Facts, mut plan: Plan, auth: &str, tags: BTreeMap<String, String>) -> Plan {
    let g = &f.object;
    let name = g.name_in_rds();
    if g.status.as_ref().is_some_and(|s| s.arn.is_some()) {
        let message = format!(
            "RDS has no proxy {name} any more: it was deleted outside the operator; delete this \
             object to let it go, or recreate it"
        );
        plan.event(EventType::Warning, "NotFound", "Reconcile", message.clone());
        plan.requeue = Requeue::After(f.drift_interval);
        let fields = g.status.clone().unwrap_or_default();
        status(
            &mut plan,
            g,
            fields,
            ConditionPlan::new(false, "NotFound", message),
        );
        return plan;
    }
    plan.step(Step::Own(Own::Create {
        name: name.clone(),
        engine_family: g.spec.engine_family.as_str().to_owned(),
        subnets: g.spec.vpc_subnet_ids.clone(),
        settings: settings(g, auth),
        tags,
    }));
    let note = format!("creating proxy {name}");
    plan.event(EventType::Normal, "Creating", "Create", note);
    plan.requeue = Requeue::After(f.busy_interval);
    let fields = DBProxyStatus {
        db_proxy_name: Some(name),
        state: Some("creating".into()),
        auth_secret_arn: Some(auth.to_owned()).filter(|_| g.spec.auth.secret_arn.is_none()),
        applied_tag_keys: tags::keys(&g.spec.tags),
        ..Default::default()
    };
    let creating = ConditionPlan::new(true, "Creating", "the proxy is being made");
    status(&mut plan, g, fields, creating);
    plan
}

fn settings(g: &DBProxy, auth: &str) -> Settings {
    let iam = match g.spec.auth.iam_auth {
        IamAuth::Disabled => "DISABLED",
        IamAuth::Required => "REQUIRED",
    };
    Settings {
        require_tls: g.spec.require_tls,
        idle_client_timeout: g.spec.idle_client_timeout,
        security_groups: sorted(&g.spec.vpc_security_group_ids),
        role_arn: g.spec.role_arn.clone(),
        auth: (auth.to_owned(), iam.to_owned()),
    }
}

/// The settings, the pool and the targets of a proxy RDS reports available: what is sent, in
/// words.
fn keep(
    f: &Facts,
    plan: &mut Plan,
    o: &ObservedProxy,
    auth: &str,
    targets: &[Resolved],
) -> Vec<String> {
    let g = &f.object;
    let name = o.name.clone();
    let mut changed = Vec::new();
    let want = settings(g, auth);
    let have = Settings {
        require_tls: o.require_tls,
        idle_client_timeout: want.idle_client_timeout.and(o.idle_client_timeout),
        security_groups: match want.security_groups.is_empty() {
            true => Vec::new(),
            false => sorted(&o.security_groups),
        },
        role_arn: o.role_arn.clone().unwrap_or_default(),
        auth: o.auth.first().cloned().unwrap_or_default(),
    };
    if have != want {
        changed.push("proxy settings".into());
        let settings = want;
        plan.step(Step::Own(Own::Modify {
            name: name.clone(),
            settings,
        }));
    }
    if let Some(pool) = (g.spec.connection_pool.as_ref()).filter(|p| differs(p, &o.pool)) {
        changed.push("connection pool".into());
        let pool = pool.clone();
        plan.step(Step::Own(Own::ModifyPool {
            name: name.clone(),
            pool,
        }));
    }
    let registered: Vec<&str> = o.targets.iter().map(|t| t.identifier.as_str()).collect();
    let add: Vec<Resolved> = (targets.iter())
        .filter(|t| !registered.contains(&t.identifier.as_str()))
        .cloned()
        .collect();
    let gone: Vec<Resolved> = (o.targets.iter())
        .filter(|t| !targets.iter().any(|w| w.identifier == t.identifier))
        .map(|t| Resolved {
            identifier: t.identifier.clone(),
            cluster: t.r#type.as_deref() == Some("TRACKED_CLUSTER"),
            engine: String::new(),
        })
        .collect();
    for (register, list) in [(true, add), (false, gone)] {
        if list.is_empty() {
            continue;
        }
        let ids: Vec<&str> = list.iter().map(|t| t.identifier.as_str()).collect();
        let verb = if register { "register" } else { "deregister" };
        changed.push(format!("{verb} {}", ids.join(", ")));
        let (name, targets) = (name.clone(), list);
        plan.step(Step::Own(Own::Targets {
            name,
            register,
            targets,
        }));
    }
    changed
}

/// The endpoints to make (in the spec, not in RDS) and to delete (made by the operator, gone from
/// the spec): what is sent, in words; Err: an endpoint's role differs from the spec's, which RDS
/// cannot change.
fn endpoints(
    f: &Facts,
    plan: &mut Plan,
    o: &ObservedProxy,
    tags: &BTreeMap<String, String>,
) -> Result<Vec<String>, String> {
    let g = &f.object;
    let mut changed = Vec::new();
    for e in &g.spec.endpoints {
        let role = e.target_role.as_str();
        match o
            .endpoints
            .iter()
            .find(|have| have.name.eq_ignore_ascii_case(&e.name))
        {
            Some(have) if have.target_role.as_deref().is_some_and(|r| r != role) => {
                return Err(format!(
                    "endpoint {} is {} in RDS, and RDS cannot change an endpoint's role: remove it \
                     from the spec, or add a {role} endpoint under another name",
                    e.name,
                    have.target_role.as_deref().unwrap_or_default()
                ));
            }
            Some(_) => {}
            None => {
                changed.push(format!("endpoint {} ({role}) created", e.name));
                let subnets = match e.vpc_subnet_ids.is_empty() {
                    true => g.spec.vpc_subnet_ids.clone(),
                    false => e.vpc_subnet_ids.clone(),
                };
                plan.step(Step::Own(Own::CreateEndpoint {
                    proxy: o.name.clone(),
                    name: e.name.clone(),
                    role: role.to_owned(),
                    subnets,
                    tags: tags.clone(),
                }));
            }
        }
    }
    let applied = (g.status.as_ref()).map(|s| s.applied_endpoints.clone());
    for name in applied.unwrap_or_default() {
        let wanted = g
            .spec
            .endpoints
            .iter()
            .any(|e| e.name.eq_ignore_ascii_case(&name));
        let there = o
            .endpoints
            .iter()
            .any(|e| e.name.eq_ignore_ascii_case(&name));
        if !wanted && there {
            changed.push(format!("endpoint {name} deleted"));
            plan.step(Step::Own(Own::DeleteEndpoint { name }));
        }
    }
    Ok(changed)
}

/// Whether RDS's pool differs from the spec in what the spec names.
fn differs(want: &ConnectionPool, have: &ConnectionPool) -> bool {
    let pairs = [
        (want.max_connections_percent, have.max_connections_percent),
        (
            want.max_idle_connections_percent,
            have.max_idle_connections_percent,
        ),
        (
            want.connection_borrow_timeout,
            have.connection_borrow_timeout,
        ),
    ];
    pairs.iter().any(|(w, h)| w.is_some() && w != h)
}

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

/// Plans the connection Secrets' writes (the proxy's endpoint, and each endpoint's in its own
/// Secret, with the target's credentials) where they differ; Ok(Some(why)): a Secret the spec
/// asks for cannot be written yet; Err: a Secret of that name is someone else's.
fn secret(
    f: &Facts,
    plan: &mut Plan,
    fields: &mut DBProxyStatus,
    o: &ObservedProxy,
) -> Result<Option<String>, String> {
    let g = &f.object;
    let asked = secret_asked(g);
    let credentials = (f.extra.credentials.as_ref())
        .ok_or("the first target's credentials are not known yet")
        .and_then(|c| match (&c.password, c.port) {
            (None, _) => Err("the first target's password is not known yet"),
            (_, 0) => Err("the first target's port is not known yet"),
            (Some(password), _) => Ok((c, password)),
        });
    let c = match credentials {
        Ok(c) => c,
        Err(why) => return Ok(asked.then(|| why.to_owned())),
    };
    let mut pending = None;
    if let Some(wanted) = &g.spec.connection_secret {
        match o.endpoint.as_deref() {
            Some(host) => {
                let current = f.extra.secret.as_ref();
                write_secret(f, plan, (wanted, current), host, c, "the proxy")?;
                fields.connection_secret = Some(wanted.name.clone());
            }
            None => pending = Some("RDS reports no endpoint for the proxy yet".to_owned()),
        }
    }
    for e in &g.spec.endpoints {
        let Some(wanted) = &e.connection_secret else {
            continue;
        };
        let there = (o.endpoints.iter()).find(|have| have.name.eq_ignore_ascii_case(&e.name));
        match there.and_then(|t| t.endpoint.as_deref()) {
            Some(host) => {
                let current = f.extra.endpoint_secrets.get(&e.name);
                write_secret(f, plan, (wanted, current), host, c, "the proxy endpoint")?;
            }
            None => {
                pending = Some(format!(
                    "RDS reports no address for endpoint {} yet",
                    e.name
                ))
            }
        }
    }
    Ok(pending)
}

/// The write of one connection Secret (`wanted`, as it is now: `current`) naming `host`.
fn write_secret(
    f: &Facts,
    plan: &mut Plan,
    (wanted, current): (&ConnectionSecretSpec, Option<&Secret>),
    host: &str,
    (c, password): (&Credentials, &Sensitive),
    what: &str,
) -> Result<(), String> {
    let info = ConnectionInfo {
        host,
        reader_host: None,
        shard_group_host: None,
        port: c.port,
        username: &c.username,
        password: &password.0,
        dbname: &c.dbname,
        engine: &c.engine,
        ca_bundle: None,
    };
    let writer = Writer {
        kind: "DBProxy",
        what: Some(what),
        owner_reference: true,
    };
    let written = connection_write(current, &f.object, wanted, &info, writer)?;
    plan_write(plan, written, |step| Step::Own(Own::Secret(step)));
    Ok(())
}

mod refusals;

#[cfg(test)]
mod tests;
