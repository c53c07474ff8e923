//! Which network addresses a webhook may reach (DESIGN §5, SSRF guard): only public unicast
//! addresses, unless the operator allows private ones. [`refusal`] judges one address, however
//! it is spelled; [`literal_refusal`] applies it to a URL whose host is an IP literal, at create
//! and again before each delivery (names are judged on the addresses they resolve to).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is refused, for the delivery attempt's error text. An IPv6 address that
/// embeds an IPv4 one (IPv4-mapped, IPv4-compatible, 6to4, NAT64) is judged by the IPv4 rules.
pub fn refusal(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refusal_v4(v4),
        IpAddr::V6(v6) => refusal_v6(v6),
    }
}

/// Why a URL whose host is an IP literal may not be reached; `None` for a public address or a
/// name. The `url` crate has already normalized the host (`2130706433`, `0x7f.1` and `127.1`
/// are `127.0.0.1`; `[::ffff:7f00:1]` is an IPv6 literal).
pub fn literal_refusal(url: &url::Url) -> Option<String> {
    let ip = match url.host()? {
        url::Host::Ipv4(ip) => IpAddr::V4(ip),
        url::Host::Ipv6(ip) => IpAddr::V6(ip),
        url::Host::Domain(_) => return None,
    };
    refusal(ip).map(|why| format!("{ip} is a {why}, which webhooks may not reach"))
}

fn refusal_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("loopback address")
    } else if ip.is_private() {
        Some("private address")
    } else if ip.is_link_local() {
        Some("link-local or cloud metadata address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("carrier-grade NAT address")
    } else if ip.is_unspecified() || a == 0 {
        Some("unspecified address")
    } else if ip.is_broadcast() || ip.is_multicast() || a >= 240 {
        Some("broadcast, multicast or reserved address")
    } else if ip.is_documentation() || (a == 198 && (b == 18 || b == 19)) {
        Some("documentation or benchmarking address")
    } else {
        None
    }
}

fn refusal_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let segments = ip.segments();
    let first = segments[0];
    if ip.is_loopback() {
        Some("loopback address")
    } else if ip.is_unspecified() {
        Some("unspecified address")
    } else if let Some(v4) = embedded_ipv4(ip) {
        refusal_v4(v4)
    } else if first & 0xfe00 == 0xfc00 {
        Some("private (unique local) address")
    } else if first & 0xffc0 == 0xfe80 {
        Some("link-local address")
    } else if first & 0xffc0 == 0xfec0 {
        Some("site-local address")
    } else if ip.is_multicast() {
        Some("multicast address")
    } else if first == 0x2001 && segments[1] == 0x0db8 {
        Some("documentation address")
    } else if first == 0x0064 && segments[1] == 0xff9b && segments[2] == 0x0001 {
        // Local-use NAT64 (64:ff9b:1::/48): a translator of the operator's own network, whose
        // prefix length (and so where the IPv4 address sits) only that network knows.
        Some("local-use NAT64 address")
    } else {
        None
    }
}

/// The IPv4 address an IPv6 spelling carries: IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`), 6to4 (`2002:AABB:CCDD::/48`) and NAT64 (`64:ff9b::a.b.c.d`).
fn embedded_ipv4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let from = |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    match s {
        [0, 0, 0, 0, 0, 0xffff | 0, high, low] => Some(from(high, low)),
        [0x2002, high, low, ..] => Some(from(high, low)),
        [0x0064, 0xff9b, 0, 0, 0, 0, high, low] => Some(from(high, low)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> bool {
        refusal(text.parse().unwrap()).is_some()
    }

    #[test]
    fn internal_ranges_are_refused() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert!(refused(ip), "{ip}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for ip in [
            "93.184.216.34",
            "1.1.1.1",
            "100.128.0.1",
            "172.32.0.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(!refused(ip), "{ip}");
        }
    }

    #[test]
    fn ipv4_compatible_addresses_are_judged_by_their_ipv4_address() {
        for ip in [
            "::127.0.0.1",
            "::10.0.0.1",
            "::169.254.169.254",
            "::192.168.0.1",
        ] {
            assert!(refused(ip), "{ip}");
        }
        assert_eq!(
            refusal("::7f00:1".parse().unwrap()),
            Some("loopback address")
        );
        assert!(!refused("::8.8.8.8"));
        // `::1` and `::` keep their IPv6 meaning.
        assert_eq!(refusal("::1".parse().unwrap()), Some("loopback address"));
        assert_eq!(refusal("::".parse().unwrap()), Some("unspecified address"));
    }

    #[test]
    fn six_to_four_addresses_are_judged_by_their_ipv4_address() {
        // 2002:AABB:CCDD::/48 carries AA.BB.CC.DD.
        for ip in [
            "2002:7f00:1::",
            "2002:7f00:1::1",
            "2002:a00:1:ffff::1",
            "2002:a9fe:a9fe::",
            "2002:c0a8:101::42",
            "2002:6440:1::",
        ] {
            assert!(refused(ip), "{ip}");
        }
        assert_eq!(
            refusal("2002:a9fe:a9fe::1".parse().unwrap()),
            Some("link-local or cloud metadata address")
        );
        assert!(!refused("2002:808:808::1"));
    }

    #[test]
    fn site_local_addresses_are_refused() {
        for ip in ["fec0::1", "fed0::1", "feff:ffff::1"] {
            assert_eq!(
                refusal(ip.parse().unwrap()),
                Some("site-local address"),
                "{ip}"
            );
        }
    }

    #[test]
    fn nat64_addresses_are_judged_by_their_ipv4_address_or_refused_when_local() {
        assert!(refused("64:ff9b::7f00:1"));
        assert!(refused("64:ff9b::a00:1"));
        assert!(!refused("64:ff9b::808:808"));
        assert_eq!(
            refusal("64:ff9b:1::a00:1".parse().unwrap()),
            Some("local-use NAT64 address")
        );
    }

    #[test]
    fn ipv4_mapped_addresses_are_judged_by_their_ipv4_address() {
        for ip in [
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:0.0.0.0",
            "::ffff:100.64.0.1",
        ] {
            assert!(refused(ip), "{ip}");
        }
        assert!(!refused("::ffff:1.1.1.1"));
    }

    fn literal(url: &str) -> Option<String> {
        literal_refusal(&url::Url::parse(url).unwrap())
    }

    #[test]
    fn url_hosts_are_judged_in_every_spelling() {
        for url in [
            "https://127.0.0.1/hooks",
            "https://2130706433/hooks",
            "https://0x7f.1/hooks",
            "https://127.1/hooks",
            "https://0177.0.0.1/hooks",
            "https://127.0.0.1./hooks",
            "https://[::1]/hooks",
            "https://[::ffff:127.0.0.1]/hooks",
            "https://[::ffff:7f00:1]/hooks",
            "https://[::127.0.0.1]/hooks",
            "https://[2002:7f00:1::]/hooks",
            "https://[64:ff9b::169.254.169.254]/hooks",
            "https://[fec0::1]:8443/hooks",
            "https://[fd00::1]/hooks",
            "https://169.254.169.254/latest/meta-data",
        ] {
            let why = literal(url).unwrap_or_else(|| panic!("{url} is refused"));
            assert!(why.ends_with("which webhooks may not reach"), "{why}");
        }
        assert_eq!(
            literal("https://2130706433/").as_deref(),
            Some("127.0.0.1 is a loopback address, which webhooks may not reach")
        );
    }

    #[test]
    fn names_and_public_literals_are_left_to_the_connection() {
        for url in [
            "https://localhost/hooks",
            "https://merchant.example/hooks",
            "https://93.184.216.34/hooks",
            "https://[2606:4700:4700::1111]/hooks",
        ] {
            assert_eq!(literal(url), None, "{url}");
        }
    }
}
