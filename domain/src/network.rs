//! Which addresses hooks may reach: public ones, and those inside a range the operator
//! allows (`corral serve --hook-allow CIDR`). The decision on one address; resolving a
//! URL's host and checking each address it resolves to is the engine's
//! (`hooks::network`).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// An address range: an address and how many leading bits of it count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an address range: write ADDRESS/BITS, e.g. 10.0.0.0/8 or fd00::/8")]
pub struct BadCidr(String);

impl FromStr for Cidr {
    type Err = BadCidr;

    fn from_str(raw: &str) -> Result<Self, BadCidr> {
        let bad = || BadCidr(raw.to_owned());
        let (address, prefix) = match raw.trim().split_once('/') {
            Some((address, bits)) => (address, Some(bits.parse::<u8>().map_err(|_| bad())?)),
            None => (raw.trim(), None),
        };
        let network: IpAddr = address.parse().map_err(|_| bad())?;
        let max = if network.is_ipv4() { 32 } else { 128 };
        let prefix = prefix.unwrap_or(max);
        if prefix > max {
            return Err(bad());
        }
        Ok(Self { network, prefix })
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

impl Cidr {
    pub fn contains(&self, address: IpAddr) -> bool {
        let bits = u32::from(self.prefix);
        match (self.network, unmapped(address)) {
            (IpAddr::V4(network), IpAddr::V4(address)) => {
                let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
                u32::from(network) & mask == u32::from(address) & mask
            }
            (IpAddr::V6(network), IpAddr::V6(address)) => {
                let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
                u128::from(network) & mask == u128::from(address) & mask
            }
            _ => false,
        }
    }
}

/// An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) is that IPv4 address.
fn unmapped(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// What kind of non-public address `address` is, or `None` for a public one.
pub fn non_public_kind(address: IpAddr) -> Option<&'static str> {
    match unmapped(address) {
        IpAddr::V4(v4) => v4_kind(v4),
        IpAddr::V6(v6) => v6_kind(v6),
    }
}

fn v4_kind(address: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = address.octets();
    if address.is_loopback() {
        Some("loopback")
    } else if address.is_private() {
        Some("private")
    } else if address.is_link_local() {
        Some("link-local (cloud metadata)")
    } else if address.is_unspecified() || a == 0 {
        Some("unspecified")
    } else if a == 100 && (64..128).contains(&b) {
        Some("shared (carrier-grade NAT)")
    } else if address.is_multicast() || address.is_broadcast() || a >= 240 {
        Some("multicast or reserved")
    } else if address.is_documentation() || (a == 198 && (b == 18 || b == 19)) {
        Some("documentation or benchmarking")
    } else {
        None
    }
}

fn v6_kind(address: Ipv6Addr) -> Option<&'static str> {
    let first = address.segments()[0];
    if address.is_loopback() {
        Some("loopback")
    } else if address.is_unspecified() {
        Some("unspecified")
    } else if first & 0xfe00 == 0xfc00 {
        Some("private (unique local)")
    } else if first & 0xffc0 == 0xfe80 {
        Some("link-local")
    } else if address.is_multicast() {
        Some("multicast")
    } else if first == 0x2001 && address.segments()[1] == 0x0db8 {
        Some("documentation")
    } else {
        None
    }
}

/// Where this server's hooks may go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookNetwork {
    allowed: Vec<Cidr>,
}

impl HookNetwork {
    /// Public addresses, and also those in `allowed`.
    pub fn allowing(allowed: Vec<Cidr>) -> Self {
        Self { allowed }
    }

    pub fn allowed(&self) -> &[Cidr] {
        &self.allowed
    }

    /// `Ok` when `address` may be called.
    pub fn permits(&self, address: IpAddr) -> Result<(), &'static str> {
        match non_public_kind(address) {
            None => Ok(()),
            Some(_) if self.allowed.iter().any(|range| range.contains(address)) => Ok(()),
            Some(kind) => Err(kind),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn ranges_parse_and_contain() {
        let range: Cidr = "10.1.0.0/16".parse().unwrap();
        assert!(range.contains("10.1.200.3".parse().unwrap()));
        assert!(!range.contains("10.2.0.1".parse().unwrap()));
        assert!(range.contains("::ffff:10.1.0.9".parse().unwrap()));
        let one: Cidr = "127.0.0.1".parse().unwrap();
        assert_eq!(one.to_string(), "127.0.0.1/32");
        let all: Cidr = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains("8.8.8.8".parse().unwrap()));
        let v6: Cidr = "fd00::/8".parse().unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        for bad in ["10.0.0.0/33", "nonsense", "10.0.0.0/x", "::/129"] {
            assert!(bad.parse::<Cidr>().is_err(), "{bad}");
        }
    }

    #[test]
    fn only_public_addresses_unless_allowed() {
        let strict = HookNetwork::default();
        for address in [
            "127.0.0.1",
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(
                strict.permits(address.parse().unwrap()).is_err(),
                "{address}"
            );
        }
        for address in ["8.8.8.8", "1.1.1.1", "2606:4700::1111"] {
            assert!(
                strict.permits(address.parse().unwrap()).is_ok(),
                "{address}"
            );
        }
        let loopback = HookNetwork::allowing(vec!["127.0.0.0/8".parse().unwrap()]);
        assert!(loopback.permits("127.0.0.1".parse().unwrap()).is_ok());
        assert!(loopback.permits("10.0.0.1".parse().unwrap()).is_err());
    }
}
