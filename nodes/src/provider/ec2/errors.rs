//! EC2's error codes in words: which ones mean the credentials are wrong, which mean
//! the account has no room, and everything else with the action that failed.
//!
//! Messages of rejected credentials are dropped: only the code is shown, so nothing the
//! service echoes about the request (or the key id) ends up in a task's log.

use super::api::ApiError;
use crate::provider::ProviderError;

/// Codes that mean the credentials themselves were refused (wrong, expired, revoked).
const REJECTED: &[&str] = &[
    "AuthFailure",
    "SignatureDoesNotMatch",
    "InvalidClientTokenId",
    "UnrecognizedClientException",
    "InvalidAccessKeyId",
    "ExpiredToken",
    "RequestExpired",
    "MissingAuthenticationToken",
];

/// Codes that mean the account or the zone cannot hold another instance now.
const CAPACITY: &[&str] = &[
    "InstanceLimitExceeded",
    "VcpuLimitExceeded",
    "InsufficientInstanceCapacity",
    "MaxSpotInstanceCountExceeded",
];

/// The credentials error, if `error` is one.
pub(super) fn rejected(provider: &str, error: &ApiError) -> Option<ProviderError> {
    let code = error.code()?;
    REJECTED
        .contains(&code)
        .then(|| ProviderError::CredentialsRejected {
            provider: provider.to_owned(),
            code: code.to_owned(),
        })
}

/// The `map_err` of a request for `node` that failed doing `action`.
pub(super) fn ec2_error<'a>(
    node: &'a str,
    provider: &'a str,
    action: &'static str,
) -> impl FnOnce(ApiError) -> ProviderError + 'a {
    move |error| {
        if let Some(rejected) = rejected(provider, &error) {
            return rejected;
        }
        if let ApiError::Service { code, message, .. } = &error {
            if CAPACITY.contains(&code.as_str()) {
                return ProviderError::Ec2Capacity {
                    node: node.to_owned(),
                    provider: provider.to_owned(),
                    code: code.clone(),
                    message: message.clone(),
                };
            }
        }
        ProviderError::Ec2 {
            node: node.to_owned(),
            provider: provider.to_owned(),
            action,
            detail: error.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(code: &str, message: &str) -> ApiError {
        ApiError::Service {
            status: 400,
            code: code.to_owned(),
            message: message.to_owned(),
        }
    }

    #[test]
    fn refused_credentials_name_the_provider_and_how_to_set_them_but_not_the_message() {
        let error = ec2_error("c-1", "aws1", "run the instance")(service(
            "SignatureDoesNotMatch",
            "AKIAEXAMPLE string to sign",
        ))
        .to_string();
        assert!(
            error.contains("credentials of provider aws1 were rejected"),
            "{error}"
        );
        assert!(error.contains("SignatureDoesNotMatch"), "{error}");
        assert!(
            error.contains("corral provider credentials set aws1 --stdin"),
            "{error}"
        );
        assert!(!error.contains("AKIAEXAMPLE"), "{error}");
    }

    #[test]
    fn quota_and_capacity_are_said_in_words() {
        let error = ec2_error("c-1", "aws1", "run the instance")(service(
            "VcpuLimitExceeded",
            "You have requested more vCPU capacity",
        ))
        .to_string();
        assert!(error.contains("has no room"), "{error}");
        assert!(error.contains("quota"), "{error}");
    }
}
