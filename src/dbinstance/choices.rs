//! The DBInstance's enumerated choices beside its policies: the storage type, and what deletion
//! (the user's, or one outside the operator) does. Doc comments here become `kubectl explain`
//! text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// RDS storage types.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StorageType {
    Standard,
    Gp2,
    Gp3,
    Io1,
    Io2,
}

impl StorageType {
    pub fn as_str(self) -> &'static str {
        match self {
            StorageType::Standard => "standard",
            StorageType::Gp2 => "gp2",
            StorageType::Gp3 => "gp3",
            StorageType::Io1 => "io1",
            StorageType::Io2 => "io2",
        }
    }
}

/// What deleting the DBInstance does to the RDS instance.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum DeletionPolicy {
    /// Delete the RDS instance after a final snapshot.
    #[default]
    Snapshot,
    /// Leave the RDS instance running; only the DBInstance goes.
    Retain,
    /// Delete the RDS instance without a final snapshot.
    Delete,
}

/// What to do when the RDS instance is deleted outside the operator.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum OutOfBandDeletionPolicy {
    /// Restore from the newest snapshot of the identifier; with none, report and wait.
    #[default]
    Restore,
    /// Restore from the newest snapshot; with none, create a new, empty instance.
    RestoreOrCreateEmpty,
}
