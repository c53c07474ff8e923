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

/// Why a URL's literal IP host may not be reached (names are checked by [`GuardedResolver`]).
pub fn literal_refusal(url: &url::Url) -> Option<String> {
    let ip = match url.host()? {
        url::Host::Ipv4(ip) => std::net::IpAddr::V4(ip),
        url::Host::Ipv6(ip) => std::net::IpAddr::V6(ip),
        url::Host::Domain(_) => return None,
    };
    refusal(ip).map(|why| format!("{ip} is a {why}, which webhooks may not reach"))
}
