//! The connection Secret an application consumes as is: the standard keys (host, port, username,
//! password, dbname, engine, uri; with the operator's `--ca-bundle`, also `ca.crt` and `sslmode`)
//! and extra keys rendered from templates such as `APP_DB_HOST: "{{ host }}"`. Pure: values in,
//! Secret data out.

use std::collections::BTreeMap;

use secrecy::{ExposeSecret, SecretString};

/// The placeholders a template may use, which are also the standard keys.
pub const KEYS: [&str; 7] = [
    "host", "port", "username", "password", "dbname", "engine", "uri",
];

/// A cluster's Secret has one more key, and placeholder: its reader endpoint.
pub const READER_HOST: &str = "readerHost";

/// A limitless cluster's Secret has one more: its DB shard group's endpoint, where an
/// application's queries go (limitless-shard.html). The placeholder is a cluster's always (empty
/// until the shard group reports an endpoint); the key is written once it does.
pub const SHARD_GROUP_HOST: &str = "shardGroupHost";

/// The placeholder of the CA bundle that verifies the server (empty without `--ca-bundle`).
pub const CA_BUNDLE: &str = "caBundle";

/// The keys written with a CA bundle: the bundle, as Kubernetes' TLS Secrets name it, and the
/// client setting that verifies the server's name against it (libpq's `verify-full`, MySQL's
/// `VERIFY_IDENTITY`). Reserved: a template may not write them.
pub const TLS_KEYS: [&str; 2] = ["ca.crt", "sslmode"];

/// What a connection needs.
pub struct ConnectionInfo<'a> {
    pub host: &'a str,
    /// A cluster's reader endpoint (None for an instance, whose Secret has no `readerHost`).
    pub reader_host: Option<&'a str>,
    /// A limitless cluster's DB shard group endpoint, once RDS reports it.
    pub shard_group_host: Option<&'a str>,
    pub port: i32,
    pub username: &'a str,
    pub password: &'a SecretString,
    pub dbname: &'a str,
    pub engine: &'a str,
    /// The CA bundle clients verify the server with (the operator's `--ca-bundle`), if any.
    pub ca_bundle: Option<&'a str>,
}

/// A template that cannot be rendered.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("connectionSecret.extraKeys.{key}: {problem}")]
pub struct TemplateError {
    pub key: String,
    pub problem: String,
}

/// The standard keys of an instance's Secret (`cluster` false) or a cluster's (with its shard
/// group's endpoint when it has one).
fn keys(cluster: bool, shard_group: bool) -> Vec<&'static str> {
    let reader = cluster.then_some(READER_HOST);
    let shards = shard_group.then_some(SHARD_GROUP_HOST);
    KEYS.into_iter().chain(reader).chain(shards).collect()
}

/// What templates may use: the standard keys, a cluster's shard group endpoint, the CA bundle.
fn placeholders(cluster: bool) -> Vec<&'static str> {
    let shards = cluster.then_some(SHARD_GROUP_HOST);
    keys(cluster, false)
        .into_iter()
        .chain(shards)
        .chain([CA_BUNDLE])
        .collect()
}

/// Checks every template of an instance's Secret before anything is rendered, so a bad one is
/// refused whole.
pub fn validate_templates(templates: &BTreeMap<String, String>) -> Result<(), TemplateError> {
    validate_with(templates, &placeholders(false))
}

/// The same for a cluster's Secret, whose templates may also use `readerHost`.
pub fn validate_cluster_templates(
    templates: &BTreeMap<String, String>,
) -> Result<(), TemplateError> {
    validate_with(templates, &placeholders(true))
}

fn validate_with(
    templates: &BTreeMap<String, String>,
    keys: &[&'static str],
) -> Result<(), TemplateError> {
    for (key, template) in templates {
        parse(template, keys).map_err(|problem| TemplateError {
            key: key.clone(),
            problem,
        })?;
        if keys.contains(&key.as_str()) || TLS_KEYS.contains(&key.as_str()) {
            return Err(TemplateError {
                key: key.clone(),
                problem: "is a standard key the operator writes itself; choose another name".into(),
            });
        }
        if !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(TemplateError {
                key: key.clone(),
                problem: "is not a valid Secret key (letters, digits, '-', '_' and '.')".into(),
            });
        }
    }
    Ok(())
}

enum Piece<'a> {
    Text(&'a str),
    Value(&'static str),
}

fn parse<'a>(template: &'a str, keys: &[&'static str]) -> Result<Vec<Piece<'a>>, String> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        pieces.push(Piece::Text(&rest[..start]));
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("{template:?} has a '{{{{' without its '}}}}'"))?;
        let name = after[..end].trim();
        let known = keys.iter().find(|k| **k == name).ok_or_else(|| {
            format!(
                "unknown placeholder {{{{ {name} }}}}; known: {}",
                keys.join(", ")
            )
        })?;
        pieces.push(Piece::Value(known));
        rest = &after[end + 2..];
    }
    pieces.push(Piece::Text(rest));
    Ok(pieces)
}

/// The Secret data: standard keys plus the rendered extra keys.
pub fn render(
    info: &ConnectionInfo<'_>,
    templates: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, SecretString>, TemplateError> {
    let keys = keys(info.reader_host.is_some(), info.shard_group_host.is_some());
    let placeholders = placeholders(info.reader_host.is_some());
    validate_with(templates, &placeholders)?;
    let port = info.port.to_string();
    let uri = uri(info);
    let value = |k: &str| -> String {
        match k {
            "host" => info.host.to_owned(),
            "port" => port.clone(),
            "username" => info.username.to_owned(),
            "password" => info.password.expose_secret().to_owned(),
            "dbname" => info.dbname.to_owned(),
            "engine" => info.engine.to_owned(),
            READER_HOST => info.reader_host.unwrap_or_default().to_owned(),
            SHARD_GROUP_HOST => info.shard_group_host.unwrap_or_default().to_owned(),
            CA_BUNDLE => info.ca_bundle.unwrap_or_default().to_owned(),
            _ => uri.expose_secret().to_owned(),
        }
    };
    let mut data: BTreeMap<String, SecretString> = keys
        .iter()
        .map(|k| (k.to_string(), SecretString::from(value(k))))
        .collect();
    if let Some(bundle) = info.ca_bundle {
        data.insert(TLS_KEYS[0].into(), SecretString::from(bundle.to_owned()));
        let mode = sslmode(info.engine);
        data.insert(TLS_KEYS[1].into(), SecretString::from(mode.to_owned()));
    }
    for (key, template) in templates {
        let rendered: String = parse(template, &placeholders)
            .map_err(|problem| TemplateError {
                key: key.clone(),
                problem,
            })?
            .into_iter()
            .map(|p| match p {
                Piece::Text(t) => t.to_owned(),
                Piece::Value(k) => value(k),
            })
            .collect();
        data.insert(key.clone(), SecretString::from(rendered));
    }
    Ok(data)
}

/// `mysql://user:pass@host:port/db`, with user and password percent-encoded.
pub fn uri(info: &ConnectionInfo<'_>) -> SecretString {
    let scheme = scheme(info.engine);
    let mut uri = format!(
        "{scheme}://{}:{}@{}:{}",
        encode(info.username),
        encode(info.password.expose_secret()),
        info.host,
        info.port
    );
    if !info.dbname.is_empty() {
        uri.push('/');
        uri.push_str(&encode(info.dbname));
    }
    // With a CA bundle, a PostgreSQL client verifies the server (libpq's URI parameter); MySQL
    // drivers take no such URI parameter alike, and read `sslmode` and `ca.crt` instead.
    if info.ca_bundle.is_some() && scheme == "postgresql" {
        uri.push_str("?sslmode=verify-full");
    }
    SecretString::from(uri)
}

/// The setting that verifies the server's certificate and name, in the engine's clients' words.
fn sslmode(engine: &str) -> &'static str {
    match scheme(engine) {
        "postgresql" => "verify-full",
        _ => "VERIFY_IDENTITY",
    }
}

fn scheme(engine: &str) -> &'static str {
    match engine {
        e if e.contains("postgres") => "postgresql",
        e if e.contains("mysql") || e.contains("mariadb") => "mysql",
        e if e.starts_with("sqlserver") => "sqlserver",
        e if e.starts_with("oracle") => "oracle",
        e if e.starts_with("db2") => "db2",
        _ => "mysql",
    }
}

/// Length of generated passwords.
pub const GENERATED_LENGTH: usize = 30;

/// The master password lengths RDS accepts, in characters: for a DB cluster (CreateDBCluster,
/// Aurora or Multi-AZ, whatever its engine) 8 to 41 (API_CreateDBCluster.html,
/// MasterUserPassword); for a DB instance, as its engine says (API_CreateDBInstance.html).
pub fn password_lengths(engine: &str, cluster: bool) -> (usize, usize) {
    match engine {
        _ if cluster => (8, 41),
        e if e.starts_with("oracle") => (8, 30),
        e if e.contains("postgres") || e.starts_with("sqlserver") => (8, 128),
        e if e.starts_with("db2") => (8, 255),
        // MySQL, MariaDB, Aurora MySQL, and anything unknown: the strictest common limit.
        _ => (8, 41),
    }
}

/// Checks a master password against what RDS accepts for the engine (of a DB cluster, or an
/// instance), before any AWS call. The message names the rule, never the password.
pub fn validate_password(engine: &str, cluster: bool, password: &str) -> Result<(), String> {
    if password.ends_with('\n') || password.ends_with('\r') {
        return Err(
            "the master password ends with a line break (a Secret made with --from-file from a \
                    file with a trailing newline?); remove it"
                .into(),
        );
    }
    if let Some(c) = password
        .chars()
        .find(|c| matches!(c, '/' | '"' | '@' | ' '))
    {
        let name = match c {
            '/' => "a slash (/)",
            '"' => "a double quote (\")",
            '@' => "an at sign (@)",
            _ => "a space",
        };
        return Err(format!(
            "the master password contains {name}, which RDS refuses"
        ));
    }
    if password.chars().any(|c| !c.is_ascii_graphic()) {
        return Err(
            "the master password contains a character RDS refuses: use printable ASCII only".into(),
        );
    }
    let (min, max) = password_lengths(engine, cluster);
    let len = password.chars().count();
    if len < min || len > max {
        return Err(format!(
            "the master password has {len} characters; {engine} takes {min} to {max}"
        ));
    }
    Ok(())
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
pub fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A strong password every engine accepts (no '/', '@', '"' or spaces, and within Oracle's 30
/// characters): 30 letters and digits, about 175 bits.
pub fn generate_password() -> SecretString {
    use rand::RngExt;
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    let mut rng = rand::rng();
    let password: String = (0..GENERATED_LENGTH)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    SecretString::from(password)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(password: &SecretString) -> ConnectionInfo<'_> {
        ConnectionInfo {
            reader_host: None,
            shard_group_host: None,
            host: "coffee.abc.us-east-1.rds.amazonaws.com",
            port: 3306,
            username: "admin",
            password,
            dbname: "COFFEE",
            engine: "mysql",
            ca_bundle: None,
        }
    }

    fn expose(data: &BTreeMap<String, SecretString>) -> BTreeMap<&str, &str> {
        data.iter()
            .map(|(k, v)| (k.as_str(), v.expose_secret()))
            .collect()
    }

    #[test]
    fn standard_keys_and_coffee_manage_keys() {
        let password = SecretString::from("p@ss:w/rd");
        let templates: BTreeMap<String, String> = [
            ("APP_DB_HOST", "{{ host }}"),
            ("APP_DB_USER", "{{username}}"),
            ("APP_DB_PASSWORD", "{{ password }}"),
            ("APP_DB_NAME", "{{ dbname }}"),
            (
                "JDBC_URL",
                "jdbc:mysql://{{ host }}:{{ port }}/{{ dbname }}",
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let data = render(&info(&password), &templates).unwrap();
        let data = expose(&data);
        assert_eq!(data["host"], "coffee.abc.us-east-1.rds.amazonaws.com");
        assert_eq!(data["port"], "3306");
        assert_eq!(data["username"], "admin");
        assert_eq!(data["password"], "p@ss:w/rd");
        assert_eq!(data["dbname"], "COFFEE");
        assert_eq!(data["engine"], "mysql");
        assert_eq!(
            data["uri"],
            "mysql://admin:p%40ss%3Aw%2Frd@coffee.abc.us-east-1.rds.amazonaws.com:3306/COFFEE"
        );
        assert_eq!(data["APP_DB_HOST"], data["host"]);
        assert_eq!(data["APP_DB_USER"], "admin");
        assert_eq!(data["APP_DB_PASSWORD"], "p@ss:w/rd");
        assert_eq!(data["APP_DB_NAME"], "COFFEE");
        assert_eq!(
            data["JDBC_URL"],
            "jdbc:mysql://coffee.abc.us-east-1.rds.amazonaws.com:3306/COFFEE"
        );
    }

    #[test]
    fn a_ca_bundle_adds_the_bundle_and_a_verifying_mode_and_nothing_without_one() {
        let password = SecretString::from("pw");
        let templates: BTreeMap<String, String> =
            [("APP_DB_CA".to_owned(), "{{ caBundle }}".to_owned())].into();
        let plain = render(&info(&password), &templates).unwrap();
        assert!(!plain.contains_key("ca.crt") && !plain.contains_key("sslmode"));
        assert_eq!(plain["APP_DB_CA"].expose_secret(), "");
        let bundle = "-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n";
        let mut with = info(&password);
        with.ca_bundle = Some(bundle);
        let data = render(&with, &templates).unwrap();
        let data = expose(&data);
        assert_eq!((data["ca.crt"], data["APP_DB_CA"]), (bundle, bundle));
        assert_eq!(data["sslmode"], "VERIFY_IDENTITY");
        assert!(!data["uri"].contains('?'), "{}", data["uri"]);
        with.engine = "postgres";
        let data = render(&with, &BTreeMap::new()).unwrap();
        let data = expose(&data);
        assert_eq!(data["sslmode"], "verify-full");
        assert!(
            data["uri"].ends_with("/COFFEE?sslmode=verify-full"),
            "{}",
            data["uri"]
        );
        let taken: BTreeMap<String, String> = [("sslmode".to_owned(), "x".to_owned())].into();
        assert!(validate_templates(&taken).is_err(), "a TLS key is reserved");
    }

    #[test]
    fn a_limitless_clusters_secret_has_its_shard_group_endpoint_once_rds_reports_it() {
        let password = SecretString::from("p".to_owned());
        let templates: BTreeMap<String, String> = [(
            "APP_DB_SHARDS".to_owned(),
            "{{ shardGroupHost }}".to_owned(),
        )]
        .into();
        let cluster = |shards: Option<&'static str>| ConnectionInfo {
            reader_host: Some("coffee.cluster-ro-abc.us-east-1.rds.amazonaws.com"),
            shard_group_host: shards,
            engine: "aurora-postgresql",
            ..info(&password)
        };
        let shards = "coffee.limitless-abc.us-east-1.rds.amazonaws.com";
        let data = render(&cluster(Some(shards)), &templates).unwrap();
        let data = expose(&data);
        assert_eq!(data.get(SHARD_GROUP_HOST), Some(&shards));
        assert_eq!(data.get("APP_DB_SHARDS"), Some(&shards));
        // None yet: no key, and the template renders empty.
        let data = render(&cluster(None), &templates).unwrap();
        let data = expose(&data);
        assert!(!data.contains_key(SHARD_GROUP_HOST), "{data:?}");
        assert_eq!(data.get("APP_DB_SHARDS"), Some(&""));
        // An instance's Secret has no such placeholder, and a cluster's template may not write the key.
        assert!(validate_templates(&templates).is_err());
        let reserved = [(SHARD_GROUP_HOST.to_owned(), "x".to_owned())].into();
        assert!(validate_cluster_templates(&reserved).is_err());
    }

    #[test]
    fn postgres_uri_scheme() {
        let password = SecretString::from("pw");
        let mut i = info(&password);
        i.engine = "postgres";
        i.port = 5432;
        assert_eq!(
            uri(&i).expose_secret(),
            "postgresql://admin:pw@coffee.abc.us-east-1.rds.amazonaws.com:5432/COFFEE"
        );
    }

    #[test]
    fn unknown_placeholder_is_refused_whole() {
        let templates: BTreeMap<String, String> = [("A", "{{ host }}"), ("B", "{{ hostname }}")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let err = validate_templates(&templates).unwrap_err();
        assert_eq!(err.key, "B");
        assert!(
            err.problem.contains("unknown placeholder {{ hostname }}"),
            "{err}"
        );
        let password = SecretString::from("pw");
        assert!(render(&info(&password), &templates).is_err());
    }

    #[test]
    fn unclosed_placeholder_and_bad_keys_are_refused() {
        let one = |k: &str, v: &str| BTreeMap::from([(k.to_owned(), v.to_owned())]);
        assert!(validate_templates(&one("A", "{{ host")).is_err());
        assert!(validate_templates(&one("host", "{{ host }}")).is_err());
        assert!(validate_templates(&one("bad key", "x")).is_err());
        assert!(validate_templates(&one("plain", "no placeholders")).is_ok());
    }

    #[test]
    fn generated_passwords_are_long_and_different() {
        let a = generate_password();
        let b = generate_password();
        assert_eq!(a.expose_secret().len(), 30);
        for engine in [
            "mysql",
            "mariadb",
            "postgres",
            "oracle-ee",
            "sqlserver-ex",
            "db2-se",
        ] {
            assert_eq!(
                validate_password(engine, false, a.expose_secret()),
                Ok(()),
                "{engine}"
            );
        }
        assert_ne!(a.expose_secret(), b.expose_secret());
        assert!(a.expose_secret().chars().all(|c| c.is_ascii_alphanumeric()));
    }

    #[test]
    fn passwords_rds_would_refuse_are_refused_first() {
        for (engine, password, why) in [
            ("mysql", "Sup3r-Secret\n", "line break"),
            ("mysql", "with/slash1", "slash"),
            ("mysql", "with\"quote1", "double quote"),
            ("mysql", "with@at1234", "at sign"),
            ("mysql", "with space1", "space"),
            ("mysql", "héllo-wörld", "printable ASCII"),
            ("mysql", "short", "5 characters"),
            ("mysql", &"x".repeat(42), "8 to 41"),
            ("oracle-se2", &"x".repeat(31), "8 to 30"),
        ] {
            let err = validate_password(engine, false, password).expect_err(password);
            assert!(err.contains(why), "{password:?}: {err}");
            assert!(
                !err.contains(password.trim()),
                "the message shows no password"
            );
        }
        assert_eq!(
            validate_password("postgres", false, &"x".repeat(100)),
            Ok(())
        );
        assert_eq!(
            validate_password("mysql", false, "Sup3r-Secret-Passw0rd"),
            Ok(())
        );
        // A DB cluster's, Aurora PostgreSQL's too, is 8 to 41 (API_CreateDBCluster.html).
        let cluster = validate_password("aurora-postgresql", true, &"x".repeat(42));
        assert!(cluster.is_err_and(|e| e.contains("8 to 41")));
        assert_eq!(
            validate_password("aurora-postgresql", true, &"x".repeat(41)),
            Ok(())
        );
    }
}
