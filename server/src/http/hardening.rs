//! What every request and response passes through before any handler: who the client
//! is behind a trusted reverse proxy, a refusal of cross-site writes, and the browser
//! security headers of every response.
//!
//! Cross-site writes: pages and server functions authenticate with the session cookie,
//! which a browser attaches to a form another site posts. Every form of a signed-in
//! user carries a CSRF token, but the sign-in form cannot (there is no session yet),
//! so a hostile page could sign a visitor into the attacker's account. Browsers say
//! where a request comes from (`Origin`, else `Referer`); a state-changing request
//! that says it comes from another origin is refused whatever it targets. Clients
//! that send neither (the CLI, scripts) are not browsers, and so are no CSRF vector.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use app::session::ClientIp;
use axum::extract::{ConnectInfo, Request};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Reverse proxies whose `X-Forwarded-For` is believed.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(pub Arc<[IpAddr]>);

impl TrustedProxies {
    /// The client's address: the peer, or, when the peer is a trusted proxy, the
    /// nearest address in `X-Forwarded-For` that is not a trusted proxy. Entries are
    /// read from the right, because a client can write any entries to the left.
    pub fn client_ip(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.0.contains(&peer) {
            return peer;
        }
        let forwarded = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .collect::<Vec<_>>();
        let mut client = peer;
        for entry in forwarded.into_iter().rev() {
            let Ok(address) = entry.parse::<IpAddr>() else {
                // A malformed entry ends what can be believed.
                break;
            };
            client = address;
            if !self.0.contains(&address) {
                break;
            }
        }
        client
    }
}

/// Puts the client's address ([`ClientIp`]) into the request for throttling and audit.
pub async fn resolve_client_ip(
    axum::extract::State(proxies): axum::extract::State<TrustedProxies>,
    mut request: Request,
    next: Next,
) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip());
    if let Some(peer) = peer {
        let client = proxies.client_ip(peer, request.headers());
        request
            .extensions_mut()
            .insert(ClientIp(client.to_string()));
    }
    next.run(request).await
}

/// The `scheme://host[:port]` a browser says the request comes from, if it says.
fn claimed_origin(headers: &HeaderMap) -> Option<String> {
    let text = |name| {
        headers
            .get(name)
            .and_then(|value: &HeaderValue| value.to_str().ok())
    };
    text(header::ORIGIN)
        .map(str::to_owned)
        .or_else(|| text(header::REFERER).map(str::to_owned))
}

/// Whether `origin` (an `Origin` or `Referer` value) names the host this request went to.
fn is_same_origin(origin: &str, host: Option<&str>) -> bool {
    let (Ok(url), Some(host)) = (url::Url::parse(origin), host) else {
        // "null" (sandboxed frames, some redirects) and garbage are not this site.
        return false;
    };
    let Some(origin_host) = url.host_str() else {
        return false;
    };
    let authority = match url.port() {
        Some(port) => format!("{origin_host}:{port}"),
        None => origin_host.to_owned(),
    };
    authority.eq_ignore_ascii_case(host)
}

/// Refuses state-changing requests a browser says come from another site.
pub async fn refuse_cross_site_writes(request: Request, next: Next) -> Response {
    if !request.method().is_safe() {
        if let Some(origin) = claimed_origin(request.headers()) {
            let host = request
                .headers()
                .get(header::HOST)
                .and_then(|value| value.to_str().ok());
            if !is_same_origin(&origin, host) {
                return (
                    StatusCode::FORBIDDEN,
                    [(header::CONTENT_TYPE, "application/json")],
                    serde_json::json!({
                        "error": "forbidden",
                        "message": "cross-site request refused: this form or call must come from this site's own pages",
                    })
                    .to_string(),
                )
                    .into_response();
            }
        }
    }
    next.run(request).await
}

/// Whether `response` is a script or a wasm module, which a browser runs or compiles but
/// never shows as a document: the document-only headers (the content security policy,
/// framing, referrer policy) do nothing on it. Left off, they no longer make up a tenth
/// of the bytes of the bundle's small chunks. `nosniff` stays on every response.
pub fn is_script_response<B>(response: &axum::http::Response<B>) -> bool {
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok());
    super::csp::Served::of(content_type) == super::csp::Served::Script
}

/// The browser security headers every response carries besides its content security
/// policy ([`super::csp`], which depends on the response): a handler's own win; scripts
/// carry only `nosniff`, see [`is_script_response`]. Nothing may frame the pages.
pub fn security_headers() -> [(header::HeaderName, HeaderValue); 3] {
    [
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        ),
    ]
}

/// `Strict-Transport-Security` for a server that serves HTTPS itself: a browser that
/// has seen it goes to this host only over HTTPS for a year, so a network attacker
/// cannot downgrade a later visit (or a typed `http://` address) to plain HTTP and read
/// the session cookie or rewrite the pages. Not `includeSubDomains`: other hosts under
/// Corral's domain are not Corral's to commit. Never sent over plain HTTP, where
/// browsers ignore it and a proxy in front may be what serves HTTPS.
pub const STRICT_TRANSPORT_SECURITY: &str = "max-age=31536000";

/// `router` with [`STRICT_TRANSPORT_SECURITY`] on every response, for HTTPS.
pub fn with_strict_transport_security(router: axum::Router) -> axum::Router {
    router.layer(tower_http::set_header::SetResponseHeaderLayer::overriding(
        header::STRICT_TRANSPORT_SECURITY,
        HeaderValue::from_static(STRICT_TRANSPORT_SECURITY),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let proxy: IpAddr = "10.0.0.2".parse().unwrap();
        let proxies = TrustedProxies(Arc::from([proxy]));
        let forwarded = headers(&[("x-forwarded-for", "6.6.6.6, 203.0.113.7")]);
        assert_eq!(
            proxies.client_ip(proxy, &forwarded).to_string(),
            "203.0.113.7",
            "the entry the proxy added, not the one the client wrote"
        );
        let stranger: IpAddr = "198.51.100.1".parse().unwrap();
        assert_eq!(proxies.client_ip(stranger, &forwarded), stranger);
        assert_eq!(proxies.client_ip(proxy, &HeaderMap::new()), proxy);
        let garbage = headers(&[("x-forwarded-for", "not-an-ip")]);
        assert_eq!(proxies.client_ip(proxy, &garbage), proxy);
    }

    #[test]
    fn same_origin_compares_host_and_port() {
        assert!(is_same_origin(
            "http://127.0.0.1:8080",
            Some("127.0.0.1:8080")
        ));
        assert!(is_same_origin(
            "http://127.0.0.1:8080/login?next=/",
            Some("127.0.0.1:8080")
        ));
        assert!(is_same_origin(
            "https://corral.example",
            Some("corral.example")
        ));
        assert!(!is_same_origin(
            "http://evil.example",
            Some("127.0.0.1:8080")
        ));
        assert!(!is_same_origin(
            "http://127.0.0.1:8081",
            Some("127.0.0.1:8080")
        ));
        assert!(!is_same_origin("null", Some("127.0.0.1:8080")));
        assert!(!is_same_origin("http://127.0.0.1:8080", None));
    }
}
