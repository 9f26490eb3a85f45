//! The Content-Security-Policy of every response, and the nonce that lets a page's own
//! inline scripts run under it.
//!
//! A page's inline scripts are Leptos's: the hydration bootstrap (`HydrationScripts`)
//! and the scripts that carry resolved resources to the browser. Allowing inline
//! scripts wholesale (`'unsafe-inline'`) would also run any script an injection slipped
//! into a page, which is what the policy is there to stop. So every request gets a fresh
//! random nonce ([`CspNonce`]): the page render reads it from the request
//! ([`provide_page_nonce`]) and Leptos writes it on each script it emits, and the page's
//! policy allows inline scripts carrying that nonce only. An injected script cannot
//! know it: it is new for every response and browsers hide it from the page's DOM.
//!
//! Responses that are not pages (the JSON API, server functions, plain-text errors) get
//! a fixed policy that allows nothing at all; the bundle's scripts and wasm get none
//! (see [`super::hardening::is_script_response`]).

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine as _;
use rand_core::{OsRng, RngCore};

/// The policy of every response that is neither a page nor a script: nothing may load,
/// run, frame it or be posted from it. A browser shown such a response (an API answer
/// opened in a tab) renders it inert.
pub const NON_PAGE_POLICY: &str =
    "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Random bytes in a nonce: 128 bits, as CSP asks for.
const NONCE_BYTES: usize = 16;

/// This request's nonce, in the request's extensions for the page render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CspNonce(Arc<str>);

impl CspNonce {
    /// A fresh nonce from the operating system's random source, in unpadded base64url
    /// (valid in a CSP source and in an HTML attribute without escaping).
    pub fn generate() -> Self {
        let mut bytes = [0u8; NONCE_BYTES];
        OsRng.fill_bytes(&mut bytes);
        Self(
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(bytes)
                .into(),
        )
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The policy of a page whose inline scripts carry `nonce`.
///
/// Scripts: this site's files and inline scripts carrying the nonce, nothing inline
/// otherwise (no inline event handlers, no `javascript:` URLs), plus compiling wasm.
/// Styles: this site's stylesheet, and inline `<style>` carrying the nonce (the API
/// reference page's); no style attributes, which the app's pages do not use. Nothing may
/// frame the pages, forms post only here, and `<base>` cannot redirect the pages'
/// relative URLs.
pub fn page_policy(nonce: &CspNonce) -> String {
    let nonce = nonce.as_str();
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self' 'nonce-{nonce}'; img-src 'self' data:; connect-src 'self'; \
         object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// What a response is, for its policy, by its `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// An HTML document: the pages.
    Page,
    /// A script or a wasm module, which a browser runs but never shows as a document.
    Script,
    /// Anything else: JSON, plain text, the stylesheet, the icon.
    Other,
}

impl Served {
    pub fn of(content_type: Option<&str>) -> Self {
        let Some(content_type) = content_type else {
            return Served::Other;
        };
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        match essence.as_str() {
            "text/html" => Served::Page,
            "text/javascript" | "application/wasm" => Served::Script,
            _ => Served::Other,
        }
    }
}

/// The policy a response gets, if any.
pub fn policy_for(served: Served, nonce: &CspNonce) -> Option<HeaderValue> {
    match served {
        // The nonce's alphabet and fixed text always make a valid header value; were it
        // not, the page would get the policy that runs nothing rather than none.
        Served::Page => Some(
            HeaderValue::from_str(&page_policy(nonce))
                .unwrap_or(HeaderValue::from_static(NON_PAGE_POLICY)),
        ),
        Served::Script => None,
        Served::Other => Some(HeaderValue::from_static(NON_PAGE_POLICY)),
    }
}

/// Gives the request a fresh nonce and its response the matching policy. A handler's
/// own policy wins.
pub async fn content_security_policy(mut request: Request, next: Next) -> Response {
    let nonce = CspNonce::generate();
    request.extensions_mut().insert(nonce.clone());
    let mut response = next.run(request).await;
    if response
        .headers()
        .contains_key(header::CONTENT_SECURITY_POLICY)
    {
        return response;
    }
    let served = Served::of(
        response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok()),
    );
    if let Some(policy) = policy_for(served, &nonce) {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    response
}

/// Hands this request's nonce to the Leptos render, which writes it on every inline
/// script of the page (`leptos::nonce`). Called in the pages' context, after the
/// integration put the request there; without a nonce in the request (no
/// [`content_security_policy`] layer) Leptos keeps its own, and the page's scripts
/// then match no policy and do not run: failing closed.
pub fn provide_page_nonce() {
    use leptos::prelude::{provide_context, use_context};
    let nonce = use_context::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<CspNonce>().cloned());
    if let Some(nonce) = nonce {
        provide_context(leptos::nonce::Nonce::from_value(nonce.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_told_apart_by_their_media_type() {
        for (content_type, served) in [
            (Some("text/html; charset=utf-8"), Served::Page),
            (Some("TEXT/HTML"), Served::Page),
            (Some("text/javascript; charset=utf-8"), Served::Script),
            (Some("application/wasm"), Served::Script),
            (Some("application/json"), Served::Other),
            (Some("text/plain; charset=utf-8"), Served::Other),
            (Some("text/css; charset=utf-8"), Served::Other),
            (Some("image/svg+xml"), Served::Other),
            (Some("text/html-sandboxed"), Served::Other),
            (None, Served::Other),
        ] {
            assert_eq!(Served::of(content_type), served, "{content_type:?}");
        }
    }

    #[test]
    fn pages_allow_inline_scripts_by_nonce_only() {
        let nonce = CspNonce::generate();
        let policy = policy_for(Served::Page, &nonce).unwrap();
        let policy = policy.to_str().unwrap();
        let directive = |name: &str| {
            policy
                .split(';')
                .map(str::trim)
                .find(|directive| directive.starts_with(&format!("{name} ")))
                .unwrap_or_else(|| panic!("no {name} in {policy}"))
                .to_owned()
        };
        assert_eq!(
            directive("script-src"),
            format!(
                "script-src 'self' 'nonce-{}' 'wasm-unsafe-eval'",
                nonce.as_str()
            )
        );
        assert_eq!(
            directive("style-src"),
            format!("style-src 'self' 'nonce-{}'", nonce.as_str())
        );
        assert!(!policy.contains("unsafe-inline"), "{policy}");
        assert!(!policy.contains("'unsafe-eval'"), "{policy}");
        assert_eq!(directive("frame-ancestors"), "frame-ancestors 'none'");
        assert_eq!(directive("object-src"), "object-src 'none'");
    }

    #[test]
    fn other_responses_get_a_fixed_policy_and_scripts_none() {
        let nonce = CspNonce::generate();
        assert_eq!(policy_for(Served::Other, &nonce).unwrap(), NON_PAGE_POLICY);
        assert!(!NON_PAGE_POLICY.contains(nonce.as_str()));
        assert_eq!(policy_for(Served::Script, &nonce), None);
    }

    #[test]
    fn nonces_are_fresh_and_header_safe() {
        let nonces: std::collections::HashSet<String> = (0..64)
            .map(|_| CspNonce::generate().as_str().to_owned())
            .collect();
        assert_eq!(nonces.len(), 64);
        for nonce in &nonces {
            // 16 bytes in unpadded base64: 22 characters of the URL-safe alphabet.
            assert_eq!(nonce.len(), 22, "{nonce}");
            assert!(
                nonce
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
                "{nonce}"
            );
        }
    }
}
