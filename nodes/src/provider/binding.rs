//! What a user's own credentials are bound to: the provider as it was defined when the
//! user set them. Their row is kept under the catalog provider's name, which its admins
//! may point anywhere afterwards (turn an `ec2` provider into an `exec` plugin that logs
//! its input, or into another endpoint); the binding is how the change is noticed, and
//! the credentials are then not used until the user enters them again.
//!
//! The binding is a fingerprint (SHA-256) of the provider type and of the settings that
//! say where credentials go: for `ec2` its region and endpoint (the default endpoint
//! spelled out, so leaving it unsaid and naming AWS's are the same), which are also what
//! a node's record keeps; for every other type all its settings but the few that only
//! tune Corral ([`NOT_IDENTITY`]), because a plugin's settings are its own and any of
//! them may name where it sends what it gets.

use std::collections::BTreeMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{ProviderSettings, EC2_PROVIDER, USER_CREDENTIALS_SETTING};

/// Settings that change nothing about where credentials go.
const NOT_IDENTITY: &[&str] = &[USER_CREDENTIALS_SETTING, "timeout_s"];

pub use store::provider_credentials::CredentialBinding;

/// The binding of catalog provider `settings` of type `providertype`.
pub fn of(providertype: &str, settings: &ProviderSettings) -> CredentialBinding {
    if providertype == EC2_PROVIDER {
        let region = settings.setting(&["region", "aws_region"]).unwrap_or("");
        let endpoint = settings
            .setting(&["endpoint"])
            .map_or_else(|| super::ec2::default_endpoint(region), str::to_owned);
        return ec2(region, &endpoint);
    }
    let identity = settings
        .settings
        .iter()
        .filter(|(key, _)| !NOT_IDENTITY.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), canonical(value)))
        .collect();
    fingerprint(providertype, identity)
}

/// The binding of the provider named `provider` of `catalog`, if it has one.
pub fn of_catalog(catalog: &domain::catalog::Catalog, provider: &str) -> Option<CredentialBinding> {
    let found = catalog.provider(provider)?;
    let settings = super::provider_settings(catalog, provider);
    Some(of(&found.providertype, &settings))
}

/// The binding of an `ec2` provider in `region` at `endpoint` (what a node's record
/// keeps, so its delete and adopt check the same binding its create did).
pub fn ec2(region: &str, endpoint: &str) -> CredentialBinding {
    let identity = BTreeMap::from([
        ("endpoint".to_owned(), Value::from(endpoint)),
        ("region".to_owned(), Value::from(region)),
    ]);
    fingerprint(EC2_PROVIDER, identity)
}

fn fingerprint(providertype: &str, identity: BTreeMap<String, Value>) -> CredentialBinding {
    let described = serde_json::json!({
        "providertype": providertype,
        "identity": identity,
    });
    let digest = Sha256::digest(described.to_string().as_bytes());
    CredentialBinding::stored(hex::encode(digest))
}

/// `value` with every object's keys in sorted order (settings keep the order they were
/// written in, which says nothing about where credentials go).
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(object) => {
            let sorted: BTreeMap<&String, Value> = object
                .iter()
                .map(|(key, value)| (key, canonical(value)))
                .collect();
            Value::Object(
                sorted
                    .into_iter()
                    .map(|(key, value)| (key.clone(), value))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn provider(settings: Value) -> ProviderSettings {
        ProviderSettings {
            name: "aws1".to_owned(),
            settings: settings.as_object().unwrap().clone(),
        }
    }

    #[test]
    fn a_binding_follows_where_credentials_go_and_nothing_else() {
        let ec2_of = |settings: Value| of(EC2_PROVIDER, &provider(settings));
        let exec = |settings: Value| of("exec", &provider(settings));
        let base_ec2 = ec2_of(serde_json::json!({"region": "us-east-1"}));
        let base_exec = exec(serde_json::json!({"plugin": "openstack", "auth_url": "https://a"}));
        // (what changed, its binding, whether it is still the base's)
        let cases = [
            (
                "ec2: aws_region for region",
                ec2_of(serde_json::json!({"aws_region": "us-east-1"})),
                &base_ec2,
                true,
            ),
            (
                "ec2: AWS's endpoint named",
                ec2_of(
                    serde_json::json!({"region": "us-east-1", "endpoint": "https://ec2.us-east-1.amazonaws.com"}),
                ),
                &base_ec2,
                true,
            ),
            (
                "ec2: tuning settings",
                ec2_of(
                    serde_json::json!({"region": "us-east-1", "ssh_cidr": "10.0.0.0/8", "connect": "none", "instance_type": "t3.micro", "user_credentials": true}),
                ),
                &base_ec2,
                true,
            ),
            (
                "ec2: what a record keeps",
                ec2("us-east-1", "https://ec2.us-east-1.amazonaws.com"),
                &base_ec2,
                true,
            ),
            (
                "ec2: another region",
                ec2_of(serde_json::json!({"region": "eu-west-1"})),
                &base_ec2,
                false,
            ),
            (
                "ec2: another endpoint",
                ec2_of(
                    serde_json::json!({"region": "us-east-1", "endpoint": "http://127.0.0.1:5000"}),
                ),
                &base_ec2,
                false,
            ),
            (
                "ec2 turned exec",
                exec(serde_json::json!({"region": "us-east-1", "plugin": "echo"})),
                &base_ec2,
                false,
            ),
            (
                "exec: order and tuning",
                exec(
                    serde_json::json!({"timeout_s": 5, "auth_url": "https://a", "plugin": "openstack", "user_credentials": "true"}),
                ),
                &base_exec,
                true,
            ),
            (
                "exec: another plugin",
                exec(serde_json::json!({"plugin": "logger", "auth_url": "https://a"})),
                &base_exec,
                false,
            ),
            (
                "exec: another setting",
                exec(serde_json::json!({"plugin": "openstack", "auth_url": "https://evil"})),
                &base_exec,
                false,
            ),
            (
                "exec: a setting added",
                exec(
                    serde_json::json!({"plugin": "openstack", "auth_url": "https://a", "proxy": "x"}),
                ),
                &base_exec,
                false,
            ),
            (
                "exec turned docker",
                of(
                    "docker",
                    &provider(serde_json::json!({"plugin": "openstack", "auth_url": "https://a"})),
                ),
                &base_exec,
                false,
            ),
        ];
        for (what, binding, base, same) in cases {
            assert_eq!(&binding == base, same, "{what}");
        }
        let nested = |settings: Value| exec(settings);
        assert_eq!(
            nested(serde_json::json!({"plugin": "p", "x": {"a": 1, "b": 2}})),
            nested(serde_json::json!({"plugin": "p", "x": {"b": 2, "a": 1}})),
            "nested objects are compared by content"
        );
        assert_eq!(base_ec2.as_str().len(), 64);
    }
}
