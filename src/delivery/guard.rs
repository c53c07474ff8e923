//! The SSRF guard: webhook deliveries reach only public addresses unless the operator allows
//! private ones. The check runs in the HTTP client's resolver, on the addresses actually
//! connected to, so a name that resolves to an internal address is refused however it is
//! spelled (and cannot be swapped between check and connect).

use std::net::SocketAddr;

use recur_domain::network::refusal;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// A resolver that drops internal addresses.
#[derive(Debug, Clone, Copy)]
pub struct GuardedResolver;

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let host = name.as_str().to_string();
            let resolved: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = resolved
                .iter()
                .copied()
                .filter(|addr| refusal(addr.ip()).is_none())
                .collect();
            if allowed.is_empty() {
                let why = resolved
                    .first()
                    .and_then(|addr| refusal(addr.ip()))
                    .unwrap_or("no address");
                return Err(
                    format!("{host} resolves to a {why}, which webhooks may not reach").into(),
                );
            }
            let addrs: Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

/// The same judgement of a URL whose host is an IP literal (which never reaches a resolver),
/// made before each delivery as at create.
pub use recur_domain::network::literal_refusal;

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    async fn resolve(host: &str) -> Result<Vec<SocketAddr>, String> {
        match GuardedResolver.resolve(Name::from_str(host).unwrap()).await {
            Ok(addrs) => Ok(addrs.collect()),
            Err(error) => Err(error.to_string()),
        }
    }

    #[tokio::test]
    async fn every_spelling_of_an_internal_address_is_refused() {
        for host in [
            "localhost",
            "127.0.0.1",
            "2130706433",
            "::1",
            "::ffff:127.0.0.1",
            "::127.0.0.1",
            "::a00:1",
            "2002:7f00:1::1",
            "2002:a9fe:a9fe::",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::a00:1",
            "fec0::1",
            "fd00::1",
            "fe80::1",
        ] {
            let error = resolve(host).await.expect_err(host);
            assert!(
                error.contains("which webhooks may not reach"),
                "{host}: {error}"
            );
        }
    }

    #[tokio::test]
    async fn public_addresses_resolve() {
        for host in ["93.184.216.34", "2606:4700:4700::1111", "2002:808:808::1"] {
            let addrs = resolve(host).await.expect(host);
            assert_eq!(addrs.len(), 1, "{host}");
        }
    }
}
