//! The server key and what is derived from it.
//!
//! Merchant secrets must be usable (recur signs webhooks with them) yet never stored in the clear.
//! They are sealed with ChaCha20-Poly1305 under a key derived from the server key, and found again
//! by a keyed HMAC lookup digest, so the database alone reveals neither the secret nor a hash that
//! could be brute-forced offline.

use std::path::Path;

use anyhow::{bail, Context};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// Keys derived from the 32-byte server key.
#[derive(Clone)]
pub struct ServerKeys {
    sealing: Key,
    lookup: [u8; 32],
    jwt_default: [u8; 32],
    cursor: [u8; 32],
}

impl std::fmt::Debug for ServerKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerKeys(..)")
    }
}

impl ServerKeys {
    /// Derives the keys from 32 bytes of server key material with HKDF-SHA256.
    pub fn from_master(master: &[u8; 32]) -> Self {
        let hkdf = hkdf::Hkdf::<Sha256>::new(Some(b"recur server key v1"), master);
        let derive = |label: &[u8]| {
            let mut out = [0u8; 32];
            hkdf.expand(label, &mut out)
                .expect("32 bytes is a valid HKDF-SHA256 output length");
            out
        };
        Self {
            sealing: Key::from(derive(b"seal")),
            lookup: derive(b"lookup"),
            jwt_default: derive(b"jwt"),
            cursor: derive(b"cursor"),
        }
    }

    /// Uses `configured` (base64 of 32 bytes) when given; otherwise reads `<data_dir>/server.key`,
    /// creating it with fresh random bytes (mode 0600) on first start.
    pub fn load_or_create(configured: Option<&str>, data_dir: &Path) -> anyhow::Result<Self> {
        let text = match configured {
            Some(text) => text.trim().to_string(),
            None => {
                let path = data_dir.join("server.key");
                if path.exists() {
                    std::fs::read_to_string(&path)
                        .with_context(|| format!("reading {}", path.display()))?
                } else {
                    std::fs::create_dir_all(data_dir)
                        .with_context(|| format!("creating {}", data_dir.display()))?;
                    let text = B64.encode(random_bytes::<32>());
                    write_private(&path, &text)?;
                    text
                }
            }
        };
        let bytes = B64
            .decode(text.trim())
            .context("the server key must be base64")?;
        let Ok(master) = <[u8; 32]>::try_from(bytes.as_slice()) else {
            bail!("the server key must be exactly 32 bytes (base64 of 32 random bytes)");
        };
        Ok(Self::from_master(&master))
    }

    /// Encrypts `plaintext` for storage: base64 of nonce ‖ ciphertext ‖ tag.
    pub fn seal(&self, plaintext: &str) -> String {
        let nonce_bytes = random_bytes::<12>();
        let ciphertext = ChaCha20Poly1305::new(&self.sealing)
            .encrypt(Nonce::from_slice(&nonce_bytes), plaintext.as_bytes())
            .expect("ChaCha20-Poly1305 encryption of an in-memory buffer cannot fail");
        let mut out = nonce_bytes.to_vec();
        out.extend_from_slice(&ciphertext);
        B64.encode(out)
    }

    /// Decrypts a value written by [`ServerKeys::seal`].
    pub fn open(&self, sealed: &str) -> anyhow::Result<String> {
        let bytes = B64.decode(sealed).context("sealed value is not base64")?;
        if bytes.len() < 12 {
            bail!("sealed value is too short");
        }
        let (nonce, ciphertext) = bytes.split_at(12);
        let plaintext = ChaCha20Poly1305::new(&self.sealing)
            .decrypt(Nonce::from_slice(nonce), ciphertext)
            .map_err(|_| anyhow::anyhow!("sealed value does not open with this server key"))?;
        String::from_utf8(plaintext).context("sealed value is not UTF-8")
    }

    /// A keyed digest of a secret, used to find its owner without storing the secret.
    pub fn lookup_digest(&self, secret: &str) -> String {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.lookup)
            .expect("HMAC accepts keys of any length");
        mac.update(secret.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    /// The card's keyed fingerprint at one merchant (`CreditCardDigest`): equal for equal numbers
    /// at that merchant, different at every other merchant (so the database does not link one
    /// card across merchants), and the number cannot be read back from it.
    pub fn card_fingerprint(
        &self,
        merchant_id: i64,
        card: &recur_domain::card::CardNumber,
    ) -> String {
        self.lookup_digest(&format!("card:{merchant_id}:{}", card.digits()))
    }

    /// The access-token key used when none is configured.
    pub fn default_jwt_key(&self) -> &[u8; 32] {
        &self.jwt_default
    }

    /// The key that authenticates list cursors (`api::pagination`), so that a client can only
    /// hand back a cursor recur gave it.
    pub fn cursor_key(&self) -> &[u8; 32] {
        &self.cursor
    }
}

/// `N` bytes from the operating system's CSPRNG.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    rand::rngs::OsRng.fill_bytes(&mut out);
    out
}

fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_round_trips_and_is_randomised() {
        let keys = ServerKeys::from_master(&[7; 32]);
        let a = keys.seal("topsecret");
        let b = keys.seal("topsecret");
        assert_ne!(a, b);
        assert!(!a.contains("topsecret"));
        assert_eq!(keys.open(&a).unwrap(), "topsecret");
        let other = ServerKeys::from_master(&[8; 32]);
        assert!(other.open(&a).is_err());
    }

    #[test]
    fn lookup_digest_is_keyed() {
        let a = ServerKeys::from_master(&[1; 32]);
        let b = ServerKeys::from_master(&[2; 32]);
        assert_eq!(a.lookup_digest("s"), a.lookup_digest("s"));
        assert_ne!(a.lookup_digest("s"), b.lookup_digest("s"));
    }

    #[test]
    fn card_fingerprints_are_per_merchant() {
        let keys = ServerKeys::from_master(&[3; 32]);
        let card = recur_domain::card::CardNumber::parse("4242 4242 4242 4242").unwrap();
        let other = recur_domain::card::CardNumber::parse("5555555555554444").unwrap();
        assert_eq!(
            keys.card_fingerprint(1, &card),
            keys.card_fingerprint(1, &card)
        );
        assert_ne!(
            keys.card_fingerprint(1, &card),
            keys.card_fingerprint(2, &card)
        );
        assert_ne!(
            keys.card_fingerprint(1, &card),
            keys.card_fingerprint(1, &other)
        );
        let fingerprint = keys.card_fingerprint(1, &card);
        assert!(!fingerprint.contains("4242"));
        assert_ne!(
            fingerprint,
            ServerKeys::from_master(&[4; 32]).card_fingerprint(1, &card)
        );
    }

    #[test]
    fn key_file_is_created_once_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let first = ServerKeys::load_or_create(None, dir.path()).unwrap();
        let sealed = first.seal("x");
        let second = ServerKeys::load_or_create(None, dir.path()).unwrap();
        assert_eq!(second.open(&sealed).unwrap(), "x");
        assert!(ServerKeys::load_or_create(Some("c2hvcnQ="), dir.path()).is_err());
    }
}
