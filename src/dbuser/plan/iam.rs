//! The IAM side of a DBUser's plan (auth IAM): the database must have IAM database
//! authentication on; the connection Secret carries a token in place of a password, replaced
//! once it is `token_refresh` old (10 of its 15 minutes by default), so a Pod reading the Secret
//! through a volume always finds a valid one; and status names the IAM policy statement an app's
//! role needs ("Creating and using an IAM policy for IAM database access",
//! https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/UsingWithRDS.IAMDBAuth.IAMPolicy.html).

use std::time::Duration;

use chrono::{DateTime, NaiveDateTime};

use super::{DatabaseFacts, Facts, Plan};
use crate::dbuser::DBUserStatus;
use crate::managed::plan::{ConditionPlan, Requeue};
use crate::sensitive::Sensitive;

/// How far ahead of now a token's signing time may be and still count (clocks apart).
const SKEW_SECONDS: i64 = 300;

/// Err: the database does not have IAM database authentication on, or RDS has not said yet:
/// waited for (the DBInstance or DBCluster changing wakes the DBUser).
pub(super) fn enabled(f: &Facts, plan: &mut Plan, db: &DatabaseFacts) -> Result<(), ConditionPlan> {
    let what = match db.iam_enabled {
        Some(true) => return Ok(()),
        Some(false) => "has IAM database authentication off",
        None => "has not reported IAM database authentication yet",
    };
    let why = format!(
        "{} {what}: the user logs in with IAM tokens only once it is on (set \
         enableIAMDatabaseAuthentication: true on the database)",
        db.identifier
    );
    Err(plan.waiting(f.settled, "IAMAuthenticationOff", why))
}

/// The token the connection Secret carries: the one it has while younger than `token_refresh`
/// and made for this endpoint and user, else the one made for this pass; the pass after is
/// planned for when it is due.
pub(super) fn token(
    f: &Facts,
    plan: &mut Plan,
    status: &mut DBUserStatus,
    db: &DatabaseFacts,
    username: &str,
) -> Result<Sensitive, ConditionPlan> {
    let prefix = format!("{}:{}/?Action=connect&DBUser={username}&", db.host, db.port);
    let refresh = i64::try_from(f.token_refresh.as_secs()).unwrap_or(i64::MAX);
    let fresh = |at: &i64| *at <= f.epoch + SKEW_SECONDS && f.epoch - *at < refresh;
    let current = (f.secret.as_ref())
        .and_then(|s| crate::secrets::value_of(s, "password"))
        .and_then(|t| signed_at(t.expose(), &prefix).map(|at| (t, at)))
        .filter(|(_, at)| fresh(at));
    let (token, at) = match (current, &f.token) {
        (Some(current), _) => current,
        (None, Some(Ok(made))) => match signed_at(made.expose(), &prefix) {
            Some(at) => (made.clone(), at),
            None => {
                let why = "the token made does not name the user's endpoint".to_owned();
                return Err(plan.waiting(f.busy, "AuthToken", why));
            }
        },
        (None, Some(Err(why))) => {
            let why = format!("no IAM authentication token could be made: {why}");
            return Err(plan.waiting(f.busy, "AuthToken", why));
        }
        (None, None) => {
            let why = "no IAM authentication token made yet".to_owned();
            return Err(plan.waiting(f.busy, "AuthToken", why));
        }
    };
    status.token_signed_at = DateTime::from_timestamp(at, 0).map(|t| t.to_rfc3339());
    let due = u64::try_from(at.saturating_add(refresh) - f.epoch).unwrap_or(0);
    sooner(plan, Duration::from_secs(due.max(1)));
    Ok(token)
}

/// For an IAM user whose pass `stopped` before the user (its Synced reason: the master login
/// failed, the database is not Ready): the Secret's token renewed when due, as a pass that went
/// through would ([`token`], `secret`), if the user is this DBUser's and its Secret already holds
/// a token. Err, as Ready: the token is due and no new one can be made or written; the user is not
/// Ready from the moment its token is due (`token_refresh`, 10 of its 15 minutes), before it
/// expires.
pub(super) fn renew(
    f: &Facts,
    plan: &mut Plan,
    status: &mut DBUserStatus,
    stopped: Option<&str>,
) -> Result<(), ConditionPlan> {
    // Whatever stopped the pass (the master login, its password, the database not Ready, IAM
    // authentication not reported, a refused spec), but the token or the Secret itself: that is
    // the pass's own answer. A pass that went through wrote the Secret itself.
    let own = ["AuthToken", "ConnectionSecretConflict"];
    if !f.iam() || stopped.is_none_or(|reason| own.contains(&reason)) {
        return Ok(());
    }
    let ours = status.owner.as_deref() == Some(f.uid().as_str());
    let (Some(wanted), Some(secret), true) = (&f.user.spec.connection_secret, &f.secret, ours)
    else {
        return Ok(());
    };
    // Only a token this user's Secret already holds: a user still logging in with a password
    // (auth changed to IAM while the database was away) keeps its Secret until the user is.
    if !holds_a_token(f, secret) {
        return Ok(());
    }
    let due = |why: String| {
        let message = format!(
            "the IAM token in connection Secret {} is due for renewal and cannot be renewed: {why}",
            wanted.name
        );
        ConditionPlan::new(false, "AuthTokenNotRenewed", message)
    };
    let Some(db) = f.database.known() else {
        // Where to sign for is not known: Ready while the token it holds is fresh.
        let refresh = i64::try_from(f.token_refresh.as_secs()).unwrap_or(i64::MAX);
        let fresh = (f.secret.as_ref())
            .and_then(|s| crate::secrets::value_of(s, "password"))
            .and_then(|t| any_signed_at(t.expose()))
            .is_some_and(|at| f.epoch - at < refresh);
        return match fresh {
            true => Ok(()),
            false => Err(due("the database is not known".into())),
        };
    };
    let username = f.username();
    let token = token(f, plan, status, db, &username).map_err(|why| due(why.message))?;
    // A Secret that is not this DBUser's is refused as such, and does not stop the retries the
    // pass's own failure asked for.
    let requeue = plan.requeue;
    super::secret(f, plan, status, db, &username, token).inspect_err(|_| plan.requeue = requeue)
}

/// Whether `secret` holds an IAM token of this DBUser's user (any endpoint).
pub(super) fn holds_a_token(f: &Facts, secret: &k8s_openapi::api::core::v1::Secret) -> bool {
    let user = format!("Action=connect&DBUser={}&", f.username());
    crate::secrets::value_of(secret, "password")
        .is_some_and(|t| t.expose().contains(&user) && any_signed_at(t.expose()).is_some())
}

/// A renewal goes first: an IAM user whose Secret holds a token has its connection Secret
/// written before any SQL step, so a GRANT the database refuses does not keep the token from
/// being renewed (steps run in order, up to the first that fails).
pub(super) fn renewal_first(f: &Facts, plan: &mut Plan) {
    let renewal = f.iam() && f.secret.as_ref().is_some_and(|s| holds_a_token(f, s));
    if renewal {
        use crate::database::secret::SecretStep;
        let writes =
            |s: &super::Step| matches!(s, super::Step::Secret(SecretStep::WriteConnection { .. }));
        plan.steps.sort_by_key(|s| !writes(s));
    }
}

/// When a token was signed, whatever endpoint and user it names.
fn any_signed_at(token: &str) -> Option<i64> {
    let date = (token.split(['?', '&'])).find_map(|p| p.strip_prefix("X-Amz-Date="))?;
    let at = NaiveDateTime::parse_from_str(date, "%Y%m%dT%H%M%SZ").ok()?;
    Some(at.and_utc().timestamp())
}

/// When a token for `prefix` (its endpoint and user) was signed, in seconds since the epoch;
/// None for any other text.
pub fn signed_at(token: &str, prefix: &str) -> Option<i64> {
    let head = token.get(..prefix.len())?;
    if !head.eq_ignore_ascii_case(prefix) {
        return None;
    }
    any_signed_at(&token[prefix.len()..])
}

/// The pass after this one no later than `due`.
fn sooner(plan: &mut Plan, due: Duration) {
    plan.requeue = match plan.requeue {
        Requeue::After(after) => Requeue::After(after.min(due)),
        _ => Requeue::After(due),
    };
}

/// The IAM policy statement that lets a role log in as `username` to the database, as JSON:
/// `rds-db:connect` on `arn:<partition>:rds-db:<region>:<account>:dbuser:<resource-id>/<user>`.
pub fn policy(db: &DatabaseFacts, username: &str) -> Option<String> {
    let arn: Vec<&str> = db.arn.as_deref()?.split(':').collect();
    let (partition, region, account) = (arn.get(1)?, arn.get(3)?, arn.get(4)?);
    let resource = db.resource_id.as_deref()?;
    let statement = serde_json::json!({
        "Effect": "Allow",
        "Action": "rds-db:connect",
        "Resource": format!("arn:{partition}:rds-db:{region}:{account}:dbuser:{resource}/{username}"),
    });
    Some(statement.to_string())
}
