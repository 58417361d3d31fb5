//! Fights: a field the operator put back, and someone changed back again, [`FIGHT_LIMIT`] times
//! within [`FIGHT_WINDOW`] at one generation is no longer corrected (reported, reason `Fighting`)
//! until the spec changes. Pure; every kind that corrects drift keeps its corrections in status
//! (`Corrections`) and asks here.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

/// A field corrected this many times within [`FIGHT_WINDOW`] is no longer corrected.
pub const FIGHT_LIMIT: usize = 3;
/// The window of [`FIGHT_LIMIT`].
pub const FIGHT_WINDOW: chrono::TimeDelta = chrono::TimeDelta::hours(1);

/// The correction records of this generation (a spec change starts them again).
pub fn current(records: &[Corrections], generation: Option<i64>) -> Vec<Corrections> {
    let generation = generation.unwrap_or_default();
    (records.iter())
        .filter(|c| c.generation == generation)
        .cloned()
        .collect()
}

/// Which of `fields` were corrected [`FIGHT_LIMIT`] times within the window before `now`.
pub fn fighting<'a>(
    records: &[Corrections],
    fields: impl IntoIterator<Item = &'a str>,
    now: &str,
) -> Vec<&'a str> {
    let now = chrono::DateTime::parse_from_rfc3339(now).ok();
    (fields.into_iter())
        .filter(|field| {
            let times = records.iter().find(|c| c.field == *field);
            let recent = times.iter().flat_map(|c| c.times.iter()).filter(|t| {
                let t = chrono::DateTime::parse_from_rfc3339(t).ok();
                matches!((t, now), (Some(t), Some(now)) if now - t < FIGHT_WINDOW)
            });
            recent.count() >= FIGHT_LIMIT
        })
        .collect()
}

/// Adds this reconcile's corrections of `fields` at `now`, keeping the last [`FIGHT_LIMIT`] times
/// per field.
pub fn record<'a>(
    records: &mut Vec<Corrections>,
    fields: impl IntoIterator<Item = &'a str>,
    generation: Option<i64>,
    now: &str,
) {
    let generation = generation.unwrap_or_default();
    for field in fields {
        let at = match records.iter().position(|c| c.field == field) {
            Some(at) => at,
            None => {
                records.push(Corrections {
                    field: field.to_owned(),
                    generation,
                    times: Vec::new(),
                });
                records.len() - 1
            }
        };
        let times = &mut records[at].times;
        times.push(now.to_owned());
        let excess = times.len().saturating_sub(FIGHT_LIMIT);
        times.drain(..excess);
    }
    records.sort_by(|a, b| a.field.cmp(&b.field));
}

/// When a field was put back to the spec.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Corrections {
    /// Spec field name.
    pub field: String,
    /// The metadata.generation the corrections were made at.
    pub generation: i64,
    /// When (RFC 3339), the last three at most.
    #[serde(default)]
    pub times: Vec<String>,
}
