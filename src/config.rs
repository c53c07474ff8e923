//! Configuration: built-in defaults, then an optional TOML file, then `RECUR_*` environment
//! variables, each layer overriding the one before.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use recur_domain::fx::UsdRates;
use serde::Deserialize;

use crate::net::proxies::TrustedProxies;
use crate::net::tls::TlsFiles;

/// Everything `recur` needs to know about its surroundings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address the HTTP server binds (`RECUR_LISTEN`).
    pub listen: SocketAddr,
    /// Directory for the SQLite file, the server key and the e-mail outbox (`RECUR_DATA_DIR`).
    pub data_dir: PathBuf,
    /// `sqlite://…` or `postgres://…` (`RECUR_DATABASE_URL`).
    pub database_url: String,
    /// Base URL used in links handed to browsers (`RECUR_PUBLIC_URL`). When unset, links use
    /// `http://` and the address the server actually bound.
    pub public_url: Option<String>,
    /// Base64 of 32 random bytes from which every server-side key is derived (`RECUR_SECRET_KEY`).
    /// When absent, a key is generated once and kept in `<data_dir>/server.key`.
    pub secret_key: Option<String>,
    /// Access-token settings.
    pub jwt: JwtConfig,
    /// `text` (default) or `json` log lines (`RECUR_LOG_FORMAT`).
    pub log_format: LogFormat,
    /// Whether `recur serve` creates a demo sandbox merchant when the database has none
    /// (`RECUR_DEMO_MERCHANT`, default true).
    pub demo_merchant: bool,
    /// How long a charge attempt may wait for its recorded answer before the billing worker asks
    /// the processor again (`RECUR_BILLING_RECOVERY_SECONDS`, default 30): the window in which a
    /// crashed process's attempt is left alone.
    pub billing_recovery_seconds: u64,
    /// Outgoing webhooks.
    pub webhooks: WebhookConfig,
    /// Outgoing e-mail.
    pub mail: MailConfig,
    /// Where Stripe is reached.
    pub stripe: StripeConfig,
    /// Base URL `cashier.js` is loaded from (`RECUR_CDN_URL`); recur serves it itself under
    /// `/cdn/` when unset.
    pub cdn_url: Option<String>,
    /// USD per unit of every accepted currency, for `UsdAmount`: the reference table with the
    /// rates of `RECUR_USD_RATES` in place.
    pub usd_rates: UsdRates,
    /// Who may read `/metrics`, and where.
    pub metrics: MetricsConfig,
    /// Serve HTTPS with these PEM files (`RECUR_TLS_CERT` and `RECUR_TLS_KEY`, both or neither).
    pub tls: Option<TlsFiles>,
    /// Proxies whose forwarding headers give the client address (`RECUR_TRUSTED_PROXIES`,
    /// comma-separated CIDR ranges; default none).
    pub trusted_proxies: TrustedProxies,
}

/// Access to `/metrics`.
#[derive(Clone, Default)]
pub struct MetricsConfig {
    /// When set, `/metrics` answers only `Authorization: Bearer <token>` (`RECUR_METRICS_TOKEN`).
    pub token: Option<String>,
    /// When set, `/metrics` is served on this address only, not on `RECUR_LISTEN`
    /// (`RECUR_METRICS_LISTEN`).
    pub listen: Option<SocketAddr>,
}

impl std::fmt::Debug for MetricsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsConfig")
            .field("token", &self.token.as_ref().map(|_| ".."))
            .field("listen", &self.listen)
            .finish()
    }
}

/// Outgoing webhook settings.
#[derive(Debug, Clone)]
pub struct WebhookConfig {
    /// Whether webhooks may reach loopback, private, link-local, CGNAT and metadata addresses
    /// (`RECUR_WEBHOOK_ALLOW_PRIVATE`, default false): for tests and local development only.
    pub allow_private: bool,
    /// PEM file of extra trusted CA certificates (`RECUR_WEBHOOK_EXTRA_ROOTS`).
    pub extra_roots: Option<PathBuf>,
    /// Local address deliveries are sent from, so merchants can allow-list it
    /// (`RECUR_WEBHOOK_SOURCE_ADDRESS`).
    pub source_address: Option<IpAddr>,
    /// Time-out of one delivery attempt in seconds (`RECUR_WEBHOOK_TIMEOUT_SECONDS`, default 15).
    pub timeout_seconds: u64,
    /// Deliveries in flight at once (`RECUR_WEBHOOK_CONCURRENCY`, default 16).
    pub concurrency: usize,
}

/// Where recur reaches Stripe: Stripe itself by default, an emulator (`localstripe`) in tests
/// and air-gapped setups. Operator-set, so these addresses are not held to the webhook SSRF
/// guard; nothing a merchant sends chooses them.
#[derive(Debug, Clone)]
pub struct StripeConfig {
    /// Base URL of Stripe's API (`RECUR_STRIPE_API_BASE`, default `https://api.stripe.com`).
    pub api_base: String,
    /// Stripe.js, loaded by the hosted pages (`RECUR_STRIPE_JS_URL`, default
    /// `https://js.stripe.com/v3/`); its origin is added to their CSP.
    pub js_url: String,
    /// Time-out of one API call in seconds (`RECUR_STRIPE_TIMEOUT_SECONDS`, default 30); a call
    /// past it is asked again with the same idempotency key.
    pub timeout_seconds: u64,
}

/// Outgoing e-mail settings.
#[derive(Debug, Clone)]
pub struct MailConfig {
    /// SMTP server as a URL (`RECUR_SMTP_URL`): `smtps://user:pass@host:465` (TLS),
    /// `smtp://user:pass@host:587?tls=required` (STARTTLS) or `smtp://host:25` (plain). When
    /// unset, messages are written as `.eml` files to `<data_dir>/mail`.
    pub smtp_url: Option<String>,
    /// Sender address (`RECUR_MAIL_FROM`, default `recur <billing@localhost>`).
    pub from: String,
}

/// Access-token settings.
#[derive(Debug, Clone)]
pub struct JwtConfig {
    /// Lifetime of an access token in seconds (`RECUR_JWT_TTL_SECONDS`, default 900).
    pub ttl_seconds: u64,
    /// Signing keys, newest first: the first signs, all verify (`RECUR_JWT_KEYS`, a comma-separated
    /// list of `kid:base64secret`). Empty: one key derived from the server key, kid `k0`.
    pub keys: Vec<JwtKeyConfig>,
}

/// One HMAC key for access tokens.
#[derive(Debug, Clone, Deserialize)]
pub struct JwtKeyConfig {
    /// Key id, written into each token's header.
    pub kid: String,
    /// Base64 of the key bytes (at least 32).
    pub secret: String,
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// The TOML file's shape: every key optional, names as in the environment without `RECUR_`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    listen: Option<String>,
    data_dir: Option<PathBuf>,
    database_url: Option<String>,
    public_url: Option<String>,
    secret_key: Option<String>,
    jwt_ttl_seconds: Option<u64>,
    jwt_keys: Option<Vec<JwtKeyConfig>>,
    log_format: Option<LogFormat>,
    demo_merchant: Option<bool>,
    billing_recovery_seconds: Option<u64>,
    webhook_allow_private: Option<bool>,
    webhook_extra_roots: Option<PathBuf>,
    webhook_source_address: Option<String>,
    webhook_timeout_seconds: Option<u64>,
    webhook_concurrency: Option<usize>,
    smtp_url: Option<String>,
    mail_from: Option<String>,
    cdn_url: Option<String>,
    stripe_api_base: Option<String>,
    stripe_js_url: Option<String>,
    stripe_timeout_seconds: Option<u64>,
    usd_rates: Option<String>,
    metrics_token: Option<String>,
    metrics_listen: Option<String>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
    trusted_proxies: Option<String>,
}

impl Config {
    /// Loads the configuration from `file` (if given) and the process environment.
    pub fn load(file: Option<&Path>) -> anyhow::Result<Self> {
        Self::from_sources(file, |name| std::env::var(name).ok())
    }

    /// Loads from `file` and a variable lookup (the environment, or a map in tests).
    pub fn from_sources(
        file: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> anyhow::Result<Self> {
        let file_config = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading config file {}", path.display()))?;
                toml::from_str::<FileConfig>(&text)
                    .with_context(|| format!("parsing config file {}", path.display()))?
            }
            None => FileConfig::default(),
        };
        let pick = |name: &str, from_file: Option<String>| env(name).or(from_file);

        let listen_text =
            pick("RECUR_LISTEN", file_config.listen).unwrap_or_else(|| "127.0.0.1:8080".into());
        let listen: SocketAddr = listen_text
            .parse()
            .with_context(|| format!("RECUR_LISTEN {listen_text:?} is not an ADDRESS:PORT"))?;
        let data_dir = env("RECUR_DATA_DIR")
            .map(PathBuf::from)
            .or(file_config.data_dir)
            .unwrap_or_else(|| PathBuf::from("./recur-data"));
        let database_url = pick("RECUR_DATABASE_URL", file_config.database_url)
            .unwrap_or_else(|| default_sqlite_url(&data_dir));
        if !(database_url.starts_with("sqlite:") || database_url.starts_with("postgres")) {
            bail!("RECUR_DATABASE_URL must start with sqlite:// or postgres://");
        }
        let public_url = pick("RECUR_PUBLIC_URL", file_config.public_url)
            .map(|url| url.trim_end_matches('/').to_string());
        let ttl_seconds = match env("RECUR_JWT_TTL_SECONDS") {
            Some(text) => text
                .parse()
                .with_context(|| "RECUR_JWT_TTL_SECONDS must be a whole number")?,
            None => file_config.jwt_ttl_seconds.unwrap_or(900),
        };
        if ttl_seconds == 0 {
            bail!("RECUR_JWT_TTL_SECONDS must be at least 1");
        }
        let keys = match env("RECUR_JWT_KEYS") {
            Some(text) => parse_jwt_keys(&text)?,
            None => file_config.jwt_keys.unwrap_or_default(),
        };
        let log_format = match env("RECUR_LOG_FORMAT").as_deref() {
            Some("json") => LogFormat::Json,
            Some("text") => LogFormat::Text,
            Some(other) => bail!("RECUR_LOG_FORMAT must be text or json, not {other:?}"),
            None => file_config.log_format.unwrap_or(LogFormat::Text),
        };
        let demo_merchant =
            flag(&env, "RECUR_DEMO_MERCHANT")?.unwrap_or(file_config.demo_merchant.unwrap_or(true));
        let source_address = match pick(
            "RECUR_WEBHOOK_SOURCE_ADDRESS",
            file_config.webhook_source_address,
        ) {
            Some(text) => Some(text.parse::<IpAddr>().with_context(|| {
                format!("RECUR_WEBHOOK_SOURCE_ADDRESS {text:?} is not an IP address")
            })?),
            None => None,
        };
        let timeout_seconds = number(&env, "RECUR_WEBHOOK_TIMEOUT_SECONDS")?
            .or(file_config.webhook_timeout_seconds)
            .unwrap_or(15);
        let concurrency = number(&env, "RECUR_WEBHOOK_CONCURRENCY")?
            .or(file_config.webhook_concurrency)
            .unwrap_or(16);
        if timeout_seconds == 0 || concurrency == 0 {
            bail!("RECUR_WEBHOOK_TIMEOUT_SECONDS and RECUR_WEBHOOK_CONCURRENCY must be at least 1");
        }
        let webhooks = WebhookConfig {
            allow_private: flag(&env, "RECUR_WEBHOOK_ALLOW_PRIVATE")?
                .or(file_config.webhook_allow_private)
                .unwrap_or(false),
            extra_roots: env("RECUR_WEBHOOK_EXTRA_ROOTS")
                .map(PathBuf::from)
                .or(file_config.webhook_extra_roots),
            source_address,
            timeout_seconds,
            concurrency,
        };
        let billing_recovery_seconds = number(&env, "RECUR_BILLING_RECOVERY_SECONDS")?
            .or(file_config.billing_recovery_seconds)
            .unwrap_or(30);
        let mail = MailConfig {
            smtp_url: pick("RECUR_SMTP_URL", file_config.smtp_url),
            from: pick("RECUR_MAIL_FROM", file_config.mail_from)
                .unwrap_or_else(|| "recur <billing@localhost>".into()),
        };
        let usd_rates =
            UsdRates::parse(&pick("RECUR_USD_RATES", file_config.usd_rates).unwrap_or_default())
                .map_err(|why| anyhow::anyhow!("RECUR_USD_RATES: {why}"))?;
        let stripe = stripe_config(
            pick("RECUR_STRIPE_API_BASE", file_config.stripe_api_base),
            pick("RECUR_STRIPE_JS_URL", file_config.stripe_js_url),
            number(&env, "RECUR_STRIPE_TIMEOUT_SECONDS")?.or(file_config.stripe_timeout_seconds),
        )?;
        let cdn_url = pick("RECUR_CDN_URL", file_config.cdn_url)
            .map(|url| url.trim_end_matches('/').to_string());
        let metrics = metrics_config(
            pick("RECUR_METRICS_TOKEN", file_config.metrics_token),
            pick("RECUR_METRICS_LISTEN", file_config.metrics_listen),
        )?;
        let tls = match (
            env("RECUR_TLS_CERT")
                .map(PathBuf::from)
                .or(file_config.tls_cert),
            env("RECUR_TLS_KEY")
                .map(PathBuf::from)
                .or(file_config.tls_key),
        ) {
            (Some(cert), Some(key)) => Some(TlsFiles { cert, key }),
            (None, None) => None,
            _ => bail!("RECUR_TLS_CERT and RECUR_TLS_KEY must be set together"),
        };
        let trusted_proxies = match pick("RECUR_TRUSTED_PROXIES", file_config.trusted_proxies) {
            Some(text) => TrustedProxies::parse(&text).context("RECUR_TRUSTED_PROXIES")?,
            None => TrustedProxies::default(),
        };
        Ok(Self {
            listen,
            data_dir,
            database_url,
            public_url,
            secret_key: pick("RECUR_SECRET_KEY", file_config.secret_key),
            jwt: JwtConfig { ttl_seconds, keys },
            log_format,
            demo_merchant,
            billing_recovery_seconds,
            webhooks,
            mail,
            stripe,
            cdn_url,
            usd_rates,
            metrics,
            tls,
            trusted_proxies,
        })
    }

    /// Whether the database is the embedded SQLite one.
    pub fn is_sqlite(&self) -> bool {
        self.database_url.starts_with("sqlite:")
    }
}

/// A boolean variable: `true`/`1` or `false`/`0`.
fn flag(env: &impl Fn(&str) -> Option<String>, name: &str) -> anyhow::Result<Option<bool>> {
    match env(name).as_deref() {
        Some("true" | "1") => Ok(Some(true)),
        Some("false" | "0") => Ok(Some(false)),
        Some(other) => bail!("{name} must be true or false, not {other:?}"),
        None => Ok(None),
    }
}

/// A whole-number variable.
fn number<T: std::str::FromStr>(
    env: &impl Fn(&str) -> Option<String>,
    name: &str,
) -> anyhow::Result<Option<T>> {
    env(name)
        .map(|text| {
            text.parse::<T>()
                .map_err(|_| anyhow::anyhow!("{name} must be a whole number, not {text:?}"))
        })
        .transpose()
}

/// `RECUR_STRIPE_API_BASE` and `RECUR_STRIPE_JS_URL` (absolute `http(s)` URLs; plain `http`
/// only for an emulator on this machine's network) and `RECUR_STRIPE_TIMEOUT_SECONDS`.
fn stripe_config(
    api_base: Option<String>,
    js_url: Option<String>,
    timeout_seconds: Option<u64>,
) -> anyhow::Result<StripeConfig> {
    let api_base = api_base.unwrap_or_else(|| "https://api.stripe.com".into());
    let js_url = js_url.unwrap_or_else(|| "https://js.stripe.com/v3/".into());
    for (name, value) in [
        ("RECUR_STRIPE_API_BASE", &api_base),
        ("RECUR_STRIPE_JS_URL", &js_url),
    ] {
        let url = url::Url::parse(value)
            .with_context(|| format!("{name} {value:?} is not an absolute URL"))?;
        if !matches!(url.scheme(), "https" | "http") || url.host_str().is_none() {
            bail!("{name} must be an http(s) URL with a host, not {value:?}");
        }
    }
    let timeout_seconds = timeout_seconds.unwrap_or(30);
    if timeout_seconds == 0 {
        bail!("RECUR_STRIPE_TIMEOUT_SECONDS must be at least 1");
    }
    Ok(StripeConfig {
        api_base: api_base.trim_end_matches('/').to_owned(),
        js_url,
        timeout_seconds,
    })
}

/// `RECUR_METRICS_TOKEN` (not blank: unset it to leave `/metrics` open) and
/// `RECUR_METRICS_LISTEN`.
fn metrics_config(token: Option<String>, listen: Option<String>) -> anyhow::Result<MetricsConfig> {
    if token.as_deref().is_some_and(|t| t.trim().is_empty()) {
        bail!("RECUR_METRICS_TOKEN must not be empty (unset it to leave /metrics open)");
    }
    let listen = match listen {
        Some(text) => Some(
            text.parse::<SocketAddr>()
                .with_context(|| format!("RECUR_METRICS_LISTEN {text:?} is not an ADDRESS:PORT"))?,
        ),
        None => None,
    };
    Ok(MetricsConfig { token, listen })
}

fn default_sqlite_url(data_dir: &Path) -> String {
    format!("sqlite://{}/recur.sqlite3?mode=rwc", data_dir.display())
}

fn parse_jwt_keys(text: &str) -> anyhow::Result<Vec<JwtKeyConfig>> {
    text.split(',')
        .filter(|item| !item.trim().is_empty())
        .map(|item| {
            let (kid, secret) = item
                .trim()
                .split_once(':')
                .with_context(|| "RECUR_JWT_KEYS items must be kid:base64secret")?;
            Ok(JwtKeyConfig {
                kid: kid.to_string(),
                secret: secret.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn load(vars: &[(&str, &str)], file: Option<&Path>) -> anyhow::Result<Config> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_sources(file, |name| map.get(name).cloned())
    }

    #[test]
    fn defaults_are_embedded_sqlite_on_localhost() {
        let config = load(&[], None).unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(
            config.database_url,
            "sqlite://./recur-data/recur.sqlite3?mode=rwc"
        );
        assert_eq!(config.public_url, None);
        assert_eq!(config.jwt.ttl_seconds, 900);
        assert!(config.is_sqlite());
        assert!(config.demo_merchant);
    }

    #[test]
    fn environment_overrides_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recur.toml");
        std::fs::write(
            &path,
            "listen = \"0.0.0.0:9000\"\njwt_ttl_seconds = 60\npublic_url = \"https://pay.example.com/\"\n",
        )
        .unwrap();
        let config = load(&[("RECUR_LISTEN", "127.0.0.1:7000")], Some(&path)).unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:7000");
        assert_eq!(config.jwt.ttl_seconds, 60);
        assert_eq!(
            config.public_url.as_deref(),
            Some("https://pay.example.com")
        );
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(load(&[("RECUR_LISTEN", "nowhere")], None).is_err());
        assert!(load(&[("RECUR_DATABASE_URL", "mysql://x")], None).is_err());
        assert!(load(&[("RECUR_JWT_TTL_SECONDS", "0")], None).is_err());
        assert!(load(&[("RECUR_JWT_KEYS", "nokid")], None).is_err());
    }

    #[test]
    fn metrics_access_is_open_unless_configured() {
        let open = load(&[], None).unwrap();
        assert!(open.metrics.token.is_none() && open.metrics.listen.is_none());
        let closed = load(
            &[
                ("RECUR_METRICS_TOKEN", "s3cret"),
                ("RECUR_METRICS_LISTEN", "127.0.0.1:9100"),
            ],
            None,
        )
        .unwrap();
        assert_eq!(closed.metrics.token.as_deref(), Some("s3cret"));
        assert_eq!(closed.metrics.listen.unwrap().to_string(), "127.0.0.1:9100");
        assert!(!format!("{closed:?}").contains("s3cret"));
        assert!(load(&[("RECUR_METRICS_TOKEN", " ")], None).is_err());
        assert!(load(&[("RECUR_METRICS_LISTEN", "9100")], None).is_err());
    }

    #[test]
    fn tls_needs_both_files() {
        let both = load(
            &[("RECUR_TLS_CERT", "/c.pem"), ("RECUR_TLS_KEY", "/k.pem")],
            None,
        )
        .unwrap();
        let files = both.tls.unwrap();
        assert_eq!(
            (files.cert.to_str(), files.key.to_str()),
            (Some("/c.pem"), Some("/k.pem"))
        );
        assert!(load(&[], None).unwrap().tls.is_none());
        for one in ["RECUR_TLS_CERT", "RECUR_TLS_KEY"] {
            let error = load(&[(one, "/x.pem")], None).unwrap_err();
            assert!(error.to_string().contains("set together"), "{error}");
        }
    }

    #[test]
    fn trusted_proxies_are_cidr_ranges() {
        let config = load(&[("RECUR_TRUSTED_PROXIES", "127.0.0.1/32, fd00::/8")], None).unwrap();
        assert!(config.trusted_proxies.trusts("127.0.0.1".parse().unwrap()));
        assert!(!config.trusted_proxies.trusts("127.0.0.2".parse().unwrap()));
        assert!(load(&[], None).unwrap().trusted_proxies.is_empty());
        for bad in ["10.0.0.0/33", "proxy.example", "127.0.0.1/32;10.0.0.0/8"] {
            let error = load(&[("RECUR_TRUSTED_PROXIES", bad)], None).unwrap_err();
            assert!(
                error.to_string().contains("RECUR_TRUSTED_PROXIES"),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn webhook_source_address_must_be_an_ip_address() {
        let config = load(&[("RECUR_WEBHOOK_SOURCE_ADDRESS", "127.0.0.2")], None).unwrap();
        assert_eq!(
            config.webhooks.source_address,
            Some("127.0.0.2".parse().unwrap())
        );
        for bad in ["127.0.0.2:80", "localhost", ""] {
            let error = load(&[("RECUR_WEBHOOK_SOURCE_ADDRESS", bad)], None).unwrap_err();
            assert!(
                error.to_string().contains("RECUR_WEBHOOK_SOURCE_ADDRESS"),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn jwt_keys_parse_in_order() {
        let config = load(&[("RECUR_JWT_KEYS", "new:AAAA,old:BBBB")], None).unwrap();
        let kids: Vec<_> = config.jwt.keys.iter().map(|k| k.kid.as_str()).collect();
        assert_eq!(kids, ["new", "old"]);
    }

    #[test]
    fn usd_rates_replace_reference_rates_and_a_bad_table_stops_the_start() {
        use recur_domain::money::Currency;
        let rates = load(&[("RECUR_USD_RATES", "EUR=2")], None)
            .unwrap()
            .usd_rates;
        let eur = Currency::parse("EUR").unwrap();
        let thb = Currency::parse("THB").unwrap();
        assert_eq!(rates.to_usd(150, eur).to_string(), "3.00");
        assert_eq!(rates.to_usd(10_000, thb).to_string(), "2.80");
        for bad in ["XAU=2300", "EUR=0", "EUR"] {
            let error = load(&[("RECUR_USD_RATES", bad)], None).unwrap_err();
            assert!(
                error.to_string().starts_with("RECUR_USD_RATES: "),
                "{error}"
            );
        }
    }
}
