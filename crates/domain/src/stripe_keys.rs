//! The shapes of the keys a merchant gives recur for its Stripe account (DESIGN §17). Stripe
//! itself decides whether a secret key is good (recur asks it once); these rules only refuse
//! what cannot be a key of the right kind and mode, before anything leaves recur.

/// Longest key accepted; Stripe's keys are far shorter.
const MAX_KEY_CHARS: usize = 255;

/// Whether a key is for test or live payments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyMode {
    /// `…_test_…`: the emulator and Stripe's test mode; for sandbox merchants.
    Test,
    /// `…_live_…`: real money; for live merchants.
    Live,
}

impl KeyMode {
    fn infix(self) -> &'static str {
        match self {
            KeyMode::Test => "test",
            KeyMode::Live => "live",
        }
    }
}

/// A secret key of `mode`: `sk_test_…` or `sk_live_…`.
pub fn secret_key(input: &str, mode: KeyMode) -> Result<String, String> {
    prefixed(input, &format!("sk_{}_", mode.infix()))
}

/// A publishable key of `mode`: `pk_test_…` or `pk_live_…`.
pub fn publishable_key(input: &str, mode: KeyMode) -> Result<String, String> {
    prefixed(input, &format!("pk_{}_", mode.infix()))
}

/// A webhook signing secret: `whsec_…`.
pub fn webhook_secret(input: &str) -> Result<String, String> {
    prefixed(input, "whsec_")
}

/// The id of a Stripe object with `prefix` (`pm_…`, `cus_…`): only such an id is ever put in
/// the path of a call to Stripe.
pub fn object_id(input: &str, prefix: &str) -> Result<String, String> {
    prefixed(input, prefix)
}

/// The last four characters of a key, shown in its place.
pub fn last4(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    chars[chars.len().saturating_sub(4)..].iter().collect()
}

fn prefixed(input: &str, prefix: &str) -> Result<String, String> {
    let rest = input
        .strip_prefix(prefix)
        .ok_or_else(|| format!("must start with {prefix}"))?;
    if rest.is_empty()
        || input.chars().count() > MAX_KEY_CHARS
        || !rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(format!(
            "must be {prefix} followed by letters and digits (at most {MAX_KEY_CHARS} characters)"
        ));
    }
    Ok(input.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_the_merchants_mode_pass() {
        assert!(secret_key("sk_test_51Abc", KeyMode::Test).is_ok());
        assert!(secret_key("sk_live_51Abc", KeyMode::Live).is_ok());
        assert!(publishable_key("pk_test_51Abc", KeyMode::Test).is_ok());
        assert!(webhook_secret("whsec_abc123").is_ok());
    }

    #[test]
    fn keys_of_the_other_mode_or_kind_are_refused() {
        assert!(secret_key("sk_live_51Abc", KeyMode::Test).is_err());
        assert!(secret_key("sk_test_51Abc", KeyMode::Live).is_err());
        assert!(secret_key("pk_test_51Abc", KeyMode::Test).is_err());
        assert!(secret_key("rk_test_51Abc", KeyMode::Test).is_err());
        assert!(publishable_key("sk_test_51Abc", KeyMode::Test).is_err());
        assert!(webhook_secret("sk_test_51Abc").is_err());
    }

    #[test]
    fn empty_odd_or_long_keys_are_refused() {
        assert!(secret_key("sk_test_", KeyMode::Test).is_err());
        assert!(secret_key("sk_test_abc def", KeyMode::Test).is_err());
        assert!(secret_key("sk_test_abc\n", KeyMode::Test).is_err());
        assert!(secret_key(&format!("sk_test_{}", "a".repeat(300)), KeyMode::Test).is_err());
    }

    #[test]
    fn object_ids_have_their_prefix_and_nothing_to_escape() {
        assert!(object_id("pm_1Q0PsIJvEtkwdCNYMSaVuRz6", "pm_").is_ok());
        assert!(object_id("pm_1/../../v1/balance", "pm_").is_err());
        assert!(object_id("pm_a?b", "pm_").is_err());
        assert!(object_id("cus_123", "pm_").is_err());
    }

    #[test]
    fn last4_shows_the_end_only() {
        assert_eq!(last4("sk_test_51Abcd1234"), "1234");
        assert_eq!(last4("abc"), "abc");
    }
}
