//! The regions the AWS SDK's partitions name (aws, aws-cn, aws-us-gov, the ISO partitions and the
//! European Sovereign Cloud), as aws-sdk-rds embeds them (`partitions.json` in its endpoint
//! library, which it does not export): a region outside them is a typo the operator reports
//! without a call, where the SDK would resolve an endpoint for it (its partitions' patterns take
//! `eu-west-9`) and every call would fail on DNS, as an outage. A test holds the list to the SDK
//! this build uses; a region AWS opens after it needs a newer operator.

/// Every region, but the partitions' `*-global` pseudo-regions.
const KNOWN: &[&str] = &[
    "af-south-1",
    "ap-east-1",
    "ap-east-2",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-northeast-3",
    "ap-south-1",
    "ap-south-2",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-southeast-3",
    "ap-southeast-4",
    "ap-southeast-5",
    "ap-southeast-6",
    "ap-southeast-7",
    "ca-central-1",
    "ca-west-1",
    "eu-central-1",
    "eu-central-2",
    "eu-north-1",
    "eu-south-1",
    "eu-south-2",
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
    "il-central-1",
    "me-central-1",
    "me-south-1",
    "mx-central-1",
    "sa-east-1",
    "us-east-1",
    "us-east-2",
    "us-west-1",
    "us-west-2",
    "cn-north-1",
    "cn-northwest-1",
    "eusc-de-east-1",
    "us-iso-east-1",
    "us-iso-west-1",
    "us-isob-east-1",
    "us-isob-west-1",
    "eu-isoe-west-1",
    "us-isof-east-1",
    "us-isof-south-1",
    "us-gov-east-1",
    "us-gov-west-1",
];

/// Whether the SDK's partitions name this region.
pub fn known(region: &str) -> bool {
    KNOWN.contains(&region)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    /// aws-sdk-rds's embedded partitions.json, from the source cargo fetched for this build (the
    /// version Cargo.lock pins).
    fn sdk_partitions() -> serde_json::Value {
        let lock = include_str!("../../../../../Cargo.lock");
        let version = (lock.split("name = \"aws-sdk-rds\"\nversion = \"").nth(1))
            .and_then(|rest| rest.split('"').next())
            .expect("aws-sdk-rds in Cargo.lock");
        let home = std::env::var("CARGO_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").expect("HOME")).join(".cargo"));
        let registries = std::fs::read_dir(home.join("registry/src")).expect("cargo's sources");
        let source = (registries.flatten())
            .map(|r| {
                r.path()
                    .join(format!("aws-sdk-rds-{version}/src/endpoint_lib.rs"))
            })
            .find(|p| p.exists())
            .expect("aws-sdk-rds's source");
        let text = std::fs::read_to_string(source).expect("endpoint_lib.rs");
        let embedded = (text.split("new_from_json(b\"").nth(1))
            .and_then(|rest| rest.split("\").expect").next())
            .expect("the embedded partitions");
        serde_json::from_str(&embedded.replace("\\\\", "\\").replace("\\\"", "\""))
            .expect("partitions JSON")
    }

    #[test]
    fn the_known_regions_are_the_sdks_partitions() {
        let partitions = sdk_partitions();
        let mut sdk: Vec<String> = (partitions["partitions"].as_array().expect("partitions"))
            .iter()
            .flat_map(|p| p["regions"].as_object().expect("regions").keys().cloned())
            .filter(|r| !r.ends_with("-global"))
            .collect();
        sdk.sort();
        let mut ours: Vec<String> = super::KNOWN.iter().map(|r| r.to_string()).collect();
        ours.sort();
        assert_eq!(ours, sdk);
        assert!(super::known("eu-west-1") && !super::known("eu-west-9"));
    }
}
