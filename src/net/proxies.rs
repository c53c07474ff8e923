//! Trusted proxies (`RECUR_TRUSTED_PROXIES`) and the rule that finds the client address behind
//! them.

use std::fmt;
use std::net::IpAddr;

use anyhow::{bail, Context};

/// One address range: an address and a prefix length (`10.0.0.0/8`, `fd00::/8`). A bare
/// address is the range of that address alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `ADDRESS/PREFIX` or `ADDRESS`. Host bits set below the prefix are refused, so a
    /// typo (`10.0.0.1/8`) cannot silently mean something wider than it says.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network = canonical(
            address
                .parse::<IpAddr>()
                .with_context(|| format!("{text:?} is not an IP address or CIDR range"))?,
        );
        let bits = bits_of(network);
        let prefix = match prefix {
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= bits)
                .with_context(|| format!("{text:?} has no valid prefix length (0 to {bits})"))?,
            None => bits,
        };
        if masked(network, prefix) != value(network) {
            bail!("{text:?} has address bits set beyond its /{prefix} prefix");
        }
        Ok(Self { network, prefix })
    }

    /// Whether `address` is in the range (an IPv4-mapped IPv6 address counts as IPv4).
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        address.is_ipv4() == self.network.is_ipv4()
            && masked(address, self.prefix) == value(self.network)
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// The proxies whose forwarding headers are believed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<Cidr>);

impl TrustedProxies {
    /// Parses a comma-separated list of CIDR ranges (empty: trust no one).
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        text.split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(Cidr::parse)
            .collect::<anyhow::Result<_>>()
            .map(Self)
    }

    /// Whether no proxy is trusted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `address` is in a trusted range.
    pub fn trusts(&self, address: IpAddr) -> bool {
        self.0.iter().any(|range| range.contains(address))
    }

    /// The client address of a connection from `peer` whose forwarding header lists `hops`
    /// (left to right, as sent; `None` for an entry that is not an address).
    ///
    /// Starting from the peer, the chain is walked leftwards while the hop is a trusted proxy;
    /// the client is the first hop that is not, or, when the chain ends first (the header is
    /// exhausted or names no address), the last hop reached. A peer that is not trusted is
    /// itself the client: its headers are ignored.
    pub fn client_address(&self, peer: IpAddr, hops: &[Option<IpAddr>]) -> IpAddr {
        let mut client = canonical(peer);
        for hop in hops.iter().rev() {
            if !self.trusts(client) {
                break;
            }
            match hop {
                Some(address) => client = canonical(*address),
                None => break,
            }
        }
        client
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it maps.
fn canonical(address: IpAddr) -> IpAddr {
    address.to_canonical()
}

fn bits_of(address: IpAddr) -> u8 {
    match address {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    }
}

fn value(address: IpAddr) -> u128 {
    match address {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

/// The address with every bit beyond the first `prefix` cleared.
fn masked(address: IpAddr, prefix: u8) -> u128 {
    let bits = bits_of(address);
    let host_bits = u32::from(bits - prefix.min(bits));
    let mask = u128::MAX.checked_shl(host_bits).unwrap_or(0);
    value(address) & mask
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn trusted(text: &str) -> TrustedProxies {
        TrustedProxies::parse(text).unwrap()
    }

    #[test]
    fn ranges_parse_and_match() {
        let ranges = trusted("10.0.0.0/8, 192.168.1.7, fd00::/8,127.0.0.1/32");
        assert!(ranges.trusts(ip("10.200.3.4")));
        assert!(!ranges.trusts(ip("11.0.0.1")));
        assert!(ranges.trusts(ip("192.168.1.7")));
        assert!(!ranges.trusts(ip("192.168.1.8")));
        assert!(ranges.trusts(ip("fd12::1")));
        assert!(!ranges.trusts(ip("fe80::1")));
        assert!(ranges.trusts(ip("::ffff:127.0.0.1")), "IPv4-mapped");
        assert!(!ranges.trusts(ip("::1")));
        assert!(trusted("0.0.0.0/0").trusts(ip("203.0.113.7")));
        assert!(!trusted("0.0.0.0/0").trusts(ip("2001:db8::1")));
        assert!(trusted("").is_empty());
        assert_eq!(Cidr::parse("10.0.0.0/8").unwrap().to_string(), "10.0.0.0/8");
    }

    #[test]
    fn invalid_ranges_are_refused() {
        for bad in [
            "10.0.0.0/33",
            "fd00::/129",
            "10.0.0.1/8",
            "10.0.0.0/",
            "10.0.0.0/x",
            "ten",
            "10.0.0.0/8/8",
            "[::1]",
        ] {
            assert!(TrustedProxies::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_client_is_the_right_most_untrusted_hop() {
        let proxies = trusted("127.0.0.1/32, 10.0.0.0/8");
        let hops = |list: &[&str]| -> Vec<Option<IpAddr>> {
            list.iter().map(|h| h.parse().ok()).collect()
        };
        // One proxy: the address it appended.
        assert_eq!(
            proxies.client_address(ip("127.0.0.1"), &hops(&["203.0.113.7"])),
            ip("203.0.113.7")
        );
        // Whatever the client wrote to the left of the untrusted hop is not believed.
        assert_eq!(
            proxies.client_address(
                ip("127.0.0.1"),
                &hops(&["198.51.100.9", "203.0.113.7", "10.1.2.3"])
            ),
            ip("203.0.113.7")
        );
        // An untrusted peer's header is ignored.
        assert_eq!(
            proxies.client_address(ip("192.0.2.1"), &hops(&["203.0.113.7"])),
            ip("192.0.2.1")
        );
        // No header: the peer.
        assert_eq!(
            proxies.client_address(ip("127.0.0.1"), &[]),
            ip("127.0.0.1")
        );
        // Every hop trusted: the left-most one.
        assert_eq!(
            proxies.client_address(ip("127.0.0.1"), &hops(&["10.9.9.9", "10.0.0.2"])),
            ip("10.9.9.9")
        );
        // An entry that is not an address ends the chain at the last hop reached.
        assert_eq!(
            proxies.client_address(
                ip("127.0.0.1"),
                &hops(&["203.0.113.7", "unknown", "10.0.0.2"])
            ),
            ip("10.0.0.2")
        );
        // IPv4-mapped peers are trusted as their IPv4 address; the result is canonical.
        assert_eq!(
            proxies.client_address(ip("::ffff:127.0.0.1"), &hops(&["::ffff:203.0.113.7"])),
            ip("203.0.113.7")
        );
        // Nobody trusted: always the peer.
        assert_eq!(
            TrustedProxies::default().client_address(ip("127.0.0.1"), &hops(&["203.0.113.7"])),
            ip("127.0.0.1")
        );
    }
}
