//! An IAM user's token renewed on its own clock (plan/iam.rs `renew`): whatever stopped the pass
//! before the Secret (the master login, the database not Ready), a due token is replaced, and a
//! user whose due token cannot be replaced is not Ready before it expires. A rule a row.

use super::*;

/// The Ready condition the plan reports: (ok, reason).
fn ready(plan: &Plan) -> (bool, String) {
    let r = &plan.status.as_ref().unwrap().ready;
    (r.ok, r.reason.clone())
}

#[test]
fn an_iam_users_token_is_renewed_whatever_stopped_the_pass_and_not_ready_when_it_cannot_be() {
    let due = token("coffee.example", EPOCH - 600);
    let fresh = token("coffee.example", EPOCH - 300);
    let made = token("coffee.example", EPOCH);
    let login_fails = |f: &mut Facts| f.found = Some(Found::Unreachable("Access denied".into()));
    let not_ready = |f: &mut Facts| {
        let Database::Found(db) = &f.database else {
            panic!()
        };
        let known = Some(db.clone());
        f.database = Database::Unresolved("DBInstance coffee is not Ready yet".into(), known);
        f.found = None;
    };
    let unknown = |f: &mut Facts| {
        f.database = Database::Unresolved("DBInstance coffee is not Ready yet".into(), None);
        f.found = None;
        f.token = None;
    };
    let no_signing = |f: &mut Facts| f.token = Some(Err("no credentials to sign with".into()));
    type Change = fn(&mut Facts);
    let (login_fails, not_ready, unknown, no_signing): (Change, Change, Change, Change) =
        (login_fails, not_ready, unknown, no_signing);
    let none: Change = |_| {};
    // (row, the Secret's token, what else, the token written, Ready, its reason, Synced reason)
    type Row<'a> = (
        &'a str,
        &'a str,
        Change,
        Change,
        Option<&'a str>,
        bool,
        &'a str,
        &'a str,
    );
    let rows: [Row; 8] = [
        (
            "login fails, token due: renewed",
            &due,
            login_fails,
            none,
            Some(&made),
            true,
            "Available",
            "DatabaseUnreachable",
        ),
        (
            "login fails, token fresh: kept",
            &fresh,
            login_fails,
            none,
            None,
            true,
            "Available",
            "DatabaseUnreachable",
        ),
        (
            "login fails, token due, none can be made",
            &due,
            login_fails,
            no_signing,
            None,
            false,
            "AuthTokenNotRenewed",
            "DatabaseUnreachable",
        ),
        (
            "database not Ready, token due: renewed for its endpoint",
            &due,
            not_ready,
            none,
            Some(&made),
            true,
            "Available",
            "DatabaseNotReady",
        ),
        (
            "database not Ready, token fresh: kept",
            &fresh,
            not_ready,
            none,
            None,
            true,
            "Available",
            "DatabaseNotReady",
        ),
        (
            "database unknown, token fresh: Ready while it is",
            &fresh,
            unknown,
            none,
            None,
            true,
            "Available",
            "DatabaseNotReady",
        ),
        (
            "database unknown, token due: not Ready",
            &due,
            unknown,
            none,
            None,
            false,
            "AuthTokenNotRenewed",
            "DatabaseNotReady",
        ),
        (
            "the pass goes through, token due: renewed",
            &due,
            none,
            none,
            Some(&made),
            true,
            "Available",
            "Updating",
        ),
    ];
    // A password in the Secret (auth changed to IAM while the database was away) is not
    // replaced by a token before the user logs in with tokens.
    let mut switching = iam(true);
    switching.settled = Duration::from_secs(3600);
    switching.secret = Some(secret_holding(&switching, "user-pw"));
    switching.found = Some(Found::Unreachable("Access denied".into()));
    assert_eq!(written(&plan(&switching)), None, "a password Secret kept");
    for (row, current, change, also, renewed, ok, reason, synced_reason) in rows {
        let mut f = iam(true);
        f.settled = Duration::from_secs(3600);
        f.secret = Some(secret_holding(&f, current));
        change(&mut f);
        also(&mut f);
        let p = plan(&f);
        let data = written(&p);
        assert_eq!(
            data.as_ref().map(|d| d["password"].as_str()),
            renewed,
            "{row}: {:?}",
            p.steps
        );
        assert_eq!(ready(&p), (ok, reason.to_owned()), "{row}");
        assert_eq!(synced(&p).1, synced_reason, "{row}");
        if !ok {
            let message = &p.status.as_ref().unwrap().ready.message;
            assert!(message.contains("reader-db"), "{row}: {message}");
        }
        // A kept token is looked at again when it is due (10 minutes after it was signed).
        if renewed.is_none() && ok {
            assert!(
                matches!(p.requeue, Requeue::After(d) if d <= Duration::from_secs(300)),
                "{row}: {:?}",
                p.requeue
            );
        }
        // No SQL while the master login fails or the database is not Ready.
        if synced_reason.starts_with("Database") {
            assert_eq!(sql(&p), vec![], "{row}");
        }
    }
}

/// A pass that fails with the connection Secret's write planned (a token renewed, the write
/// refused) is not Ready, whatever the last pass wrote; one with no write planned keeps Ready.
#[test]
fn a_failed_pass_that_planned_the_secret_is_not_ready() {
    use crate::managed::{Failure, Managed};
    let due = token("coffee.example", EPOCH - 600);
    let fresh = token("coffee.example", EPOCH - 300);
    for (row, current, ok, reason) in [
        (
            "a renewed token's write failed",
            &due,
            false,
            "ConnectionSecretNotWritten",
        ),
        ("nothing to write", &fresh, true, "Available"),
    ] {
        let mut f = iam(true);
        f.secret = Some(secret_holding(&f, current));
        f.found = Some(Found::Unreachable("Access denied".into()));
        let mut was_ready = f.user.clone();
        let status = was_ready.status.get_or_insert_with(Default::default);
        status.reported.conditions = vec![crate::managed::conditions::condition(
            "Ready",
            &ConditionPlan::new(true, "Available", "the user can log in"),
            None,
        )];
        let planned = plan(&f);
        let message = "secrets \"reader-db\" is forbidden";
        let failure = Failure {
            reason: "KubernetesForbidden",
            message,
            planned: Some(&planned),
            completed: 0,
            now: "2026-12-05T00:00:00Z",
        };
        let (status, _) = was_ready.failed(&failure);
        let ready = (status.reported.conditions.iter())
            .find(|c| c.type_ == "Ready")
            .expect("Ready");
        assert_eq!(
            (ready.status == "True", ready.reason.as_str()),
            (ok, reason),
            "{row}"
        );
    }
}

/// The review's rows: IAM authentication not reported (or off) stops the pass, and the due token
/// is still renewed; a GRANT the pass plans comes after the renewal, so a GRANT the database
/// refuses does not keep the token from being written (steps run up to the first that fails).
#[test]
fn a_due_token_is_renewed_before_any_grant_and_while_iam_is_not_reported() {
    let due = token("coffee.example", EPOCH - 600);
    let mut off = iam(true);
    off.settled = Duration::from_secs(3600);
    off.secret = Some(secret_holding(&off, &due));
    if let Database::Found(db) = &mut off.database {
        db.iam_enabled = None;
    }
    let p = plan(&off);
    assert_eq!(synced(&p).1, "IAMAuthenticationOff");
    let made = token("coffee.example", EPOCH);
    assert_eq!(written(&p).map(|d| d["password"].clone()), Some(made));

    let mut grant = iam(true);
    grant.settled = Duration::from_secs(3600);
    grant.secret = Some(secret_holding(&grant, &due));
    grant.found = Some(Found::User {
        user: Some(ObservedUser {
            iam: true,
            ..held(&[Select])
        }),
        password_logs_in: None,
    });
    let p = plan(&grant);
    let at = |want: fn(&Step) -> bool| p.steps.iter().position(want);
    let write = at(|s| matches!(s, Step::Secret(SecretStep::WriteConnection { .. })));
    let sql = at(|s| matches!(s, Step::Sql(..)));
    assert!(sql.is_some(), "a GRANT planned: {:?}", p.steps);
    assert!(write < sql, "the renewal first: {write:?} before {sql:?}");
}
