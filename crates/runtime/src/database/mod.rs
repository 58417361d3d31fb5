//! What the two database kinds, DBInstance and DBCluster, share, written once: the CRD parts of
//! their specs and statuses ([`choices`], [`parts`], [`spec`], [`status`]), the steps of their act
//! and the act of the shared ones ([`step`]), the master password ([`password`]), the connection
//! Secret's keys and templates ([`connection`]) and the writes of their Secrets ([`secret`]) and the rolls of the Secrets' readers ([`readers`]), the
//! tenancy rules ([`tenancy`]), the rules about snapshots, maintenance windows and engine versions
//! ([`snapshots`], [`window`], [`version`]), and blue/green deployments: their states and calls
//! ([`blue_green`]), when a database runs ([`activation`]), and the planning rules both kinds
//! follow over the steps ([`rules`]). Both kinds import it; it imports neither.

pub mod activation;
pub mod alarms;
pub mod blue_green;
pub mod choices;
pub mod connection;
pub mod fields;
pub mod health;
pub mod identifier;
pub mod parts;
pub mod password;
pub mod readers;
pub mod rules;
pub mod secret;
pub mod shard_group;
pub mod snapshots;
pub mod spec;
pub mod status;
pub mod step;
pub mod tenancy;
pub mod version;
pub mod window;
