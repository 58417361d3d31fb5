//! RDS's rule for a DB instance or DB cluster identifier, checked before any call: "1 to 63
//! letters, numbers, or hyphens. First character must be a letter. Can't end with a hyphen or
//! contain two consecutive hyphens" (API_CreateDBInstance.html, DBInstanceIdentifier;
//! API_CreateDBCluster.html, DBClusterIdentifier). The CRDs hold a spec's identifier to it at
//! apply (CEL); an identifier that defaults to metadata.name, which Kubernetes lets hold dots and
//! start with a digit, is held to it here. Pure.

/// The RDS identifier of a database object: the spec's, or metadata.name, lower-cased as RDS
/// stores it.
pub fn of(spec: Option<&String>, name: Option<&String>) -> String {
    (spec.or(name).cloned().unwrap_or_default()).to_lowercase()
}

/// Why `identifier` breaks RDS's rule (`what`: "dbInstanceIdentifier", "metadata.name"...), or
/// None.
pub fn problem(what: &str, identifier: &str) -> Option<String> {
    let rule = "RDS takes 1 to 63 letters, digits or hyphens, starting with a letter, with no two \
                hyphens in a row and none at the end";
    let first_is_letter = (identifier.chars().next()).is_some_and(|c| c.is_ascii_alphabetic());
    let why = if identifier.is_empty() || identifier.len() > 63 {
        Some(format!("has {} characters", identifier.len()))
    } else if !first_is_letter {
        Some("does not start with a letter".to_owned())
    } else if let Some(c) = identifier
        .chars()
        .find(|c| !c.is_ascii_alphanumeric() && *c != '-')
    {
        Some(format!("holds {c:?}"))
    } else if identifier.contains("--") {
        Some("holds two hyphens in a row".to_owned())
    } else if identifier.ends_with('-') {
        Some("ends with a hyphen".to_owned())
    } else {
        None
    };
    why.map(|why| format!("{what} {identifier:?} {why}: {rule}"))
}

#[cfg(test)]
mod tests {
    use super::problem;

    #[test]
    fn an_identifier_rds_would_refuse_is_refused_with_the_rule() {
        for (identifier, why) in [
            ("1bad-ident", "does not start with a letter"),
            ("coffee.db", "holds '.'"),
            ("bad_ident", "holds '_'"),
            ("bad--identifier", "two hyphens in a row"),
            ("trailing-", "ends with a hyphen"),
            ("", "has 0 characters"),
        ] {
            let found = problem("dbInstanceIdentifier", identifier).expect(identifier);
            assert!(found.contains(why), "{identifier}: {found}");
        }
        let long = "a".repeat(64);
        assert!(problem("metadata.name", &long).is_some_and(|p| p.contains("64 characters")));
        for fine in ["coffee-db", "a", "Coffee9", &"a".repeat(63)] {
            assert_eq!(problem("dbInstanceIdentifier", fine), None, "{fine}");
        }
    }
}
