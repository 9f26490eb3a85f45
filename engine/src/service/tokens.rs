//! API tokens: each user creates, lists and revokes their own. The secret is in the
//! create response only; afterwards the token is known by id and name.

use api_types::AuditAction;

use super::{
    AuditRecord, Caller, CreatedToken, Page, PageRequest, Service, ServiceError, TokenRequest,
    TokenView,
};
use crate::accounts::TokenSecret;
use crate::store::tokens::ApiToken;
use crate::store::{now_ms, StoreError};

const MAX_TOKEN_NAME: usize = 100;

/// The longest lifetime a token may be given: ten years.
const MAX_TOKEN_LIFETIME_SECS: u64 = 10 * 365 * 24 * 3600;

impl Service {
    pub async fn create_token(
        &self,
        caller: &Caller,
        request: &TokenRequest,
    ) -> Result<CreatedToken, ServiceError> {
        let name = request.name.trim();
        if name.is_empty()
            || name.chars().count() > MAX_TOKEN_NAME
            || name.chars().any(char::is_control)
        {
            return Err(ServiceError::invalid(format!(
                "token name must be 1-{MAX_TOKEN_NAME} printable characters"
            )));
        }
        let now = now_ms();
        let expires_at_ms = match request.expires_in_seconds {
            None => None,
            Some(0) => return Err(ServiceError::invalid("expires_in_seconds must be positive")),
            // Bounded so that expiry arithmetic (also when renewed on use) stays in range.
            Some(seconds) if seconds > MAX_TOKEN_LIFETIME_SECS => {
                return Err(ServiceError::invalid(format!(
                    "expires_in_seconds must be at most {MAX_TOKEN_LIFETIME_SECS} (10 years)"
                )))
            }
            Some(seconds) => Some(
                now.saturating_add(
                    i64::try_from(seconds)
                        .unwrap_or(i64::MAX)
                        .saturating_mul(1000),
                ),
            ),
        };
        let renew_ms = match (request.renew_on_use, expires_at_ms) {
            (false, _) => None,
            (true, Some(expires_at_ms)) => Some(expires_at_ms - now),
            (true, None) => {
                return Err(ServiceError::invalid(
                    "renew_on_use needs expires_in_seconds (the lifetime each use restarts)",
                ))
            }
        };
        let secret = TokenSecret::generate();
        let token = ApiToken {
            id: uuid::Uuid::new_v4().to_string(),
            user_id: caller.principal.user_id.clone(),
            name: name.to_owned(),
            created_at_ms: now,
            last_used_at_ms: None,
            expires_at_ms,
            revoked_at_ms: None,
            scope: request.scope,
            renew_ms,
        };
        self.store
            .insert_token(&token, &secret.sha256_hex())
            .await?;
        self.audit(
            caller,
            AuditRecord::new(
                caller.tenant_id(),
                AuditAction::TokenCreate,
                "token",
                &token.name,
            ),
        )
        .await;
        Ok(CreatedToken {
            token: token.into(),
            secret: secret.expose().to_owned(),
        })
    }

    pub async fn list_tokens(
        &self,
        caller: &Caller,
        page: PageRequest,
    ) -> Result<Page<TokenView>, ServiceError> {
        let (tokens, total) = self
            .store
            .tokens_window(&caller.principal.user_id, page.window()?)
            .await?;
        Ok(page.of(tokens.into_iter().map(TokenView::from).collect(), total))
    }

    /// Revokes one of the caller's tokens; revoking twice is fine.
    pub async fn revoke_token(&self, caller: &Caller, id: &str) -> Result<TokenView, ServiceError> {
        let not_found = || ServiceError::NotFound(format!("token {id:?}"));
        let token = match self.store.token(id).await {
            Ok(token) => token,
            Err(StoreError::NotFound(_)) => return Err(not_found()),
            Err(error) => return Err(error.into()),
        };
        if token.user_id != caller.principal.user_id {
            return Err(not_found());
        }
        self.store.revoke_token(&token.id, now_ms()).await?;
        self.audit(
            caller,
            AuditRecord::new(
                caller.tenant_id(),
                AuditAction::TokenRevoke,
                "token",
                &token.name,
            ),
        )
        .await;
        Ok(self.store.token(&token.id).await?.into())
    }

    /// A user's tokens, for the admins of their tenant (superadmins' tokens for
    /// superadmins only).
    pub async fn user_tokens(
        &self,
        caller: &Caller,
        user_id: &str,
        page: PageRequest,
    ) -> Result<Page<TokenView>, ServiceError> {
        let user = self.changeable_user(caller, user_id).await?;
        let (tokens, total) = self.store.tokens_window(&user.id, page.window()?).await?;
        Ok(page.of(tokens.into_iter().map(TokenView::from).collect(), total))
    }

    /// Revokes one of a user's tokens, as an admin of their tenant.
    pub async fn revoke_user_token(
        &self,
        caller: &Caller,
        user_id: &str,
        token_id: &str,
    ) -> Result<TokenView, ServiceError> {
        let user = self.changeable_user(caller, user_id).await?;
        let not_found = || ServiceError::NotFound(format!("token {token_id:?}"));
        let token = match self.store.token(token_id).await {
            Ok(token) if token.user_id == user.id => token,
            Ok(_) | Err(StoreError::NotFound(_)) => return Err(not_found()),
            Err(error) => return Err(error.into()),
        };
        self.store.revoke_token(&token.id, now_ms()).await?;
        self.audit(
            caller,
            AuditRecord::new(
                &user.tenant_id,
                AuditAction::TokenRevoke,
                "token",
                &format!("{}/{}", user.username, token.name),
            ),
        )
        .await;
        Ok(self.store.token(&token.id).await?.into())
    }
}
