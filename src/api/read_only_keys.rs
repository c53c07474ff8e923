//! The one place a read API key is held to reading: every request of the merchant API but GET
//! and HEAD (POST, PUT, PATCH, DELETE) made with a live `read` key is a 403, before idempotency
//! keys, extractors or handlers see it. Unknown and revoked keys pass on, to be refused (401) by
//! the route's own authentication.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::extract::{api_key_merchant, bearer_token};
use super::problem::ApiError;
use crate::auth::api_keys::is_api_key;
use crate::state::AppState;
use crate::store::api_keys::Scope;

/// Middleware for the merchant API's routes.
pub async fn read_only_keys(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let key = bearer_token(request.headers()).filter(|token| is_api_key(token));
    if let (Some(key), false) = (key, request.method().is_safe()) {
        match api_key_merchant(key, &state).await {
            Ok(Some(auth)) if auth.scope == Scope::Read => {
                return ApiError::Forbidden("A read API key can only read (GET).").into_response();
            }
            Ok(_) => {}
            Err(error) => return error.into_response(),
        }
    }
    next.run(request).await
}
