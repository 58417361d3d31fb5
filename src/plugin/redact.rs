//! What `kubectl rds report` does to the operator's logs before they go into the tarball: any
//! text shaped like a password, a token or a key is replaced by `[redacted]`. The operator
//! never logs one (tests/integration/trust.rs holds it to that at trace level); this is the
//! second barrier, for a line that did, or for what another container of its Pod wrote.
//!
//! Shapes, in order: a private key block; an AWS access key id; the signature, credential and
//! session token of a signed request (an RDS IAM token is one); a value after a name that says
//! what it is (`password=`, `"token": "`, `secret_key:`, `Authorization: Bearer`); and a long
//! opaque string mixing upper and lower case and digits, or padded as base64 is (a generated
//! password, a secret access key, the base64 of any of them). Names of Kubernetes and RDS
//! objects (lower case and hyphens), UIDs, ARNs, timestamps and type names pass. No maintained
//! crate scans free text for secrets this way (the `redact` and `secrecy` crates wrap values a
//! program already knows are secret), so the rules are here, each with a row in the tests.

use std::sync::LazyLock;

use regex_lite::{Captures, Regex};

const REDACTED: &str = "[redacted]";

struct Rule {
    pattern: Regex,
    /// The capture group kept in front of the redaction (0: none).
    keep: usize,
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |pattern: &str, keep: usize| Rule {
        pattern: Regex::new(pattern).expect("a redaction pattern"),
        keep,
    };
    vec![
        rule(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
            0,
        ),
        rule(
            r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",
            0,
        ),
        rule(
            r"(?i)(X-Amz-(?:Signature|Credential|Security-Token)(?:=|%3D))[^&\s\x22']+",
            1,
        ),
        rule(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]+", 1),
        rule(
            r#"(?i)((?:password|passwd|pwd|secret|token|credential|api[_-]?key|access[_-]?key|private[_-]?key|auth)[a-z0-9_-]*\x22?\s*[:=]\s*\x22?)([^\s\x22',}&]+)"#,
            1,
        ),
    ]
});

/// A candidate for the last rule: a run of base64's alphabet (and base64url's) long enough to be
/// a secret.
static OPAQUE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/_-]{16,}={0,2}").expect("the opaque pattern"));

/// `text` with everything shaped like a password, token or key replaced by `[redacted]`.
pub fn redact(text: &str) -> String {
    let mut out = text.to_owned();
    for rule in RULES.iter() {
        out = (rule.pattern)
            .replace_all(&out, |c: &Captures| match rule.keep {
                0 => REDACTED.to_owned(),
                n => format!("{}{REDACTED}", &c[n]),
            })
            .into_owned();
    }
    OPAQUE
        .replace_all(&out, |c: &Captures| match opaque(&c[0]) {
            true => REDACTED.to_owned(),
            false => c[0].to_owned(),
        })
        .into_owned()
}

/// Whether a run of base64's alphabet looks like a secret rather than a name: padded as base64
/// is, or mixing upper case, lower case and digits (a name of Kubernetes or RDS is lower case,
/// a UID lower-case hex, a type or an AWS action name has no digit).
fn opaque(run: &str) -> bool {
    if run == REDACTED.trim_matches(['[', ']']) {
        return false;
    }
    let has = |f: fn(&char) -> bool| run.chars().any(|c| f(&c));
    let padded = run.ends_with('=') && run.len() >= 20;
    padded
        || (has(char::is_ascii_uppercase)
            && has(char::is_ascii_lowercase)
            && has(char::is_ascii_digit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shape_is_redacted_and_names_pass() {
        let password = "Sup3r-Secret-Passw0rd";
        let b64 = "U3VwM3ItU2VjcmV0LVBhc3N3MHJk"; // base64 of the password
        let rows: Vec<(&str, String, Vec<&str>)> = vec![
            ("key=value", format!("login failed password={password} user=admin"), vec![password, "Sup3r"]),
            ("JSON", format!(r#"{{"masterUserPassword":"{password}"}}"#), vec![password]),
            ("a Secret's data", format!("data: {{password: {b64}}}"), vec![b64]),
            ("base64 alone", format!("read {b64} from the volume"), vec![b64]),
            (
                "a secret access key",
                "aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
                vec!["wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
            ),
            ("an access key id", "key AKIAIOSFODNN7EXAMPLE used".into(), vec!["AKIAIOSFODNN7EXAMPLE"]),
            (
                "an RDS IAM token",
                "db.example:3306/?Action=connect&DBUser=app&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20261207&X-Amz-Security-Token=FwoGZXIvYXdzEJr&X-Amz-Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7".into(),
                vec!["5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7", "FwoGZXIvYXdzEJr", "AKIAIOSFODNN7EXAMPLE"],
            ),
            ("a bearer token", "Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln".into(), vec!["eyJhbGciOiJSUzI1NiJ9"]),
            (
                "a private key",
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----".into(),
                vec!["MIIEow"],
            ),
            ("a generated password alone", "kJ8vQ2xLp4Rt9WzN then".into(), vec!["kJ8vQ2xLp4Rt9WzN"]),
        ];
        for (name, line, secrets) in rows {
            let out = redact(&line);
            for secret in secrets {
                assert!(!out.contains(secret), "{name}: {out}");
            }
            assert!(out.contains(REDACTED), "{name}: {out}");
        }
    }

    #[test]
    fn what_a_support_request_needs_passes() {
        let lines = [
            "2026-12-07T20:47:49.123Z DEBUG rds_operator_runtime::managed::skeleton: reconciled kind=\"DBCluster\" object=DBCluster.v1alpha1.rds.operator.rs/coffee-aurora.shop",
            "uid=3f2c1a9e-7b4d-4c1e-9a2b-0123456789ab arn:aws:rds:us-east-1:123456789012:db:coffee-db-5f3a2b",
            "DescribeDBInstances failed: ServiceUnavailable after 3 attempts",
            "the connection Secret coffee-db-connection is written (keys host, port, username, password)",
            "rds_operator_reconciles_total{result=\"success\",kind=\"DBInstance\"} 2",
        ];
        for line in lines {
            assert_eq!(redact(line), line);
        }
    }
}
