//! Checking an ID token: a pure function of the token, the issuer's keys (JWKS), what
//! the sign-in expects (issuer, client id, nonce) and the time, so every refusal is
//! unit-tested by table with keys made in the test.
//!
//! Only asymmetric signatures are accepted (RSA, RSA-PSS, ECDSA, EdDSA): `none` and
//! the HMAC algorithms would let whoever knows the client secret (or nobody) sign. The
//! key is the JWKS entry named by the token's `kid` (or the set's only key when the
//! token names none); a `kid` the set does not hold is [`TokenError::UnknownKey`], on
//! which the caller fetches the issuer's keys again once (key rotation).

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

pub use engine::accounts::constant_time_eq;

/// How far the issuer's clock may be from ours, in seconds.
pub const CLOCK_SKEW_SECS: i64 = 60;

/// What the sign-in expects of the token.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// The issuer's identifier, exactly as its discovery document gives it.
    pub issuer: &'a str,
    /// Our client id: the token's audience.
    pub client_id: &'a str,
    /// The nonce this browser's sign-in sent with its authorization request.
    pub nonce: &'a str,
    /// Now, in Unix seconds.
    pub now_secs: i64,
}

/// The claims Corral reads from a valid ID token.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct IdClaims {
    pub iss: String,
    /// The user's stable id at the issuer.
    #[serde(default)]
    pub sub: String,
    pub exp: i64,
    #[serde(default)]
    pub nonce: Option<String>,
    #[serde(default)]
    pub azp: Option<String>,
    /// Everything else (`preferred_username`, `email`, the group claim...).
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

/// Why a token was refused. The texts name the problem and never hold the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("the ID token is not a well-formed JWT")]
    Malformed,
    #[error("the ID token is signed with {0}, which Corral does not accept")]
    Algorithm(String),
    #[error("the ID token names a signing key ({kid}) the issuer does not publish")]
    UnknownKey { kid: String },
    #[error("the ID token's signature does not verify with the issuer's key")]
    Signature,
    #[error("the ID token was issued by another issuer")]
    Issuer,
    #[error("the ID token is meant for another client")]
    Audience,
    #[error("the ID token's nonce is not this sign-in's")]
    Nonce,
    #[error("the ID token has expired")]
    Expired,
    #[error("the ID token lacks the {0} claim")]
    MissingClaim(String),
}

const ACCEPTED: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Checks `token` (signature, issuer, audience, nonce, expiry) and returns its claims.
pub fn validate(
    token: &str,
    keys: &JwkSet,
    expected: Expected<'_>,
) -> Result<IdClaims, TokenError> {
    let header = jsonwebtoken::decode_header(token).map_err(|_| TokenError::Malformed)?;
    if !ACCEPTED.contains(&header.alg) {
        return Err(TokenError::Algorithm(format!("{:?}", header.alg)));
    }
    let jwk = signing_key(keys, header.kid.as_deref())?;
    if let Some(key_alg) = jwk.common.key_algorithm {
        // A key published for one algorithm is used with that one only.
        if format!("{key_alg:?}") != format!("{:?}", header.alg) {
            return Err(TokenError::Algorithm(format!("{:?}", header.alg)));
        }
    }
    let key = DecodingKey::from_jwk(jwk).map_err(|_| TokenError::Signature)?;
    let mut validation = Validation::new(header.alg);
    validation.algorithms = vec![header.alg];
    validation.set_issuer(&[expected.issuer]);
    validation.set_audience(&[expected.client_id]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    // Expiry is checked below against the given time, so tests can set the clock.
    validation.validate_exp = false;
    validation.validate_nbf = false;
    let data = jsonwebtoken::decode::<IdClaims>(token, &key, &validation).map_err(|error| {
        use jsonwebtoken::errors::ErrorKind;
        match error.kind() {
            ErrorKind::InvalidSignature
            | ErrorKind::InvalidEcdsaKey
            | ErrorKind::InvalidRsaKey(_) => TokenError::Signature,
            ErrorKind::InvalidIssuer => TokenError::Issuer,
            ErrorKind::InvalidAudience => TokenError::Audience,
            ErrorKind::InvalidAlgorithm => TokenError::Algorithm(format!("{:?}", header.alg)),
            ErrorKind::MissingRequiredClaim(claim) => TokenError::MissingClaim(claim.clone()),
            _ => TokenError::Malformed,
        }
    })?;
    let claims = data.claims;
    if claims.sub.is_empty() {
        return Err(TokenError::MissingClaim("sub".to_owned()));
    }
    if claims.exp + CLOCK_SKEW_SECS < expected.now_secs {
        return Err(TokenError::Expired);
    }
    // Several audiences: the authorized party must be us (OpenID Connect Core 3.1.3.7).
    if claims
        .azp
        .as_deref()
        .is_some_and(|azp| azp != expected.client_id)
    {
        return Err(TokenError::Audience);
    }
    let nonce_matches = claims
        .nonce
        .as_deref()
        .is_some_and(|nonce| constant_time_eq(nonce.as_bytes(), expected.nonce.as_bytes()));
    if !nonce_matches {
        return Err(TokenError::Nonce);
    }
    Ok(claims)
}

/// The JWKS entry that signed a token naming `kid`.
fn signing_key<'a>(keys: &'a JwkSet, kid: Option<&str>) -> Result<&'a Jwk, TokenError> {
    match kid {
        Some(kid) => keys.find(kid).ok_or_else(|| TokenError::UnknownKey {
            kid: kid.to_owned(),
        }),
        None => match keys.keys.as_slice() {
            [only] => Ok(only),
            _ => Err(TokenError::UnknownKey {
                kid: "(none named)".to_owned(),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine as _;
    use jsonwebtoken::{EncodingKey, Header};
    use ring::rand::SystemRandom;
    use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
    use serde_json::json;

    use super::*;

    const ISSUER: &str = "http://127.0.0.1:4000";
    const CLIENT: &str = "corral";
    const NONCE: &str = "n-0S6_WzA2Mj";
    const NOW: i64 = 1_800_000_000;

    /// A P-256 key made for the test: what signs, and its public JWK.
    struct TestKey {
        encoding: EncodingKey,
        jwk: serde_json::Value,
    }

    fn test_key(kid: &str) -> TestKey {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        // An uncompressed point: 0x04, then x and y of 32 bytes each.
        let point = pair.public_key().as_ref();
        let jwk = json!({
            "kty": "EC", "crv": "P-256", "kid": kid, "use": "sig", "alg": "ES256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        TestKey {
            encoding: EncodingKey::from_ec_der(pkcs8.as_ref()),
            jwk,
        }
    }

    fn jwks(keys: &[&TestKey]) -> JwkSet {
        serde_json::from_value(
            json!({"keys": keys.iter().map(|key| key.jwk.clone()).collect::<Vec<_>>()}),
        )
        .unwrap()
    }

    fn good_claims() -> serde_json::Value {
        json!({
            "iss": ISSUER, "sub": "user-1", "aud": CLIENT, "exp": NOW + 300, "iat": NOW,
            "nonce": NONCE, "preferred_username": "alice", "groups": ["dev"],
        })
    }

    fn sign(key: &TestKey, kid: Option<&str>, claims: &serde_json::Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = kid.map(str::to_owned);
        jsonwebtoken::encode(&header, claims, &key.encoding).unwrap()
    }

    fn expected() -> Expected<'static> {
        Expected {
            issuer: ISSUER,
            client_id: CLIENT,
            nonce: NONCE,
            now_secs: NOW,
        }
    }

    fn with(change: impl FnOnce(&mut serde_json::Value)) -> serde_json::Value {
        let mut claims = good_claims();
        change(&mut claims);
        claims
    }

    #[test]
    fn a_good_token_gives_its_claims() {
        let key = test_key("k1");
        let token = sign(&key, Some("k1"), &good_claims());
        let claims = validate(&token, &jwks(&[&key]), expected()).unwrap();
        assert_eq!(claims.sub, "user-1");
        assert_eq!(claims.other["preferred_username"], "alice");
        assert_eq!(claims.other["groups"], json!(["dev"]));
        // An audience list holding us, and no kid with a one-key set, pass too.
        let token = sign(&key, None, &with(|c| c["aud"] = json!(["other", CLIENT])));
        assert!(validate(&token, &jwks(&[&key]), expected()).is_ok());
    }

    #[test]
    fn bad_tokens_are_refused_naming_the_problem() {
        let key = test_key("k1");
        let stranger = test_key("k1");
        let keys = jwks(&[&key]);
        let good = sign(&key, Some("k1"), &good_claims());
        // The good token with its signature's first character changed. (Not its last:
        // that one carries padding bits too, and a change there can make the base64
        // invalid, which is a malformed token rather than a bad signature.)
        let signature_at = good.rfind('.').unwrap() + 1;
        let first = &good[signature_at..=signature_at];
        let tampered = format!(
            "{}{}{}",
            &good[..signature_at],
            if first == "A" { "B" } else { "A" },
            &good[signature_at + 1..]
        );
        let hs256 = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &good_claims(),
            &EncodingKey::from_secret(b"the client secret"),
        )
        .unwrap();
        let unsigned = format!(
            "{}.{}.",
            URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#),
            URL_SAFE_NO_PAD.encode(good_claims().to_string())
        );
        let cases: Vec<(&str, String, TokenError)> = vec![
            (
                "signed by another key under the same kid",
                sign(&stranger, Some("k1"), &good_claims()),
                TokenError::Signature,
            ),
            ("a changed signature", tampered, TokenError::Signature),
            (
                "another issuer",
                sign(
                    &key,
                    Some("k1"),
                    &with(|c| c["iss"] = json!("http://127.0.0.1:4001")),
                ),
                TokenError::Issuer,
            ),
            (
                "another audience",
                sign(
                    &key,
                    Some("k1"),
                    &with(|c| c["aud"] = json!("someone-else")),
                ),
                TokenError::Audience,
            ),
            (
                "authorized for another party",
                sign(
                    &key,
                    Some("k1"),
                    &with(|c| {
                        c["aud"] = json!([CLIENT, "other"]);
                        c["azp"] = json!("other");
                    }),
                ),
                TokenError::Audience,
            ),
            (
                "another sign-in's nonce",
                sign(&key, Some("k1"), &with(|c| c["nonce"] = json!("replayed"))),
                TokenError::Nonce,
            ),
            (
                "no nonce",
                sign(
                    &key,
                    Some("k1"),
                    &with(|c| {
                        c.as_object_mut().unwrap().remove("nonce");
                    }),
                ),
                TokenError::Nonce,
            ),
            (
                "expired past the allowed skew",
                sign(
                    &key,
                    Some("k1"),
                    &with(|c| c["exp"] = json!(NOW - CLOCK_SKEW_SECS - 1)),
                ),
                TokenError::Expired,
            ),
            (
                "no subject",
                sign(
                    &key,
                    Some("k1"),
                    &with(|c| {
                        c.as_object_mut().unwrap().remove("sub");
                    }),
                ),
                TokenError::MissingClaim("sub".to_owned()),
            ),
            (
                "a key the issuer does not publish",
                sign(&key, Some("k2"), &good_claims()),
                TokenError::UnknownKey {
                    kid: "k2".to_owned(),
                },
            ),
            ("HMAC", hs256, TokenError::Algorithm("HS256".to_owned())),
            ("unsigned", unsigned, TokenError::Malformed),
            ("not a JWT", "abc".to_owned(), TokenError::Malformed),
        ];
        for (case, token, want) in cases {
            let got = validate(&token, &keys, expected());
            assert_eq!(got.as_ref().err(), Some(&want), "{case}: {got:?}");
            assert!(
                !want.to_string().contains(&token),
                "{case}: the token is not shown"
            );
        }
        // Within the skew an expired token still passes (clocks differ a little).
        let late = sign(&key, Some("k1"), &with(|c| c["exp"] = json!(NOW - 30)));
        assert!(validate(&late, &keys, expected()).is_ok());
    }

    #[test]
    fn a_rotated_key_is_found_in_the_new_set() {
        let old = test_key("2026-01");
        let new = test_key("2026-02");
        let token = sign(&new, Some("2026-02"), &good_claims());
        assert_eq!(
            validate(&token, &jwks(&[&old]), expected()),
            Err(TokenError::UnknownKey {
                kid: "2026-02".to_owned()
            })
        );
        assert!(validate(&token, &jwks(&[&old, &new]), expected()).is_ok());
    }
}
