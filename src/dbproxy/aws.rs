//! The AWS calls of the DBProxy kind: DescribeDBProxies (with its tags, targets and target group),
//! CreateDBProxy, ModifyDBProxy, ModifyDBProxyTargetGroup, Register/DeregisterDBProxyTargets,
//! DeleteDBProxy; and the proxy's Secrets Manager secret: GetSecretValue, CreateSecret,
//! PutSecretValue, DeleteSecret (counted and classified as every call, in `rds.rs`).

use aws_sdk_rds::types::{
    ConnectionPoolConfiguration, IamAuthMode, UserAuthConfig, UserAuthConfigInfo,
};
use secrecy::ExposeSecret;

use crate::aws_error::{AwsError, aws_error};
use crate::rds::{Rds, rds_tags};
use crate::sensitive::Sensitive;

use super::plan::{Own, Settings};
use super::{ConnectionPool, ObservedProxy, ProxyEndpoint, Resolved, TargetHealth};

// The proxies as a listing would have them (`observer::listing`); a reconcile reads its proxy
// directly (its targets and pool are not in the pages), so the listing is only told of changes.
crate::listed_by_name!(ObservedProxy, "the DB proxies", "rds:db-proxy", proxy_pages);

/// The RDS calls of the DBProxy kind.
pub(super) trait ProxyCalls {
    /// Every proxy of the account and region, 100 a page, without tags, targets or pool.
    fn proxy_pages(&self) -> impl Future<Output = Result<Vec<ObservedProxy>, AwsError>> + Send;

    /// The proxy of this name with its tags, targets and pool; None when RDS has none.
    fn proxy(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<ObservedProxy>, AwsError>> + Send;

    /// The operator's secret of a proxy, by name: its ARN, and whether it holds this username and
    /// password; None when Secrets Manager has none.
    fn proxy_secret(
        &self,
        name: &str,
        username: &str,
        password: &Sensitive,
    ) -> impl Future<Output = Result<Option<(String, bool)>, AwsError>> + Send;

    /// One of the kind's own calls.
    fn proxy_call(&self, step: &Own) -> impl Future<Output = Result<(), AwsError>> + Send;

    /// DeleteDBProxy (one already gone is deleted), then the operator's secret of it, at once
    /// (no recovery window: it only copies a password the target's Secret holds).
    fn delete_proxy(
        &self,
        name: &str,
        secret: Option<&str>,
    ) -> impl Future<Output = Result<(), AwsError>> + Send;
}

impl ProxyCalls for Rds {
    async fn proxy_pages(&self) -> Result<Vec<ObservedProxy>, AwsError> {
        let mut all = Vec::new();
        let mut pages = (self.client.describe_db_proxies())
            .max_records(100)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribeDBProxies", e, None));
            let page = self.counted("DescribeDBProxies", page);
            all.extend(page?.db_proxies().iter().map(summary));
        }
        Ok(all)
    }

    async fn proxy(&self, name: &str) -> Result<Option<ObservedProxy>, AwsError> {
        let result = (self.client.describe_db_proxies())
            .db_proxy_name(name)
            .send()
            .await
            .map_err(|e| aws_error("DescribeDBProxies", e, None));
        let result = self.counted("DescribeDBProxies", result);
        let proxy = match result {
            Ok(out) => out.db_proxies().first().cloned(),
            Err(e) if e.gone() => None,
            Err(e) => return Err(e),
        };
        let Some(p) = proxy else { return Ok(None) };
        let mut found = summary(&p);
        if let Some(arn) = &found.arn {
            found.tags = self.tags_of(arn).await?;
        }
        found.targets = proxy_targets(self, name).await?;
        found.pool = proxy_pool(self, name).await?;
        found.endpoints = proxy_endpoints(self, name).await?;
        Ok(Some(found))
    }

    async fn proxy_secret(
        &self,
        name: &str,
        username: &str,
        password: &Sensitive,
    ) -> Result<Option<(String, bool)>, AwsError> {
        let result = (self.secrets.get_secret_value())
            .secret_id(name)
            .send()
            .await
            .map_err(|e| aws_error("GetSecretValue", e, None));
        let result = self.counted("GetSecretValue", result);
        let out = match result {
            Ok(out) => out,
            Err(e) if e.gone() => return Ok(None),
            Err(e) => return Err(e),
        };
        let parsed: serde_json::Value =
            serde_json::from_str(out.secret_string().unwrap_or_default()).unwrap_or_default();
        let matches = parsed["username"].as_str() == Some(username)
            && parsed["password"].as_str() == Some(password.0.expose_secret());
        Ok(Some((out.arn().unwrap_or(name).to_owned(), matches)))
    }

    async fn proxy_call(&self, step: &Own) -> Result<(), AwsError> {
        match step {
            Own::CreateSecret {
                name,
                username,
                password,
                tags,
            } => create_proxy_secret(self, name, username, password, tags).await,
            Own::PutSecret {
                arn,
                username,
                password,
            } => {
                let result = (self.secrets.put_secret_value())
                    .secret_id(arn)
                    .secret_string(secret_string(username, password))
                    .send()
                    .await
                    .map_err(|e| aws_error("PutSecretValue", e, None));
                let result = self.counted("PutSecretValue", result);
                result.map(|_| ())
            }
            Own::Create {
                name,
                engine_family,
                subnets,
                settings,
                tags,
            } => {
                let result = (self.client.create_db_proxy())
                    .db_proxy_name(name)
                    .engine_family(engine_family.as_str().into())
                    .set_auth(Some(vec![auth(settings)]))
                    .role_arn(&settings.role_arn)
                    .set_vpc_subnet_ids(Some(subnets.clone()))
                    .set_vpc_security_group_ids(groups(settings))
                    .require_tls(settings.require_tls)
                    .set_idle_client_timeout(settings.idle_client_timeout)
                    .set_tags(Some(rds_tags(tags)))
                    .send()
                    .await
                    .map_err(|e| aws_error("CreateDBProxy", e, None));
                let result = self.counted("CreateDBProxy", result);
                result.map(|_| ())
            }
            Own::Modify { name, settings } => {
                let result = (self.client.modify_db_proxy())
                    .db_proxy_name(name)
                    .set_auth(Some(vec![auth(settings)]))
                    .role_arn(&settings.role_arn)
                    .set_security_groups(groups(settings))
                    .require_tls(settings.require_tls)
                    .set_idle_client_timeout(settings.idle_client_timeout)
                    .send()
                    .await
                    .map_err(|e| aws_error("ModifyDBProxy", e, None));
                let result = self.counted("ModifyDBProxy", result);
                result.map(|_| ())
            }
            Own::ModifyPool { name, pool } => modify_proxy_pool(self, name, pool).await,
            Own::CreateEndpoint { .. } | Own::DeleteEndpoint { .. } => {
                proxy_endpoint_call(self, step).await
            }
            Own::Targets {
                name,
                register,
                targets,
            } => proxy_targets_call(self, name, *register, targets).await,
            Own::Secret(_) => Ok(()),
        }
    }

    async fn delete_proxy(&self, name: &str, secret: Option<&str>) -> Result<(), AwsError> {
        let result = (self.client.delete_db_proxy())
            .db_proxy_name(name)
            .send()
            .await
            .map_err(|e| aws_error("DeleteDBProxy", e, None));
        let result = self.counted("DeleteDBProxy", result);
        match result {
            Err(e) if e.gone() => {}
            other => other.map(|_| ())?,
        }
        let Some(secret) = secret else { return Ok(()) };
        let result = (self.secrets.delete_secret())
            .secret_id(secret)
            .force_delete_without_recovery(true)
            .send()
            .await
            .map_err(|e| aws_error("DeleteSecret", e, None));
        let result = self.counted("DeleteSecret", result);
        match result {
            Err(e) if e.gone() => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

async fn proxy_endpoints(rds: &Rds, name: &str) -> Result<Vec<ProxyEndpoint>, AwsError> {
    let mut all = Vec::new();
    let mut pages = (rds.client.describe_db_proxy_endpoints())
        .db_proxy_name(name)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| aws_error("DescribeDBProxyEndpoints", e, None));
        let page = rds.counted("DescribeDBProxyEndpoints", page);
        let found = (page?.db_proxy_endpoints().iter())
            .filter(|e| e.is_default() != Some(true))
            .map(|e| ProxyEndpoint {
                name: e.db_proxy_endpoint_name().unwrap_or_default().to_owned(),
                target_role: e.target_role().map(|r| r.as_str().to_owned()),
                state: e.status().map(|s| s.as_str().to_owned()),
                endpoint: e.endpoint().map(str::to_owned),
            })
            .collect::<Vec<_>>();
        all.extend(found);
    }
    Ok(all)
}

async fn proxy_targets(rds: &Rds, name: &str) -> Result<Vec<TargetHealth>, AwsError> {
    let result = (rds.client.describe_db_proxy_targets())
        .db_proxy_name(name)
        .send()
        .await
        .map_err(|e| aws_error("DescribeDBProxyTargets", e, None));
    let result = rds.counted("DescribeDBProxyTargets", result);
    // A cluster's member instances are listed with it (TrackedClusterId): the cluster is the
    // target.
    let targets = (result?.targets().iter())
        .filter(|t| {
            t.tracked_cluster_id().is_none()
                || t.r#type().is_some_and(|k| k.as_str() == "TRACKED_CLUSTER")
        })
        .filter_map(|t| {
            let health = t.target_health();
            Some(TargetHealth {
                identifier: t.rds_resource_id()?.to_owned(),
                r#type: t.r#type().map(|k| k.as_str().to_owned()),
                state: (health.and_then(|h| h.state())).map(|s| s.as_str().to_owned()),
                reason: (health.and_then(|h| h.reason())).map(|r| r.as_str().to_owned()),
                description: (health.and_then(|h| h.description())).map(str::to_owned),
            })
        })
        .collect();
    Ok(targets)
}

async fn proxy_pool(rds: &Rds, name: &str) -> Result<ConnectionPool, AwsError> {
    let result = (rds.client.describe_db_proxy_target_groups())
        .db_proxy_name(name)
        .send()
        .await
        .map_err(|e| aws_error("DescribeDBProxyTargetGroups", e, None));
    let result = rds.counted("DescribeDBProxyTargetGroups", result);
    let out = result?;
    let info = (out.target_groups().first()).and_then(|g| g.connection_pool_config());
    Ok(ConnectionPool {
        max_connections_percent: info.and_then(|i| i.max_connections_percent()),
        max_idle_connections_percent: info.and_then(|i| i.max_idle_connections_percent()),
        connection_borrow_timeout: info.and_then(|i| i.connection_borrow_timeout()),
    })
}

async fn proxy_endpoint_call(rds: &Rds, step: &Own) -> Result<(), AwsError> {
    match step {
        Own::CreateEndpoint {
            proxy,
            name,
            role,
            subnets,
            tags,
        } => {
            let result = (rds.client.create_db_proxy_endpoint())
                .db_proxy_name(proxy)
                .db_proxy_endpoint_name(name)
                .target_role(role.as_str().into())
                .set_vpc_subnet_ids(Some(subnets.clone()))
                .set_tags(Some(rds_tags(tags)))
                .send()
                .await
                .map_err(|e| aws_error("CreateDBProxyEndpoint", e, None));
            let result = rds.counted("CreateDBProxyEndpoint", result);
            result.map(|_| ())
        }
        Own::DeleteEndpoint { name } => {
            let result = (rds.client.delete_db_proxy_endpoint())
                .db_proxy_endpoint_name(name)
                .send()
                .await
                .map_err(|e| aws_error("DeleteDBProxyEndpoint", e, None));
            let result = rds.counted("DeleteDBProxyEndpoint", result);
            match result {
                Err(e) if e.gone() => Ok(()),
                other => other.map(|_| ()),
            }
        }
        _ => Ok(()),
    }
}

async fn create_proxy_secret(
    rds: &Rds,
    name: &str,
    username: &str,
    password: &Sensitive,
    tags: &std::collections::BTreeMap<String, String>,
) -> Result<(), AwsError> {
    let tags = (tags.iter()).map(|(k, v)| {
        aws_sdk_secretsmanager::types::Tag::builder()
            .key(k)
            .value(v)
            .build()
    });
    let result = (rds.secrets.create_secret())
        .name(name)
        .description("RDS Proxy credentials kept by rds-operator")
        .secret_string(secret_string(username, password))
        .set_tags(Some(tags.collect()))
        .send()
        .await
        .map_err(|e| aws_error("CreateSecret", e, None));
    let result = rds.counted("CreateSecret", result);
    result.map(|_| ())
}

async fn modify_proxy_pool(rds: &Rds, name: &str, pool: &ConnectionPool) -> Result<(), AwsError> {
    let config = ConnectionPoolConfiguration::builder()
        .set_max_connections_percent(pool.max_connections_percent)
        .set_max_idle_connections_percent(pool.max_idle_connections_percent)
        .set_connection_borrow_timeout(pool.connection_borrow_timeout)
        .build();
    let result = (rds.client.modify_db_proxy_target_group())
        .db_proxy_name(name)
        .target_group_name("default")
        .connection_pool_config(config)
        .send()
        .await
        .map_err(|e| aws_error("ModifyDBProxyTargetGroup", e, None));
    let result = rds.counted("ModifyDBProxyTargetGroup", result);
    result.map(|_| ())
}

async fn proxy_targets_call(
    rds: &Rds,
    name: &str,
    register: bool,
    targets: &[Resolved],
) -> Result<(), AwsError> {
    let ids = |cluster: bool| -> Option<Vec<String>> {
        let ids: Vec<String> = (targets.iter())
            .filter(|t| t.cluster == cluster)
            .map(|t| t.identifier.clone())
            .collect();
        (!ids.is_empty()).then_some(ids)
    };
    let (instances, clusters) = (ids(false), ids(true));
    let (operation, result) = match register {
        true => {
            let call = (rds.client.register_db_proxy_targets())
                .db_proxy_name(name)
                .target_group_name("default")
                .set_db_instance_identifiers(instances)
                .set_db_cluster_identifiers(clusters);
            let result = call.send().await.map(|_| ());
            (
                "RegisterDBProxyTargets",
                result.map_err(|e| aws_error("RegisterDBProxyTargets", e, None)),
            )
        }
        false => {
            let call = (rds.client.deregister_db_proxy_targets())
                .db_proxy_name(name)
                .target_group_name("default")
                .set_db_instance_identifiers(instances)
                .set_db_cluster_identifiers(clusters);
            let result = call.send().await.map(|_| ());
            (
                "DeregisterDBProxyTargets",
                result.map_err(|e| aws_error("DeregisterDBProxyTargets", e, None)),
            )
        }
    };
    rds.counted(operation, result)
}

/// What the proxy's secret holds: the username and password, as RDS Proxy reads them.
fn secret_string(username: &str, password: &Sensitive) -> String {
    serde_json::json!({"username": username, "password": password.0.expose_secret()}).to_string()
}

fn auth(settings: &Settings) -> UserAuthConfig {
    let (secret, iam) = &settings.auth;
    UserAuthConfig::builder()
        .secret_arn(secret)
        .iam_auth(IamAuthMode::from(iam.as_str()))
        .build()
}

/// A proxy as DescribeDBProxies shows it, without its tags, targets or pool.
fn summary(p: &aws_sdk_rds::types::DbProxy) -> ObservedProxy {
    let text = |v: Option<&str>| v.map(str::to_owned);
    ObservedProxy {
        name: p.db_proxy_name().unwrap_or_default().to_owned(),
        arn: text(p.db_proxy_arn()),
        status: (p.status()).map_or(String::new(), |s| s.as_str().to_owned()),
        endpoint: text(p.endpoint()),
        require_tls: p.require_tls().unwrap_or(false),
        idle_client_timeout: p.idle_client_timeout(),
        role_arn: text(p.role_arn()),
        security_groups: p.vpc_security_group_ids().to_vec(),
        auth: p.auth().iter().map(auth_of).collect(),
        ..Default::default()
    }
}

fn auth_of(a: &UserAuthConfigInfo) -> (String, String) {
    let iam = a.iam_auth().map_or("DISABLED", |i| i.as_str());
    (
        a.secret_arn().unwrap_or_default().to_owned(),
        iam.to_owned(),
    )
}

fn groups(settings: &Settings) -> Option<Vec<String>> {
    (!settings.security_groups.is_empty()).then(|| settings.security_groups.clone())
}
