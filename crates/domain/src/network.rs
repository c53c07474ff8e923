//! Which network addresses a webhook may reach (DESIGN §5, SSRF guard): only public unicast
//! addresses, unless the operator allows private ones.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is refused, for the delivery attempt's error text.
pub fn refusal(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refusal_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => refusal_v4(v4),
            None => refusal_v6(v6),
        },
    }
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
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("loopback address")
    } else if ip.is_unspecified() {
        Some("unspecified address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("private (unique local) address")
    } else if first & 0xffc0 == 0xfe80 {
        Some("link-local address")
    } else if ip.is_multicast() {
        Some("multicast address")
    } else if first == 0x2001 && ip.segments()[1] == 0x0db8 {
        Some("documentation address")
    } else if first == 0x0064 && ip.segments()[1] == 0xff9b {
        // NAT64 embeds an IPv4 address in the last 32 bits: judge that one.
        let [.., c, d] = ip.segments();
        refusal_v4(Ipv4Addr::from((u32::from(c) << 16) | u32::from(d)))
    } else {
        None
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
}
