//! Where hooks may send: `http(s)` URLs whose addresses are public, or inside a range
//! the operator allows (`corral serve --hook-allow CIDR`). A tenant admin must not make
//! the server call its own loopback services, the private network it sits on or a
//! cloud's metadata address. Checked when a hook is saved and again, on the addresses
//! the name resolves to then, before every call (a name may be re-pointed after it was
//! saved); the call goes to the checked address only. Which addresses are allowed is
//! `domain::network`'s decision; resolving and checking a URL is this module's.

use std::net::{IpAddr, SocketAddr};

pub use domain::network::{non_public_kind, BadCidr, Cidr, HookNetwork};

/// The flag that allows a range, as messages name it.
pub const ALLOW_FLAG: &str = "corral serve --hook-allow CIDR";

/// Why a hook URL may not be called.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlRefusal {
    #[error("{url:?} is not a URL: {reason}")]
    NotUrl { url: String, reason: String },
    #[error("{url:?} is not http:// or https://")]
    Scheme { url: String },
    #[error("{url:?} must not hold a user name or password")]
    Credentials { url: String },
    #[error("the host of {url:?} does not resolve: {reason}")]
    Unresolved { url: String, reason: String },
    #[error(
        "{url} goes to {address}, a {kind} address: hooks may only reach public addresses \
         unless the operator allows the range ({ALLOW_FLAG})"
    )]
    NotPublic {
        url: String,
        address: IpAddr,
        kind: &'static str,
    },
}

/// A checked URL: the address to call (one the host resolved to, and permitted).
#[derive(Debug, Clone)]
pub struct CheckedUrl {
    pub url: url::Url,
    /// The host name to pin to `address` (none for an address literal).
    pub domain: Option<String>,
    pub address: SocketAddr,
}

/// Parses `raw` and resolves its host; every address it resolves to must be permitted
/// by `network` (one bad address refuses the URL: which one a call would get is not
/// ours to choose). Returns the first.
pub async fn check_url(network: &HookNetwork, raw: &str) -> Result<CheckedUrl, UrlRefusal> {
    let url = url::Url::parse(raw.trim()).map_err(|error| UrlRefusal::NotUrl {
        url: raw.to_owned(),
        reason: error.to_string(),
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlRefusal::Scheme {
            url: raw.to_owned(),
        });
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlRefusal::Credentials {
            url: raw.to_owned(),
        });
    }
    let port = url.port_or_known_default().unwrap_or(443);
    let (domain, addresses) = match url.host() {
        Some(url::Host::Ipv4(v4)) => (None, vec![SocketAddr::new(IpAddr::V4(v4), port)]),
        Some(url::Host::Ipv6(v6)) => (None, vec![SocketAddr::new(IpAddr::V6(v6), port)]),
        Some(url::Host::Domain(name)) => {
            let resolved: Vec<SocketAddr> = tokio::net::lookup_host((name, port))
                .await
                .map_err(|error| UrlRefusal::Unresolved {
                    url: raw.to_owned(),
                    reason: error.to_string(),
                })?
                .collect();
            (Some(name.to_owned()), resolved)
        }
        None => {
            return Err(UrlRefusal::NotUrl {
                url: raw.to_owned(),
                reason: "it has no host".to_owned(),
            })
        }
    };
    let Some(first) = addresses.first().copied() else {
        return Err(UrlRefusal::Unresolved {
            url: raw.to_owned(),
            reason: "no addresses".to_owned(),
        });
    };
    for address in &addresses {
        if let Err(kind) = network.permits(address.ip()) {
            return Err(UrlRefusal::NotPublic {
                url: url.to_string(),
                address: address.ip(),
                kind,
            });
        }
    }
    Ok(CheckedUrl {
        url,
        domain,
        address: first,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn urls_are_checked_before_anything_is_called() {
        let strict = HookNetwork::default();
        let refusal = check_url(&strict, "http://127.0.0.1:9/hook")
            .await
            .unwrap_err();
        let message = refusal.to_string();
        assert!(message.contains("127.0.0.1"), "{message}");
        assert!(message.contains("--hook-allow"), "{message}");
        assert!(matches!(
            check_url(&strict, "ftp://example.com/").await,
            Err(UrlRefusal::Scheme { .. })
        ));
        assert!(matches!(
            check_url(&strict, "http://user:pw@8.8.8.8/").await,
            Err(UrlRefusal::Credentials { .. })
        ));
        // A name resolving to loopback is refused like the address.
        assert!(matches!(
            check_url(&strict, "http://localhost:9/").await,
            Err(UrlRefusal::NotPublic { .. }) | Err(UrlRefusal::Unresolved { .. })
        ));
        let loopback = HookNetwork::allowing(vec!["127.0.0.0/8".parse().unwrap()]);
        let checked = check_url(&loopback, "http://127.0.0.1:9/hook")
            .await
            .unwrap();
        assert_eq!(checked.address.to_string(), "127.0.0.1:9");
    }
}
