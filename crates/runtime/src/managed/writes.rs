//! Read your own writes: the resourceVersion of each of the operator's writes per object, which a
//! reconcile waits for its cached copy to reach. Shared by every kind.

/// The resourceVersion of this operator's last write of each object (by uid), so a reconcile never
/// plans from a cached copy older than what it wrote itself: the watch cache lags the API server,
/// and a reconcile queued while the previous one wrote status would otherwise see the object as it
/// was before (for a restore, no `status.restore`, read as an instance created and never recorded;
/// the status written from that drops what the write before it recorded). This is Kubernetes
/// 1.36's staleness mitigation for controllers (KEP-5647), with resourceVersions compared as
/// integers as KEP-5504 allows; one that is not an integer is never called stale. kube-runtime
/// has no such store, so it is written here, once, for every kind.
#[derive(Debug, Default)]
pub struct Writes(std::sync::Mutex<std::collections::HashMap<String, u128>>);

impl Writes {
    /// Records a write of the object `uid` that left it at `resource_version`.
    pub fn wrote(&self, uid: &str, resource_version: Option<&str>) {
        let Some(written) = resource_version.and_then(|v| v.parse::<u128>().ok()) else {
            return;
        };
        let mut map = crate::lock(&self.0);
        let entry = map.entry(uid.to_owned()).or_default();
        *entry = (*entry).max(written);
    }

    /// Forgets the object: it is let go of.
    pub fn forget(&self, uid: &str) {
        crate::lock(&self.0).remove(uid);
    }

    /// Whether this copy of the object is older than our last write of it. A copy that has caught
    /// up ends the wait for that write.
    pub fn behind(&self, meta: &kube::api::ObjectMeta) -> bool {
        let uid = meta.uid.as_deref().unwrap_or_default();
        let mut map = crate::lock(&self.0);
        let Some(&written) = map.get(uid) else {
            return false;
        };
        let seen = (meta.resource_version.as_deref()).and_then(|v| v.parse::<u128>().ok());
        match seen {
            Some(seen) if seen < written => true,
            _ => {
                map.remove(uid);
                false
            }
        }
    }
}

/// How long a reconcile that found the cache behind our own write waits before it looks again;
/// the watch event of that write normally wakes it sooner.
pub const CACHE_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

#[cfg(test)]
mod tests {
    use super::Writes;
    use kube::api::ObjectMeta;

    fn copy(uid: &str, resource_version: &str) -> ObjectMeta {
        ObjectMeta {
            uid: Some(uid.into()),
            resource_version: Some(resource_version.into()),
            ..Default::default()
        }
    }

    #[test]
    fn a_copy_older_than_our_write_is_behind_until_the_cache_catches_up() {
        let writes = Writes::default();
        assert!(
            !writes.behind(&copy("a", "5")),
            "nothing written: never behind"
        );
        writes.wrote("a", Some("100"));
        writes.wrote("a", Some("99"));
        // (copy, behind): compared as integers, not as strings ("99" > "100" as text).
        let rows = [("99", true), ("100", false), ("100", false), ("99", false)];
        for (i, (version, behind)) in rows.into_iter().enumerate() {
            assert_eq!(
                writes.behind(&copy("a", version)),
                behind,
                "row {i}: {version}"
            );
        }
        assert!(!writes.behind(&copy("b", "1")), "another object");
        // A resourceVersion that is no integer is never called stale.
        writes.wrote("c", Some("10"));
        assert!(!writes.behind(&copy("c", "opaque")));
        writes.wrote("d", Some("not-a-number"));
        assert!(!writes.behind(&copy("d", "1")));
        // Let go of: forgotten.
        writes.wrote("e", Some("10"));
        writes.forget("e");
        assert!(!writes.behind(&copy("e", "1")));
    }
}
