//! Loopback addresses for local nodes: each node gets its own in 127.1.0.0/16, so
//! services on different nodes can listen on the same port as on real machines. Linux
//! answers on all of 127.0.0.0/8 without any configuration.
//!
//! Addresses are handed out lowest first, skipping those already given out in this
//! process (by any provider), those recorded by nodes on disk, and those where some
//! process already listens (another Corral's nodes, say).

use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::sync::Mutex;

use crate::sync::lock_unpoisoned;

/// Handed out in this process and not yet released, across providers. Addresses go in
/// and out whole, so a panicking holder cannot break the set.
static TAKEN: Mutex<BTreeSet<Ipv4Addr>> = Mutex::new(BTreeSet::new());

/// The lowest free address, reserved until [`release`]; `None` when all are taken.
pub(crate) fn allocate(recorded: &BTreeSet<Ipv4Addr>) -> Option<Ipv4Addr> {
    let listening = listening_addresses();
    let mut taken = lock_unpoisoned(&TAKEN);
    let free = (1..=0xfffe_u16)
        .map(|n| {
            let [high, low] = n.to_be_bytes();
            Ipv4Addr::new(127, 1, high, low)
        })
        .filter(|address| !matches!(address.octets()[3], 0 | 255))
        .find(|address| {
            !taken.contains(address) && !recorded.contains(address) && !listening.contains(address)
        })?;
    taken.insert(free);
    Some(free)
}

pub(crate) fn release(host: &str) {
    if let Ok(address) = host.parse::<Ipv4Addr>() {
        lock_unpoisoned(&TAKEN).remove(&address);
    }
}

/// IPv4 addresses with a listening TCP socket, from /proc/net/tcp.
fn listening_addresses() -> BTreeSet<Ipv4Addr> {
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else {
        return BTreeSet::new();
    };
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let local = fields.nth(1)?;
            let state = fields.nth(1)?;
            // 0A is TCP_LISTEN.
            if state != "0A" {
                return None;
            }
            let (address, _port) = local.split_once(':')?;
            // The kernel prints the address as a host-order (little-endian) integer.
            let raw = u32::from_str_radix(address, 16).ok()?;
            Some(Ipv4Addr::from(raw.to_le_bytes()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_unique_until_released() {
        let first = allocate(&BTreeSet::new()).unwrap();
        let second = allocate(&BTreeSet::from([first])).unwrap();
        assert_ne!(first, second);
        assert_eq!(first.octets()[..2], [127, 1]);
        release(&first.to_string());
        release(&second.to_string());
    }

    #[test]
    fn a_listening_socket_makes_its_address_taken() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let _ = &listener;
        assert!(listening_addresses().contains(&Ipv4Addr::LOCALHOST));
    }
}
