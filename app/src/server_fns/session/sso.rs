//! The single sign-on issuers the login page offers ("Sign in with NAME"). The
//! server puts the configured issuers' names and labels in every request's context
//! ([`SsoButtons`]); the flow itself is the server's (`/auth/sso/NAME/start`).

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::UiError;

/// One issuer's button.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SsoButton {
    /// The issuer's name in addresses.
    pub name: String,
    /// What follows "Sign in with".
    pub label: String,
}

/// Every configured issuer, in the config file's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SsoButtons(pub Vec<SsoButton>);

#[server(prefix = "/sfn", endpoint = "sso-issuers")]
pub async fn sso_issuers() -> Result<Vec<SsoButton>, UiError> {
    Ok(use_context::<SsoButtons>().unwrap_or_default().0)
}
