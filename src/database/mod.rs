//! What the two database kinds, DBInstance and DBCluster, share, written once: the CRD parts of
//! their specs and statuses ([`choices`], [`parts`], [`status`]), the master password ([`password`]), the
//! connection Secret's keys and templates ([`connection`]) and the writes of their Secrets
//! ([`secret`]), the tenancy rules ([`tenancy`]), and the rules about snapshots, maintenance windows
//! and engine versions ([`snapshots`], [`window`], [`version`]), and blue/green deployments
//! ([`blue_green`]). Both kinds import it; it imports neither.

pub mod blue_green;
pub mod choices;
pub mod connection;
pub mod fields;
pub mod identifier;
pub mod parts;
pub mod password;
pub mod secret;
pub mod snapshots;
pub mod spec;
pub mod status;
pub mod tenancy;
pub mod version;
pub mod window;
