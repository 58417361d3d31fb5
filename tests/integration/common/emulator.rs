//! The AWS emulator: clients, the sample network, console-like changes, the calls moto_ext
//! counted, and what RDS reports of an instance.

use super::*;

/// The AWS endpoint the tests use (moto from localstack/moto.sh, or LocalStack).
pub fn aws_endpoint() -> String {
    std::env::var("AWS_ENDPOINT_URL")
        .expect("AWS_ENDPOINT_URL must name the AWS emulator: start one with `localstack/moto.sh start` (see README)")
}

/// An RDS client of the emulator, independent of the operator's (plays the console user).
pub async fn rds() -> aws_sdk_rds::Client {
    aws_sdk_rds::Client::new(&emulator_config().await)
}

/// An SQS client of the emulator (plays EventBridge's sender, and looks into queues).
pub async fn sqs() -> aws_sdk_sqs::Client {
    aws_sdk_sqs::Client::new(&emulator_config().await)
}

/// The emulator's SDK settings (its endpoint, region and default credentials), for a client
/// whose credentials a test sets.
pub async fn emulator_sdk_config() -> aws_config::SdkConfig {
    emulator_config().await
}

async fn emulator_config() -> aws_config::SdkConfig {
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(aws_endpoint())
        .region(aws_config::Region::new(region()))
        .credentials_provider(aws_sdk_rds::config::Credentials::new(
            std::env::var("AWS_ACCESS_KEY_ID").unwrap_or_else(|_| "test".into()),
            std::env::var("AWS_SECRET_ACCESS_KEY").unwrap_or_else(|_| "test".into()),
            None,
            None,
            "tests",
        ))
        .load()
        .await
}

pub fn region() -> String {
    std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".into())
}

/// Runs localstack/init/coffee_network.py (the test bed's AWS set-up) with these arguments against
/// the emulator, and returns what it prints.
pub fn coffee_network(args: &[&str]) -> String {
    coffee_network_with(args, &[])
}

/// coffee_network.py with more environment (another account's credentials, another region).
pub fn coffee_network_with(args: &[&str], env: &[(&str, &str)]) -> String {
    let cache = std::env::var("RDS_OPERATOR_CACHE")
        .unwrap_or_else(|_| format!("{}/.cache/rds-operator", std::env::var("HOME").unwrap()));
    let out = Command::new(format!("{cache}/moto-venv/bin/python"))
        .arg(format!("{REPO}/localstack/init/coffee_network.py"))
        .args(args)
        .env("AWS_ENDPOINT_URL", aws_endpoint())
        .envs(env.iter().copied())
        .output()
        .expect("run coffee_network.py");
    assert!(
        out.status.success(),
        "coffee_network.py {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A change made in the console: one ModifyDBInstance of `id`, applied at once.
pub async fn console_modify(
    rds: &aws_sdk_rds::Client,
    id: &str,
    change: impl FnOnce(
        aws_sdk_rds::operation::modify_db_instance::builders::ModifyDBInstanceFluentBuilder,
    ) -> aws_sdk_rds::operation::modify_db_instance::builders::ModifyDBInstanceFluentBuilder,
) {
    change(rds.modify_db_instance().db_instance_identifier(id))
        .apply_immediately(true)
        .send()
        .await
        .expect("out-of-band ModifyDBInstance");
}

/// Waits until RDS reports the instance's class as `class`.
pub async fn wait_class(rds: &aws_sdk_rds::Client, id: &str, class: &str) {
    wait_for(
        &format!("{id} at {class} in RDS"),
        Duration::from_secs(90),
        || async {
            let i = describe(rds, id).await?;
            (i.db_instance_class() == Some(class)).then_some(())
        },
    )
    .await;
}

/// Whether the endpoint is moto with moto_ext (which counts calls); LocalStack is not.
pub fn has_moto_ext() -> bool {
    moto_ext_get("/_rds_ext/config").is_some()
}

/// Every call that is not a read (Describe…, List…) the emulator served for these identifiers,
/// by action and identifier.
pub fn mutations(identifiers: &[&str]) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for id in identifiers {
        for (action, n) in server_calls(id) {
            if !action.starts_with("Describe") && !action.starts_with("List") {
                *out.entry(format!("{action} {id}")).or_default() += n;
            }
        }
    }
    out
}

/// RDS API calls the emulator served for one identifier, by action (moto_ext's count).
pub fn server_calls(identifier: &str) -> BTreeMap<String, u64> {
    let body = moto_ext_get(&format!("/_rds_ext/calls?identifier={identifier}"))
        .expect("the emulator counts calls (moto with localstack/moto_ext)");
    serde_json::from_str(&body).expect("calls JSON")
}

pub fn moto_ext_get(path: &str) -> Option<String> {
    // A busy emulator may drop one request of many: ask up to three times.
    (0..3).find_map(|attempt| {
        if attempt > 0 {
            std::thread::sleep(Duration::from_millis(300));
        }
        match http(&emulator_host(), "GET", path)? {
            (200, body) => Some(body),
            _ => None,
        }
    })
}

/// POST to moto_ext's (or moto's) control API; true on 200.
pub fn moto_ext_post(path: &str) -> bool {
    matches!(http(&emulator_host(), "POST", path), Some((200, _)))
}

pub(crate) fn emulator_host() -> String {
    aws_endpoint()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned()
}

/// A bodyless HTTP/1.0 request: (status code, body), or None when nothing answers.
pub(super) fn http(host: &str, method: &str, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(host).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    let code = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, body.to_owned()))
}

/// The instance as RDS reports it, or None.
pub async fn describe(
    rds: &aws_sdk_rds::Client,
    identifier: &str,
) -> Option<aws_sdk_rds::types::DbInstance> {
    match rds
        .describe_db_instances()
        .db_instance_identifier(identifier)
        .send()
        .await
    {
        Ok(out) => out.db_instances().first().cloned(),
        Err(e) => {
            let code = aws_sdk_rds::error::ProvideErrorMetadata::code(&e).map(str::to_owned);
            assert_eq!(
                code.as_deref(),
                Some("DBInstanceNotFound"),
                "describe {identifier}: {e:?}"
            );
            None
        }
    }
}

/// The master password the emulator's instance was last given (moto_ext introspection).
pub fn rds_master_password(identifier: &str) -> Option<String> {
    let body = moto_ext_get(&format!(
        "/_rds_ext/master-password?identifier={identifier}"
    ))?;
    let value: serde_json::Value = serde_json::from_str(&body).ok()?;
    value["password"].as_str().map(str::to_owned)
}

/// The calls of these actions the emulator served for one identifier, added up.
pub fn calls_of(identifier: &str, actions: &[&str]) -> u64 {
    actions.iter().map(|a| calls(identifier, a)).sum()
}

/// An instance's tags as RDS reports them.
pub fn tags_of(i: &aws_sdk_rds::types::DbInstance) -> std::collections::BTreeMap<String, String> {
    (i.tag_list().iter())
        .map(|t| {
            (
                t.key().unwrap_or_default().into(),
                t.value().unwrap_or_default().into(),
            )
        })
        .collect()
}

pub fn calls(identifier: &str, action: &str) -> u64 {
    server_calls(identifier).get(action).copied().unwrap_or(0)
}

/// Asserts that a terminal error (one only a spec change can help) is not retried: the failure's
/// own status write wakes one more attempt; after that `action` is not sent for `identifier` while
/// the operator polls its location three more times (its DescribeDBInstances listing moves: it
/// was alive, and chose not to send) and for at least 8 s. Returns how many were sent.
pub async fn not_retried(operator: &Operator, identifier: &str, action: &str) -> u64 {
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let tried = calls(identifier, action);
    let polls = listings(operator);
    let what = format!("{action} of {identifier} not retried without a spec change");
    let none = || async { calls(identifier, action) == tried };
    let at_least = std::time::Duration::from_secs(8);
    holds_while((polls, "listings of the location"), at_least, &what, none).await;
    tried
}

/// The subnets of the network the emulator's init made (localstack/init/coffee_network.py).
pub async fn coffee_subnets(rds: &aws_sdk_rds::Client) -> Vec<String> {
    let out = (rds.describe_db_subnet_groups())
        .db_subnet_group_name("coffee-manage-db-subnets")
        .send()
        .await
        .expect("the emulator's network");
    let group = &out.db_subnet_groups()[0];
    (group.subnets().iter())
        .filter_map(|s| s.subnet_identifier().map(str::to_owned))
        .collect()
}

/// Creates the IAM role `name` in `account` (moto acts in an account its `x-moto-account-id`
/// header names), trusting the operator's account (123456789012, moto's default) and requiring
/// `external_id` when given, as a member account's trust policy does (deploy/iam/); returns its
/// ARN.
pub fn create_role(account: &str, name: &str, external_id: Option<&str>) -> String {
    create_role_at(account, "/", name, external_id)
}

/// [`create_role`] under an IAM path (`/rds-operator/<namespace>/`: a namespace's own role).
pub fn create_role_at(account: &str, path: &str, name: &str, external_id: Option<&str>) -> String {
    let mut statement = serde_json::json!({
        "Effect": "Allow",
        "Principal": {"AWS": "arn:aws:iam::123456789012:root"},
        "Action": ["sts:AssumeRole", "sts:TagSession"],
    });
    if let Some(id) = external_id {
        statement["Condition"] = serde_json::json!({"StringEquals": {"sts:ExternalId": id}});
    }
    let policy = serde_json::json!({"Version": "2012-10-17", "Statement": [statement]});
    iam_call(
        account,
        &format!(
            "Action=CreateRole&Version=2010-05-08&RoleName={name}&Path={}&AssumeRolePolicyDocument={}",
            rds_operator::dbinstance::connection::encode(path),
            rds_operator::dbinstance::connection::encode(&policy.to_string())
        ),
    );
    format!("arn:aws:iam::{account}:role{path}{name}")
}

/// The IAM role an RDS Proxy reads its Secrets Manager secrets with, in moto's default account:
/// trusting rds.amazonaws.com, allowed secretsmanager:GetSecretValue (rds-proxy-setup.html); its
/// ARN, under the namespace's IAM path (/rds-operator/<namespace>/: `managed::roles`). The
/// emulator refuses a proxy's targets without it (moto_ext/trust.py).
pub fn create_proxy_role(name: &str, namespace: &str) -> String {
    let account = "123456789012";
    let trust = serde_json::json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
        "Principal": {"Service": "rds.amazonaws.com"}, "Action": "sts:AssumeRole"}]});
    let read = serde_json::json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
        "Action": "secretsmanager:GetSecretValue", "Resource": "*"}]});
    let encode =
        |v: &serde_json::Value| rds_operator::dbinstance::connection::encode(&v.to_string());
    iam_call(
        account,
        &format!(
            "Action=CreateRole&Version=2010-05-08&RoleName={name}&Path={}&AssumeRolePolicyDocument={}",
            rds_operator::dbinstance::connection::encode(&format!("/rds-operator/{namespace}/")),
            encode(&trust)
        ),
    );
    iam_call(
        account,
        &format!(
            "Action=PutRolePolicy&Version=2010-05-08&RoleName={name}&PolicyName=secrets&PolicyDocument={}",
            encode(&read)
        ),
    );
    format!("arn:aws:iam::{account}:role/rds-operator/{namespace}/{name}")
}

/// An IAM user of moto's default account whose only policy is `policy`, and an access key of
/// its own: (key id, secret). The emulator holds every RDS request that key signs to the policy
/// (moto_ext/access.py).
pub fn create_policy_user(name: &str, policy: &str) -> (String, String) {
    let account = "123456789012";
    let encode = rds_operator::dbinstance::connection::encode;
    iam_call(
        account,
        &format!("Action=CreateUser&Version=2010-05-08&UserName={name}"),
    );
    iam_call(
        account,
        &format!(
            "Action=PutUserPolicy&Version=2010-05-08&UserName={name}&PolicyName=shipped&PolicyDocument={}",
            encode(policy)
        ),
    );
    let answer = iam_call(
        account,
        &format!("Action=CreateAccessKey&Version=2010-05-08&UserName={name}"),
    );
    let field = |tag: &str| {
        (answer.split(&format!("<{tag}>")).nth(1))
            .and_then(|rest| rest.split(&format!("</{tag}>")).next())
            .unwrap_or_else(|| panic!("{tag} in {answer}"))
            .to_owned()
    };
    (field("AccessKeyId"), field("SecretAccessKey"))
}

/// The requests the emulator refused an IAM principal (its ARN) under its policies: (action,
/// resource) each.
pub fn denied(caller: &str) -> Vec<(String, String)> {
    let body = moto_ext_get(&format!("/_rds_ext/denied?caller={caller}"))
        .expect("the emulator lists what it denied");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&body).expect("denied JSON");
    (rows.iter())
        .map(|r| {
            (
                r["action"].as_str().unwrap_or_default().to_owned(),
                r["resource"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// One IAM Query call (`body`) in `account`, asserted to succeed; its answer.
fn iam_call(account: &str, body: &str) -> String {
    let headers = format!(
        "Content-Type: application/x-www-form-urlencoded\r\nx-moto-account-id: {account}\r\n"
    );
    let (code, answer) = aws_request(("POST", "/"), ("us-east-1", "iam"), &headers, body);
    assert_eq!(code, 200, "{body}: {answer}");
    answer
}

/// One request to another AWS service of the emulator (IAM, KMS, SNS, S3: the SDKs the tests
/// do not link), unsigned but for the credential scope (`region`, `service`) moto routes by,
/// with `headers` (each ending in CRLF): (status code, body).
pub(crate) fn aws_request(
    (method, path): (&str, &str),
    (region, service): (&str, &str),
    headers: &str,
    body: &str,
) -> (u16, String) {
    let host = emulator_host();
    let mut stream = TcpStream::connect(&host).expect("reach the emulator");
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: {host}\r\n{headers}\
         Authorization: AWS4-HMAC-SHA256 Credential=test/20261201/{region}/{service}/aws4_request, SignedHeaders=host, Signature=0\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap_or_else(|e| panic!("send the {service} call: {e}"));
    let mut response = String::new();
    (stream.read_to_string(&mut response)).unwrap_or_else(|e| panic!("the {service} answer: {e}"));
    let code = (response.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (code, body.to_owned())
}

/// Credentials of `role` (AssumeRole with the emulator's default ones): (key id, secret, token).
pub async fn assumed(role: &str, external_id: Option<&str>) -> (String, String, String) {
    let sts = aws_sdk_sts::Client::new(&emulator_config().await);
    let issued = (sts.assume_role())
        .role_arn(role)
        .role_session_name("rds-operator-tests")
        .set_external_id(external_id.map(str::to_owned))
        .send()
        .await
        .expect("assume the test role")
        .credentials
        .expect("credentials");
    (
        issued.access_key_id,
        issued.secret_access_key,
        issued.session_token,
    )
}

/// An RDS client of `region` in the account of `role`, reached as the operator would (AssumeRole
/// with the emulator's default credentials, and the external ID when one is needed).
pub async fn rds_in(role: &str, external_id: Option<&str>, region: &str) -> aws_sdk_rds::Client {
    let (key, secret, token) = assumed(role, external_id).await;
    let config = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(aws_endpoint())
        .region(aws_config::Region::new(region.to_owned()))
        .credentials_provider(aws_sdk_rds::config::Credentials::new(
            key,
            secret,
            Some(token),
            None,
            "tests",
        ))
        .load()
        .await;
    aws_sdk_rds::Client::new(&config)
}

/// An RDS client of `region` with the emulator's default credentials (the operator's own account).
pub async fn rds_of_region(region: &str) -> aws_sdk_rds::Client {
    let config = emulator_config()
        .await
        .to_builder()
        .region(aws_config::Region::new(region.to_owned()))
        .build();
    aws_sdk_rds::Client::new(&config)
}

/// Waits until RDS reports the DB snapshot `available` (RDS refuses to restore or delete one before:
/// InvalidDBSnapshotState).
pub async fn wait_snapshot_available(rds: &aws_sdk_rds::Client, snapshot: &str) {
    crate::common::wait_for(
        &format!("snapshot {snapshot} available"),
        std::time::Duration::from_secs(60),
        || async {
            let out = (rds.describe_db_snapshots())
                .db_snapshot_identifier(snapshot)
                .send()
                .await
                .ok()?;
            let status = out.db_snapshots().first()?.status()?.to_owned();
            (status == "available").then_some(())
        },
    )
    .await;
}

/// The parameter names (never values) of each `action` call the emulator served for
/// `identifier`, in order, as moto holds them (snake_case: master_user_password).
pub fn call_parameters(identifier: &str, action: &str) -> Vec<Vec<String>> {
    let path = format!("/_rds_ext/call-parameters?action={action}&identifier={identifier}");
    let body = moto_ext_get(&path).expect("the emulator logs call parameters (moto_ext)");
    serde_json::from_str(&body).expect("call parameters JSON")
}

/// A customer-managed KMS key in moto's default account and the test bed's region (KMS's JSON
/// protocol, TrentService.CreateKey): (key id, key ARN).
pub fn create_kms_key(description: &str) -> (String, String) {
    let body = serde_json::json!({"Description": description}).to_string();
    let headers =
        "Content-Type: application/x-amz-json-1.1\r\nX-Amz-Target: TrentService.CreateKey\r\n";
    let (_, json) = aws_request(("POST", "/"), (&region(), "kms"), headers, &body);
    let key: serde_json::Value = serde_json::from_str(&json).expect("CreateKey's answer");
    let meta = &key["KeyMetadata"];
    let field = |k: &str| meta[k].as_str().expect("KeyMetadata").to_owned();
    (field("KeyId"), field("Arn"))
}
