//! DBUser on the skeleton: it is located where its database is (the DBInstance's or DBCluster's
//! account and region, for a master password RDS manages), reads the database and its master
//! credentials (a global database's secondary: the primary's, through the global writer
//! endpoint), logs in as the master user to read the user and its privileges, plans (pure,
//! `plan.rs`) and runs its steps: the Secrets here, the SQL in `sql/`.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::Controller;

use super::plan::{
    self, Database, DatabaseFacts, Facts, Found, Password, Plan, Step, password_secret,
};
use super::sql::{self, Failure, Login};
use super::{DBUser, DBUserStatus, Engine, UserAuth};
use crate::context::Context;
use crate::database::parts::Endpoint;
use crate::database::password::{PasswordFacts, PasswordRead, credentials_of};
use crate::dbcluster::DBCluster;
use crate::dbinstance::DBInstance;
use crate::error::{Error, kube_err};
use crate::locations::Location;
use crate::managed::Managed;
use crate::managed::apiserver::{patch_status, set_finalizer};
use crate::managed::references;
use crate::secrets;

/// The database object the user names, as read from the API server.
pub enum Named {
    Instance(Box<DBInstance>),
    Cluster(Box<DBCluster>),
}

impl Managed for DBUser {
    const KIND: &'static str = "DBUser";
    type Ctx = Context;
    type Facts = Facts;
    type Step = Step;
    type Plan = Plan;
    type Answer = ();
    type Status = DBUserStatus;
    /// The database object, and where it is; None while the database object is not there.
    type Where = Option<(Named, Arc<Location>)>;

    /// Its DBInstance or DBCluster changing (turning Ready, its endpoint or password) wakes it, and
    /// so do its Secrets (a password rotated is set on the user at once).
    fn watches(
        controller: Controller<DBUser>,
        ctx: &Context,
        namespace: Option<&str>,
    ) -> Controller<DBUser> {
        let controller = references::wakes_by_secrets(controller, ctx, namespace, |u| {
            (u.spec.password_secret_ref.iter())
                .map(|r| r.name.as_str())
                .collect()
        });
        let controller = references::wakes_by_reference::<_, DBInstance>(
            controller,
            ctx,
            namespace,
            |u: &DBUser| u.spec.db_instance_ref.as_ref().map(|r| r.name.as_str()),
        );
        references::wakes_by_reference::<_, DBCluster>(controller, ctx, namespace, |u: &DBUser| {
            u.spec.db_cluster_ref.as_ref().map(|r| r.name.as_str())
        })
    }

    /// The database object, read once for the pass, placed where it is.
    async fn locate(&self, ctx: &Context) -> Result<Option<(Named, Arc<Location>)>, Error> {
        let Some(named) = named(self, ctx).await? else {
            return Ok(None);
        };
        let location = match &named {
            Named::Instance(db) => crate::managed::locate::locate(&**db, ctx).await?.location,
            Named::Cluster(c) => crate::managed::locate::locate(&**c, ctx).await?.location,
        };
        Ok(Some((named, location)))
    }

    async fn read(
        &self,
        ctx: &Context,
        at: &Option<(Named, Arc<Location>)>,
    ) -> Result<Facts, Error> {
        let namespace = self.namespace().unwrap_or_default();
        let secrets_api: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
        let database = match at {
            None => Database::Gone,
            Some((named, at)) => database(ctx, named, at, &secrets_api).await?,
        };
        let (password, clone_password) = password(self, &secrets_api).await?;
        let found = match (&database, &password) {
            (Database::Found(db), _) => read_user(self, ctx, db, &password).await,
            _ => None,
        };
        let (clone, pending_login) = match &database {
            Database::Found(db) => {
                let stored = (&password, clone_password.as_ref());
                super::rotation::read(self, ctx, db, stored).await
            }
            _ => (None, None),
        };
        let secret = match &self.spec.connection_secret {
            Some(c) => secrets::get(&secrets_api, &c.name).await?,
            None => None,
        };
        let previous = self.status.as_ref().and_then(|s| s.secret_readers.as_ref());
        let readers = match self.spec.auth {
            Some(UserAuth::Iam) => None,
            _ => {
                crate::database::readers::kube::read(ctx, &namespace, secret.as_ref(), previous)
                    .await?
            }
        };
        // Signed whatever the master login found, and while the database is not Ready.
        let token = match (database.known(), at) {
            (Some(db), Some((_, at))) if self.spec.auth == Some(UserAuth::Iam) => {
                let made = at.rds.auth_token(&db.host, db.port, &self.username()).await;
                Some(made.map_err(|e| e.message))
            }
            _ => None,
        };
        let intervals = ctx.locations.intervals();
        Ok(Facts {
            user: self.clone(),
            database,
            found,
            password,
            secret,
            readers,
            clone,
            clone_password,
            pending_login,
            roll_readers: ctx.rolls_readers_in(&namespace),
            hash_key: ctx.hash_key.clone(),
            ca_bundle: ctx.ca_bundle.as_deref().map(str::to_owned),
            token,
            token_refresh: ctx.iam_token_refresh,
            now: crate::duration::now(),
            epoch: chrono::Utc::now().timestamp(),
            busy: intervals.busy,
            settled: intervals.settled,
        })
    }

    fn plan(facts: &Facts) -> Plan {
        plan::plan(facts)
    }

    async fn act(
        &self,
        ctx: &Context,
        _: &Option<(Named, Arc<Location>)>,
        step: &Step,
    ) -> Result<Option<()>, Error> {
        match step {
            Step::AddFinalizer => set_finalizer(ctx, self, true).await?,
            Step::Claim(status) => patch_status(ctx, self, status).await?,
            Step::WritePasswords { base, clone } => {
                let namespace = self.namespace().unwrap_or_default();
                let api: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
                super::rotation::write_passwords(&api, self, (base, clone)).await?
            }
            Step::RemoveFinalizer => set_finalizer(ctx, self, false).await?,
            Step::Secret(step) => {
                let namespace = self.namespace().unwrap_or_default();
                let api: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
                crate::database::secret::act(&api, self, step).await?
            }
            Step::Sql(step, master) => {
                let login = Login {
                    engine: master.engine,
                    host: &master.host,
                    port: master.port,
                    user: &master.username,
                    password: &master.password,
                    database: &master.dbname,
                    ca_bundle: ctx.ca_bundle.as_deref(),
                };
                sql::run(&login, step).await.map_err(|f| match f {
                    Failure::Unreachable(why) => unreachable(why),
                    Failure::Refused(why) => refused(why),
                })?;
            }
        }
        Ok(None)
    }

    fn status(&self) -> Option<&DBUserStatus> {
        self.status.as_ref()
    }

    fn connection_write(step: &Step) -> Option<&str> {
        match step {
            Step::Secret(secret) => secret.connection(),
            _ => None,
        }
    }

    // A failure keeps whose the user is: the claim written before CREATE USER, or a user taken
    // over, stays this DBUser's (never the password's hash: a password not set is set again).
    crate::reported_status!(
        DBUserStatus,
        |previous: &mut DBUserStatus, planned: &DBUserStatus| {
            if planned.owner.is_some() {
                previous.owner = planned.owner.clone();
                previous.username = planned.username.clone();
                previous.database = planned.database.clone();
            }
        }
    );
}

/// The DBInstance or DBCluster of the namespace the user names, None when there is none.
async fn named(user: &DBUser, ctx: &Context) -> Result<Option<Named>, Error> {
    let namespace = user.namespace().unwrap_or_default();
    if let Some(r) = &user.spec.db_instance_ref {
        let api: Api<DBInstance> = Api::namespaced(ctx.client.clone(), &namespace);
        let found = api
            .get_opt(&r.name)
            .await
            .map_err(kube_err("get DBInstance"))?;
        return Ok(found.map(|db| Named::Instance(Box::new(db))));
    }
    if let Some(r) = &user.spec.db_cluster_ref {
        let api: Api<DBCluster> = Api::namespaced(ctx.client.clone(), &namespace);
        let found = api
            .get_opt(&r.name)
            .await
            .map_err(kube_err("get DBCluster"))?;
        return Ok(found.map(|c| Named::Cluster(Box::new(c))));
    }
    Ok(None)
}

/// The database as the plan needs it: Ready, its endpoint, its engine and master credentials; for
/// a secondary cluster of a global database, the primary's master user through the global writer
/// endpoint.
async fn database(
    ctx: &Context,
    named: &Named,
    at: &Location,
    api: &Api<Secret>,
) -> Result<Database, Error> {
    let (what, ready, mut endpoint, mut read, mut facts) = described(named);
    if let Named::Cluster(c) = named {
        // A global database's primary that cannot be read (its region away) is a fact the plan
        // decides on (an IAM user's token is still renewed), not a failed pass.
        let secondary = crate::dbcluster::global::secondary(ctx, c).await;
        match secondary.unwrap_or_else(|e| Some((Err(e.to_string()), PasswordRead::None))) {
            None => {}
            Some((Err(why), _)) => return Ok(Database::Unresolved(why, None)),
            Some((Ok(global), primary)) => {
                let Some(writer) = global.endpoint else {
                    let why = format!(
                        "GlobalCluster {} has no writer endpoint yet",
                        global.identifier
                    );
                    return Ok(Database::Unresolved(why, None));
                };
                let status = c.status.as_ref();
                facts.reader_host = status.and_then(|s| s.reader_endpoint.clone());
                endpoint = endpoint.map(|e| Endpoint {
                    address: writer,
                    port: e.port,
                });
                facts.master_username = global.master_username.unwrap_or_default();
                facts.dbname = global.database_name.unwrap_or_default();
                read = primary;
            }
        }
    }
    let engine = &facts.engine;
    if Engine::of(engine).is_none() {
        return Ok(Database::Unresolved(
            format!(
                "{what} runs {engine}: a DBUser makes users in MySQL, MariaDB, PostgreSQL and \
                 Aurora MySQL and PostgreSQL databases"
            ),
            None,
        ));
    }
    let why = format!("{what} is not Ready yet");
    let (Some(endpoint), true) = (endpoint.clone(), ready) else {
        // Its endpoint, when known: an IAM user's token is renewed for it meanwhile.
        let known = endpoint.map(|e| {
            Box::new(DatabaseFacts {
                host: e.address,
                port: e.port,
                master_password: Err(why.clone()),
                ..facts
            })
        });
        return Ok(Database::Unresolved(why, known));
    };
    facts.host = endpoint.address;
    facts.port = endpoint.port;
    // One that cannot be read (Secrets Manager away, say) is the plan's to wait on, as a missing
    // one is: a pass that fails here would renew no IAM user's token.
    facts.master_password =
        (master_password(named, at, api, read).await).unwrap_or_else(|e| Err(e.to_string()));
    Ok(Database::Found(Box::new(facts)))
}

/// The database object in words, whether it is Ready, its endpoint, how its master password is
/// read, and its facts (the endpoint and master password not filled in).
fn described(named: &Named) -> (String, bool, Option<Endpoint>, PasswordRead, DatabaseFacts) {
    let (what, ready, common, identifier, resource_id, read, spec) = match named {
        Named::Instance(db) => {
            let status = db.status.clone().unwrap_or_default();
            let spec = (&db.spec.engine, &db.spec.master_username, &db.spec.db_name);
            (
                format!("DBInstance {}", db.name_any()),
                (db.status.as_ref()).is_some_and(|s| references::ready(&**db, s)),
                status.common,
                status.db_instance_identifier,
                status.dbi_resource_id,
                credentials_of(&db.spec.password, &db.name_any()),
                (spec.0.clone(), spec.1.clone(), spec.2.clone()),
            )
        }
        Named::Cluster(c) => {
            let status = c.status.clone().unwrap_or_default();
            let spec = (
                &c.spec.engine,
                &c.spec.master_username,
                &c.spec.database_name,
            );
            (
                format!("DBCluster {}", c.name_any()),
                (c.status.as_ref()).is_some_and(|s| references::ready(&**c, s)),
                status.common,
                status.db_cluster_identifier,
                status.db_cluster_resource_id,
                crate::dbcluster::plan::credentials(c),
                (spec.0.as_str().to_owned(), spec.1.clone(), spec.2.clone()),
            )
        }
    };
    let (engine, master_username, dbname) = spec;
    let facts = DatabaseFacts {
        identifier: identifier.unwrap_or_default(),
        host: String::new(),
        port: 0,
        reader_host: None,
        engine,
        dbname: dbname.unwrap_or_default(),
        master_username: master_username.unwrap_or_default(),
        master_password: Err(String::new()),
        iam_enabled: common.iam_database_authentication_enabled,
        arn: common.arn,
        resource_id,
    };
    (what, ready, common.endpoint, read, facts)
}

/// The master user's password (a Secret's, or the one RDS manages in Secrets Manager).
async fn master_password(
    named: &Named,
    at: &Location,
    api: &Api<Secret>,
    read: PasswordRead,
) -> Result<Result<crate::sensitive::Sensitive, String>, Error> {
    let facts = match named {
        Named::Instance(db) => crate::database::password::password(&**db, at, api, read).await?,
        Named::Cluster(c) => crate::database::password::password(&**c, at, api, read).await?,
    };
    Ok(match facts {
        PasswordFacts::Referenced(found) => found,
        PasswordFacts::Managed(Some(password)) => Ok(password),
        PasswordFacts::Generated {
            existing: Some(password),
            ..
        } => Ok(password),
        _ => Err("the database's master password is not there yet".into()),
    })
}

/// The user's own password: the referenced Secret's, or the generated one; and with
/// passwordRotation, the clone's, from the generated one.
async fn password(
    user: &DBUser,
    api: &Api<Secret>,
) -> Result<(Password, Option<crate::sensitive::Sensitive>), Error> {
    let namespace = user.namespace().unwrap_or_default();
    if let Some(r) = &user.spec.password_secret_ref {
        let found = secrets::read_referenced(api, &namespace, &r.name, &r.key).await?;
        return Ok((Password::Referenced(found), None));
    }
    let secret = secrets::get(api, &password_secret(user)).await?;
    let ours = (secret.as_ref())
        .is_some_and(|s| crate::database::secret::controlled_by(&s.metadata, user));
    let value = |key| {
        (secret.as_ref())
            .filter(|_| ours)
            .and_then(|s| secrets::value_of(s, key))
    };
    let generated = Password::Generated {
        existing: value(secrets::GENERATED_KEY),
        exists: secret.is_some(),
        ours,
        candidate: crate::sensitive::Sensitive(crate::database::connection::generate_password()),
    };
    Ok((generated, value(super::plan::rotation::CLONE_KEY)))
}

/// The user and its privileges, read as the master user; and, for a user status does not say is
/// the DBUser's, whether the DBUser's password logs in as it.
async fn read_user(
    user: &DBUser,
    ctx: &Context,
    db: &DatabaseFacts,
    password: &Password,
) -> Option<Found> {
    let login = Login::master(db, ctx.ca_bundle.as_deref())?;
    let username = user.username();
    let databases = super::plan::databases(user, db);
    let observed = match sql::read(&login, &username, &databases).await {
        Ok(observed) => observed,
        Err(why) => return Some(Found::Unreachable(why)),
    };
    let ours = (user.status.as_ref()).and_then(|s| s.owner.as_deref()) == user.uid().as_deref();
    let own = match password {
        Password::Referenced(Ok(p))
        | Password::Generated {
            existing: Some(p), ..
        } => Some(p),
        _ => None,
    };
    let password_logs_in = match (&observed, ours, own) {
        (Some(_), false, Some(p)) => Some(
            sql::logs_in(&Login {
                user: &username,
                password: p,
                ..login
            })
            .await,
        ),
        _ => None,
    };
    Some(Found::User {
        user: observed,
        password_logs_in,
    })
}

/// A login that failed: the database is not reachable (retried).
fn unreachable(why: String) -> Error {
    Error::Database {
        reason: "DatabaseUnreachable",
        message: why,
    }
}

/// A statement the database refused.
fn refused(why: String) -> Error {
    Error::Database {
        reason: "SqlRefused",
        message: why,
    }
}

/// What another object, or a test, reads of a DBUser: its conditions, and the user's name.
impl references::Referable for DBUser {
    type Status = DBUserStatus;
    const LABEL: &'static str = "DBUser";
    fn status(&self) -> Option<&DBUserStatus> {
        self.status.as_ref()
    }
    fn conditions(
        status: &DBUserStatus,
    ) -> &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition] {
        &status.reported.conditions
    }
    fn rds_name(status: &DBUserStatus) -> Option<String> {
        status.username.clone()
    }
}
