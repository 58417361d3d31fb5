//! Integration tests: the real kube-apiserver and the RDS emulator, over the network.
//! Run them with `make test` (README), which starts the emulator; the control plane is started by
//! the harness in common/.

mod accounts;
mod activation;
mod bluegreen;
mod cluster_bluegreen;
mod cluster_endpoints;
mod cluster_snapshots;
mod clusters;
mod common;
mod connection;
mod emulation;
mod engines;
mod feed;
mod global_clusters;
mod global_failover;
mod health;
mod iam;
mod lifecycle;
mod maintenance;
mod migration;
mod observability;
mod optiongroups;
mod outage;
mod parametergroups;
mod presigned;
mod proxies;
mod replicas;
mod rotation;
mod rotation_users;
mod safety;
mod shards;
mod ship;
mod smoke;
mod snapshot_adoption;
mod snapshots;
mod subnetgroups;
mod takeover;
mod tenancy;
mod tls;
mod trust;
mod updates;
mod user_tokens;
mod users;
