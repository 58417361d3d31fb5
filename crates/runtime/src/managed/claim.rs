//! Whose RDS resource of an object's name is, and whether the object may take it over: the rule
//! of the group-shaped kinds (a DBSnapshot's adoption). Pure, table-tested below.
//!
//! - Tagged for this object (its uid): its own.
//! - Tagged for an object of another namespace: never touched, whatever grants say.
//! - Let go by an object of this namespace and this name (deletionPolicy Retain tags it
//!   rds.operator.rs/retained): taken back without asking; the object that let it go is gone, as
//!   no two objects of a kind share a namespace and a name.
//! - Tagged with the ownership tags its source carries (RDS copied an instance's tags to a
//!   snapshot of it, copyTagsToSnapshot), of this namespace: the namespace's own data, set for no
//!   object of this kind; taken over when the object asks, with no grant needed.
//! - Tagged for another object of this namespace: never touched.
//! - Untagged: taken over only when the object asks (adoptionPolicy) and a platform admin granted
//!   it to this namespace (its tag rds.operator.rs/adoptable-by, or the operator's
//!   --grant-adoption), as for instances.

use std::collections::BTreeMap;

use crate::crd::{ADOPTABLE_BY_TAG, OWNER_NAME_TAG, OWNER_TAG, RETAINED_TAG};

use super::tags::{listed, of_another_namespace, owned_by, tag_grants};

/// What an object may do with RDS's resource of its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// It carries this object's ownership tags.
    Ours,
    /// Take it over: add the ownership tags (and drop the retained tag).
    Adopt,
    /// Leave it alone: the reason and the message.
    Refused(&'static str, String),
}

/// Who asks: the object's uid, namespace and name, whether its spec asks for adoption, and the
/// namespaces the operator's --grant-adoption lists.
pub struct Claimant<'a> {
    pub uid: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub asked: bool,
    pub granted: &'a [String],
    /// The ownership tags of the resource's source (the instance a snapshot was taken of), read
    /// while it exists.
    pub source_tags: Option<&'a BTreeMap<String, String>>,
}

/// The rule above, for the resource RDS has (`what` names it in messages: "DB snapshot coffee";
/// `field` is the spec field that names it).
pub fn claim(who: &Claimant, tags: &BTreeMap<String, String>, what: &str, field: &str) -> Claim {
    if owned_by(tags, who.uid) {
        return Claim::Ours;
    }
    let in_use = |whose: &str| {
        Claim::Refused(
            "NameInUse",
            format!("a {what} already exists and is managed by {whose}; choose another {field}"),
        )
    };
    if of_another_namespace(tags, who.namespace) {
        return in_use("an object of another namespace");
    }
    if tags.contains_key(OWNER_TAG) {
        let this_name = format!("{}/{}", who.namespace, who.name);
        if tags.contains_key(RETAINED_TAG) && tags.get(OWNER_NAME_TAG) == Some(&this_name) {
            return Claim::Adopt;
        }
        let inherited = (who.source_tags).and_then(|t| t.get(OWNER_TAG)) == tags.get(OWNER_TAG);
        if inherited && who.asked {
            return Claim::Adopt;
        }
        if inherited {
            return Claim::Refused(
                "NameInUse",
                format!(
                    "a {what} of this namespace's data already exists (with the tags of its \
                     source); choose another {field}, or set adoptionPolicy: Adopt to take it over"
                ),
            );
        }
        return in_use("another object of this namespace");
    }
    let granted =
        listed(who.granted, who.namespace) || tag_grants(tags, ADOPTABLE_BY_TAG, who.namespace);
    match (who.asked, granted) {
        (false, _) => Claim::Refused(
            "NameInUse",
            format!(
                "a {what} already exists and is not managed by this object; choose another \
                 {field}, or set adoptionPolicy: Adopt to take it over"
            ),
        ),
        (true, false) => Claim::Refused(
            "NotGranted",
            format!(
                "a {what} already exists and nothing manages it, but nothing grants this \
                 namespace its adoption: a platform admin tags it {ADOPTABLE_BY_TAG} with this \
                 namespace's name, or lists the namespace in the operator's --grant-adoption"
            ),
        ),
        (true, true) => Claim::Adopt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::managed::tags::owner_tags;

    fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        (pairs.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// shop/coffee, uid-1.
    fn who(asked: bool, granted: &[String]) -> Claimant<'_> {
        Claimant {
            uid: "uid-1",
            namespace: "shop",
            name: "coffee",
            asked,
            granted,
            source_tags: None,
        }
    }

    #[test]
    fn a_resource_is_taken_over_only_when_asked_and_granted_and_never_from_another_owner() {
        let granted: &[String] = &["shop".to_owned()];
        let retained = |ns_name: &str| {
            let mut t = owner_tags("uid-0", "shop", "x");
            t.insert(OWNER_NAME_TAG.into(), ns_name.into());
            t.insert(RETAINED_TAG.into(), "2026-12-01T00:00:00Z".into());
            t
        };
        let grant_tag = tags(&[(ADOPTABLE_BY_TAG, "bar shop")]);
        let instance = owner_tags("uid-db", "shop", "db");
        let theirs = owner_tags("uid-db", "bar", "db");
        let table: Vec<(&str, Claimant, BTreeMap<String, String>, &str)> = vec![
            (
                "its own",
                who(false, &[]),
                owner_tags("uid-1", "shop", "coffee"),
                "Ours",
            ),
            (
                "untagged, not asked",
                who(false, granted),
                tags(&[]),
                "NameInUse",
            ),
            (
                "untagged, asked, not granted",
                who(true, &[]),
                tags(&[]),
                "NotGranted",
            ),
            (
                "untagged, asked, granted by the operator",
                who(true, granted),
                tags(&[]),
                "Adopt",
            ),
            (
                "untagged, asked, granted by its tag",
                who(true, &[]),
                grant_tag.clone(),
                "Adopt",
            ),
            (
                "a grant tag naming another namespace",
                who(true, &[]),
                tags(&[(ADOPTABLE_BY_TAG, "bar shops")]),
                "NotGranted",
            ),
            (
                "another namespace's, asked and granted: never",
                who(true, granted),
                owner_tags("uid-9", "bar", "coffee"),
                "NameInUse",
            ),
            (
                "another namespace's, even retained under this name: never",
                who(true, granted),
                retained("bar/coffee"),
                "NameInUse",
            ),
            (
                "another object's of this namespace, asked and granted: never",
                who(true, granted),
                owner_tags("uid-9", "shop", "tea"),
                "NameInUse",
            ),
            (
                "let go by an object of this namespace and this name: taken back unasked",
                who(false, &[]),
                retained("shop/coffee"),
                "Adopt",
            ),
            (
                "let go by an object of another name: not",
                who(true, granted),
                retained("shop/tea"),
                "NameInUse",
            ),
            (
                "the tags of its source instance, of this namespace, asked: no grant needed",
                Claimant {
                    source_tags: Some(&instance),
                    ..who(true, &[])
                },
                instance.clone(),
                "Adopt",
            ),
            (
                "the tags of its source instance, not asked",
                Claimant {
                    source_tags: Some(&instance),
                    ..who(false, &[])
                },
                instance.clone(),
                "NameInUse",
            ),
            (
                "an object's tags that its source does not carry, asked and granted: never",
                Claimant {
                    source_tags: Some(&instance),
                    ..who(true, granted)
                },
                owner_tags("uid-9", "shop", "tea"),
                "NameInUse",
            ),
            (
                "the tags of an instance of another namespace: never",
                Claimant {
                    source_tags: Some(&theirs),
                    ..who(true, granted)
                },
                theirs.clone(),
                "NameInUse",
            ),
        ];
        for (name, who, tags, want) in table {
            let got = match claim(&who, &tags, "DB snapshot coffee", "dbSnapshotIdentifier") {
                Claim::Ours => "Ours",
                Claim::Adopt => "Adopt",
                Claim::Refused(reason, _) => reason,
            };
            assert_eq!(got, want, "{name}");
        }
    }
}
