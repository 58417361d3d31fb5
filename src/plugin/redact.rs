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

/// One shape: the text of `keep` (a capture group, 0: none) stays before the redaction, and the
/// text of `after` (0: none) after it.
struct Rule {
    pattern: Regex,
    keep: usize,
    after: usize,
}

/// The names a secret goes under, as the last part of a field's name (`masterUserPassword`,
/// `aws_secret_access_key`, `sessionToken`, `externalID`): `secretsmanager`, `secretRef`,
/// `tokenSignedAt` end otherwise, and pass.
const NAMES: &str = "password|passwd|pwd|secret|token|credential|credentials|api_?key|access_?key|secret_?key|private_?key|external_?id";

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |pattern: &str, keep: usize, after: usize| Rule {
        pattern: Regex::new(pattern).expect("a redaction pattern"),
        keep,
        after,
    };
    let field = format!(
        r#"(?im)((?:^|[^A-Za-z0-9])[A-Za-z0-9_-]*(?:{NAMES})(?:\\?["'])?\s*(?:[:=]|%3D)\s*(?:Some\()?(?:\\?["'])?)([^\s"'\\,;}}&)]+)"#
    );
    let yaml_block =
        format!(r"(?im)^(\s*[A-Za-z0-9_-]*(?:{NAMES})\s*:\s*[|>][-+]?[ \t]*\n)([ \t]+\S[^\n]*)");
    let flag = format!(
        r"(?i)(--(?:[a-z0-9]+-)*(?:{})(?:=|\s+))(\S+)",
        NAMES.replace('_', "-")
    );
    vec![
        rule(
            r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----",
            0,
            0,
        ),
        rule(
            r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",
            0,
            0,
        ),
        rule(
            r#"(?i)(X-Amz-(?:Signature|Credential|Security-Token)(?:=|%3D))[^&\s"'\\]+"#,
            1,
            0,
        ),
        rule(r"(?i)(\bSignature=)[0-9a-f]{64}", 1, 0),
        rule(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]+", 1, 0),
        // A URL's user information: scheme://user:password@host.
        rule(r"(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@]+:)[^@\s/]+(@)", 1, 2),
        // SQL: IDENTIFIED BY '...', PASSWORD '...'.
        rule(r"(?i)(\b(?:IDENTIFIED\s+BY|PASSWORD)\s+')[^']*(')", 1, 2),
        rule(&yaml_block, 1, 0),
        rule(&flag, 1, 0),
        rule(&field, 1, 0),
    ]
});

/// A candidate for the last shape: a run of base64's alphabet (and base64url's) long enough to
/// be a secret.
static OPAQUE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/_-]{16,}={0,2}").expect("the opaque pattern"));

/// `text` with everything shaped like a password, token or key replaced by `[redacted]`.
pub fn redact(text: &str) -> String {
    let mut out = text.to_owned();
    for rule in RULES.iter() {
        let current = out.clone();
        out = (rule.pattern)
            .replace_all(&current, |c: &Captures| {
                let whole = c.get(0).expect("the match");
                let part = |n: usize| match n {
                    0 => "",
                    n => c.get(n).map_or("", |m| m.as_str()),
                };
                // `:secret:` in a Secrets Manager ARN names a kind, not a value.
                if rule.keep > 0 && in_an_arn(&current, whole.start() + part(rule.keep).len()) {
                    return whole.as_str().to_owned();
                }
                format!("{}{REDACTED}{}", part(rule.keep), part(rule.after))
            })
            .into_owned();
    }
    let whole = out.clone();
    OPAQUE
        .replace_all(&out, |c: &Captures| {
            let run = c.get(0).expect("the match");
            match opaque(run.as_str()) && !in_an_arn(&whole, run.start()) {
                true => REDACTED.to_owned(),
                false => run.as_str().to_owned(),
            }
        })
        .into_owned()
}

/// Whether the text at `at` is part of an ARN (its token, back to the last space or quote,
/// starts `arn:`): a role or a secret's name, which a support request needs.
fn in_an_arn(text: &str, at: usize) -> bool {
    let before = &text[..at];
    let token = before
        .rsplit([' ', '\t', '\n', '"', '\'', '=', ',', '('])
        .next()
        .unwrap_or("");
    token.starts_with("arn:")
}

/// Whether a run of base64's alphabet looks like a secret rather than a name: padded as base64
/// is, or mixing upper case, lower case and digits (a name of Kubernetes or RDS is lower case,
/// a UID lower-case hex, a type or an AWS action name has no digit).
fn opaque(run: &str) -> bool {
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
            (
                "escaped JSON, as the chart's JSON log format writes a message",
                r#"{"message":"login {\"password\":\"hunter2pass\"}"}"#.into(),
                vec!["hunter2pass"],
            ),
            ("a Debug Option", r#"master_user_password: Some("hunter2pass")"#.into(), vec!["hunter2pass"]),
            ("single quotes", "{'password': 'hunter2pass'}".into(), vec!["hunter2pass"]),
            ("SQL", "ALTER USER app IDENTIFIED BY 'hunter2pass'".into(), vec!["hunter2pass"]),
            ("a flag", "mysql --password hunter2pass -h db".into(), vec!["hunter2pass"]),
            ("URL-encoded", "a=b&password%3Dhunter2pass&c=d".into(), vec!["hunter2pass"]),
            ("a connection string", "mysql://admin:hunter2pass@db:3306/coffee".into(), vec!["hunter2pass"]),
            ("a YAML block", "password: |\n  hunter2pass\nuser: admin".into(), vec!["hunter2pass"]),
            ("an external ID", "externalID=ext-ours-Qz81 role".into(), vec!["ext-ours-Qz81"]),
            (
                "a SigV4 Authorization header",
                "Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261207/us-east-1/rds/aws4_request, SignedHeaders=host, Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024".into(),
                vec!["fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024", "AKIAIOSFODNN7EXAMPLE"],
            ),
            (
                "a PGP key",
                "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----".into(),
                vec!["lQOYBF"],
            ),
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
            "AccessDenied: not authorized to perform: secretsmanager:GetSecretValue on resource arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!db-3f2c1a9e-AbCd12",
            "assumed arn:aws:iam::123456789012:role/TeamA-RdsRole2 for the account",
            "secretRef=db-password tokenSignedAt=2026-12-07T20:47:49Z secretStatus=active",
        ];
        for line in lines {
            assert_eq!(redact(line), line);
        }
    }
}
