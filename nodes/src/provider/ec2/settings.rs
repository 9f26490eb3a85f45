//! A catalog provider's `ec2` settings, read and checked before anything is called:
//! the region (it becomes part of a host name), the endpoint (only AWS's own or one the
//! operator allowed, since the catalog is a tenant admin's), the CIDR SSH is opened to,
//! how Corral connects ([`Connect`]) and the instance type of hardware types without a
//! flavor.

use serde::{Deserialize, Serialize};

use crate::provider::{ProviderError, ProviderSettings};

const DEFAULT_SSH_CIDR: &str = "0.0.0.0/0";

/// How Corral reaches a provider's instances.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Connect {
    /// Over the instance's public address.
    #[default]
    PublicIp,
    /// Over its address in the VPC (Corral runs inside it, or is routed into it).
    PrivateIp,
    /// Never: instances are made and deleted, nothing runs on them.
    None,
}

impl Connect {
    fn parse(provider: &str, text: Option<&str>) -> Result<Self, ProviderError> {
        match text {
            None | Some("public-ip") => Ok(Self::PublicIp),
            Some("private-ip") => Ok(Self::PrivateIp),
            Some("none") => Ok(Self::None),
            Some(other) => Err(ProviderError::Ec2Settings {
                provider: provider.to_owned(),
                detail: format!(
                    "setting `connect` is {other:?}; it is `public-ip` (the default), \
                     `private-ip` or `none`"
                ),
            }),
        }
    }
}

/// AWS's own EC2 endpoint for `region`: where a provider that names no `endpoint` goes.
pub fn default_endpoint(region: &str) -> String {
    format!("https://ec2.{region}.amazonaws.com")
}

/// A catalog provider's settings, read and checked.
#[derive(Debug, Clone)]
pub(super) struct Settings {
    pub(super) provider: String,
    pub(super) region: String,
    pub(super) endpoint: String,
    pub(super) ssh_cidr: String,
    pub(super) connect: Connect,
    pub(super) instance_type: Option<String>,
}

impl Settings {
    /// `provider`'s settings. An `endpoint` must be one of `allowed_endpoints` (the
    /// operator's `--ec2-endpoint`): the catalog is a tenant admin's, and an endpoint
    /// of their choosing would have this server send requests wherever they point it
    /// (its own loopback services, a cloud's metadata address).
    pub(super) fn read(
        provider: &ProviderSettings,
        allowed_endpoints: &[String],
    ) -> Result<Self, ProviderError> {
        let name = provider.name.clone();
        let region = provider
            .setting(&["region", "aws_region"])
            .ok_or_else(|| ProviderError::Ec2Settings {
                provider: name.clone(),
                detail: "setting `region` (or `aws_region`) is missing from its provisioner; \
                         name the EC2 region, e.g. \"region\": \"us-east-1\""
                    .to_owned(),
            })?
            .to_owned();
        // The region becomes part of a host name.
        if region.len() > 32
            || !region
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(ProviderError::Ec2Settings {
                provider: name,
                detail: format!(
                    "setting `region` {region:?} is not a region name (like \"us-east-1\")"
                ),
            });
        }
        let endpoint = match provider.setting(&["endpoint"]) {
            Some(endpoint)
                if !allowed_endpoints.iter().any(|allowed| {
                    allowed.trim_end_matches('/') == endpoint.trim_end_matches('/')
                }) =>
            {
                return Err(ProviderError::Ec2Settings {
                    provider: name,
                    detail: format!(
                        "setting `endpoint` {endpoint:?} is not an endpoint this server may \
                         call: its operator allows EC2-compatible endpoints with \
                         `corral serve --ec2-endpoint URL` (CORRAL_EC2_ENDPOINTS)"
                    ),
                });
            }
            Some(endpoint) => {
                let parsed =
                    url::Url::parse(endpoint).map_err(|error| ProviderError::Ec2Settings {
                        provider: name.clone(),
                        detail: format!("setting `endpoint` {endpoint:?} is not a URL: {error}"),
                    })?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(ProviderError::Ec2Settings {
                        provider: name,
                        detail: format!("setting `endpoint` {endpoint:?} is not http(s)"),
                    });
                }
                endpoint.to_owned()
            }
            None => default_endpoint(&region),
        };
        Ok(Self {
            region,
            endpoint,
            ssh_cidr: provider
                .setting(&["ssh_cidr"])
                .unwrap_or(DEFAULT_SSH_CIDR)
                .to_owned(),
            connect: Connect::parse(&name, provider.setting(&["connect"]))?,
            instance_type: provider.setting(&["instance_type"]).map(str::to_owned),
            provider: name,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn settings_need_a_region_and_know_their_defaults() {
        let mut provider = ProviderSettings {
            name: "aws1".into(),
            settings: serde_json::Map::new(),
        };
        let error = Settings::read(&provider, &[]).unwrap_err().to_string();
        assert!(
            error.contains("provider aws1") && error.contains("`region`"),
            "{error}"
        );
        provider
            .settings
            .insert("region".into(), "x.evil.example/".into());
        assert!(
            Settings::read(&provider, &[]).is_err(),
            "a region is a name"
        );
        provider.settings.remove("region");
        provider
            .settings
            .insert("aws_region".into(), "eu-west-1".into());
        let settings = Settings::read(&provider, &[]).unwrap();
        assert_eq!(settings.endpoint, "https://ec2.eu-west-1.amazonaws.com");
        provider
            .settings
            .insert("endpoint".into(), "http://169.254.169.254/".into());
        let error = Settings::read(&provider, &[]).unwrap_err().to_string();
        assert!(error.contains("--ec2-endpoint"), "{error}");
        let allowed = ["http://169.254.169.254".to_owned()];
        assert_eq!(
            Settings::read(&provider, &allowed).unwrap().endpoint,
            "http://169.254.169.254/"
        );
        provider.settings.remove("endpoint");
        assert_eq!(settings.ssh_cidr, "0.0.0.0/0");
        assert_eq!(settings.connect, Connect::PublicIp);
        provider
            .settings
            .insert("connect".into(), "sideways".into());
        assert!(Settings::read(&provider, &[]).is_err());
    }
}
