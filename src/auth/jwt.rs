//! Access tokens: HS256 JWTs with a `kid` header. The first configured key signs; every configured
//! key verifies, so keys can be rotated without logging merchants out. Expiry is checked against
//! the injected clock, not the system time.

use std::collections::HashMap;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use crate::config::JwtConfig;
use crate::keys::ServerKeys;

const ISSUER: &str = "recur";

/// The claims recur puts in an access token.
#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    iss: String,
    iat: i64,
    exp: i64,
}

/// Why a token was refused. Deliberately coarse: the client learns only "invalid_token".
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    /// Not a well-formed, correctly signed recur token.
    #[error("the access token is malformed or its signature does not verify")]
    Invalid,
    /// Signed correctly but past its expiry.
    #[error("the access token has expired")]
    Expired,
}

/// Signs and verifies access tokens.
pub struct TokenService {
    signing_kid: String,
    signing_key: EncodingKey,
    verifying: HashMap<String, DecodingKey>,
    ttl_seconds: u64,
}

impl TokenService {
    /// Builds the key set from configuration, falling back to a key derived from the server key.
    pub fn new(config: &JwtConfig, server_keys: &ServerKeys) -> anyhow::Result<Self> {
        let mut keys: Vec<(String, Vec<u8>)> = Vec::new();
        for key in &config.keys {
            let bytes = B64
                .decode(key.secret.trim())
                .map_err(|_| anyhow::anyhow!("JWT key {:?} is not base64", key.kid))?;
            if bytes.len() < 32 {
                anyhow::bail!("JWT key {:?} must be at least 32 bytes", key.kid);
            }
            keys.push((key.kid.clone(), bytes));
        }
        if keys.is_empty() {
            keys.push(("k0".into(), server_keys.default_jwt_key().to_vec()));
        }
        let (signing_kid, signing_bytes) = keys[0].clone();
        Ok(Self {
            signing_kid,
            signing_key: EncodingKey::from_secret(&signing_bytes),
            verifying: keys
                .iter()
                .map(|(kid, bytes)| (kid.clone(), DecodingKey::from_secret(bytes)))
                .collect(),
            ttl_seconds: config.ttl_seconds,
        })
    }

    /// Lifetime of a new token, in seconds.
    pub fn ttl_seconds(&self) -> u64 {
        self.ttl_seconds
    }

    /// A new token for `merchant_id`, valid from `now` for the configured lifetime.
    pub fn issue(&self, merchant_id: i64, now: DateTime<Utc>) -> anyhow::Result<String> {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(self.signing_kid.clone());
        let claims = Claims {
            sub: merchant_id.to_string(),
            iss: ISSUER.into(),
            iat: now.timestamp(),
            exp: now.timestamp() + i64::try_from(self.ttl_seconds)?,
        };
        Ok(jsonwebtoken::encode(&header, &claims, &self.signing_key)?)
    }

    /// The merchant id of a valid, unexpired token.
    pub fn verify(&self, token: &str, now: DateTime<Utc>) -> Result<i64, TokenError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| TokenError::Invalid)?;
        if header.alg != Algorithm::HS256 {
            return Err(TokenError::Invalid);
        }
        let key = header
            .kid
            .as_deref()
            .and_then(|kid| self.verifying.get(kid))
            .ok_or(TokenError::Invalid)?;
        let mut validation = Validation::new(Algorithm::HS256);
        validation.validate_exp = false; // checked below against the injected clock
        validation.set_required_spec_claims(&["exp", "sub", "iss"]);
        validation.set_issuer(&[ISSUER]);
        let data = jsonwebtoken::decode::<Claims>(token, key, &validation)
            .map_err(|_| TokenError::Invalid)?;
        if data.claims.exp <= now.timestamp() {
            return Err(TokenError::Expired);
        }
        data.claims.sub.parse().map_err(|_| TokenError::Invalid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::JwtKeyConfig;
    use chrono::Duration;

    fn service(keys: &[(&str, &[u8])]) -> TokenService {
        let config = JwtConfig {
            ttl_seconds: 900,
            keys: keys
                .iter()
                .map(|(kid, bytes)| JwtKeyConfig {
                    kid: kid.to_string(),
                    secret: B64.encode(bytes),
                })
                .collect(),
        };
        TokenService::new(&config, &ServerKeys::from_master(&[3; 32])).unwrap()
    }

    #[test]
    fn issued_tokens_verify_until_expiry() {
        let tokens = service(&[]);
        let now = Utc::now();
        let token = tokens.issue(42, now).unwrap();
        assert_eq!(tokens.verify(&token, now), Ok(42));
        assert_eq!(tokens.verify(&token, now + Duration::seconds(899)), Ok(42));
        assert_eq!(
            tokens.verify(&token, now + Duration::seconds(900)),
            Err(TokenError::Expired)
        );
    }

    #[test]
    fn rotation_keeps_old_tokens_valid_and_refuses_unknown_keys() {
        let old = service(&[("old", &[1; 32])]);
        let rotated = service(&[("new", &[2; 32]), ("old", &[1; 32])]);
        let stranger = service(&[("old", &[9; 32])]);
        let now = Utc::now();
        let token = old.issue(7, now).unwrap();
        assert_eq!(rotated.verify(&token, now), Ok(7));
        assert_eq!(stranger.verify(&token, now), Err(TokenError::Invalid));
        let new_token = rotated.issue(7, now).unwrap();
        assert_eq!(old.verify(&new_token, now), Err(TokenError::Invalid));
    }

    #[test]
    fn alg_none_and_garbage_are_refused() {
        let tokens = service(&[]);
        let now = Utc::now();
        let header = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(r#"{"alg":"none","typ":"JWT","kid":"k0"}"#);
        let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!(
            r#"{{"sub":"1","iss":"recur","iat":0,"exp":{}}}"#,
            now.timestamp() + 600
        ));
        for token in [format!("{header}.{claims}."), "abc".into(), String::new()] {
            assert_eq!(tokens.verify(&token, now), Err(TokenError::Invalid));
        }
    }

    #[test]
    fn short_configured_keys_are_rejected() {
        let config = JwtConfig {
            ttl_seconds: 900,
            keys: vec![JwtKeyConfig {
                kid: "k".into(),
                secret: B64.encode([1u8; 16]),
            }],
        };
        assert!(TokenService::new(&config, &ServerKeys::from_master(&[3; 32])).is_err());
    }
}
