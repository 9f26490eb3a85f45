//! Loopback addresses for local nodes: each node gets its own in 127.1.0.0/16, so
//! services on different nodes can listen on the same port as on real machines. Linux
//! answers on all of 127.0.0.0/8 without any configuration.
//!
//! Addresses are handed out lowest first, skipping those already given out in this
//! process (by any provider), those recorded by nodes on disk, and those where some
//! process already listens (another Corral's nodes, say).
//!
//! The last two are read at most once a second ([`Occupied`]): both reads grow with
//! the nodes there are (a record file per node; a line per socket, which the kernel
//! walks from the start for every page it prints), so reading them for every node of
//! a 1,000-node create cost more than the nodes themselves. What this process hands
//! out is always exact; a foreign listener younger than a second makes that node's
//! sshd fail to bind, as any listener appearing after the read always could.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::sync::lock_unpoisoned;

/// Handed out in this process and not yet released, across providers. Addresses go in
/// and out whole, so a panicking holder cannot break the set.
static TAKEN: Mutex<BTreeSet<Ipv4Addr>> = Mutex::new(BTreeSet::new());

/// How long one read of the occupied addresses serves the allocations after it.
const OCCUPIED_FRESH_FOR: Duration = Duration::from_secs(1);

/// The addresses in use outside this process's allocations, as last read.
#[derive(Debug, Default)]
pub struct Occupied {
    /// Replaced whole, so a panicking reader cannot break it.
    last: Mutex<Option<(Instant, Arc<BTreeSet<Ipv4Addr>>)>>,
}

impl Occupied {
    /// The last read if it is under a second old, else a new one by `read`. Callers
    /// arriving during a read wait for it rather than read again.
    pub fn read(&self, read: impl FnOnce() -> BTreeSet<Ipv4Addr>) -> Arc<BTreeSet<Ipv4Addr>> {
        let mut last = lock_unpoisoned(&self.last);
        if let Some((at, occupied)) = last.as_ref() {
            if at.elapsed() < OCCUPIED_FRESH_FOR {
                return occupied.clone();
            }
        }
        let occupied = Arc::new(read());
        *last = Some((Instant::now(), occupied.clone()));
        occupied
    }
}

/// The lowest address neither handed out in this process nor `occupied`, reserved
/// until [`release`]; `None` when all are taken.
pub fn allocate(occupied: &BTreeSet<Ipv4Addr>) -> Option<Ipv4Addr> {
    let mut taken = lock_unpoisoned(&TAKEN);
    let free = (1..=0xfffe_u16)
        .map(|n| {
            let [high, low] = n.to_be_bytes();
            Ipv4Addr::new(127, 1, high, low)
        })
        .filter(|address| !matches!(address.octets()[3], 0 | 255))
        .find(|address| !taken.contains(address) && !occupied.contains(address))?;
    taken.insert(free);
    Some(free)
}

pub fn release(host: &str) {
    if let Ok(address) = host.parse::<Ipv4Addr>() {
        lock_unpoisoned(&TAKEN).remove(&address);
    }
}

/// IPv4 addresses with a listening TCP socket, from /proc/net/tcp.
pub fn listening_addresses() -> BTreeSet<Ipv4Addr> {
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
    fn occupied_addresses_are_read_again_only_after_a_second() {
        let occupied = Occupied::default();
        let reads = std::cell::Cell::new(0);
        let read = || {
            reads.set(reads.get() + 1);
            BTreeSet::from([Ipv4Addr::new(127, 1, 0, 1)])
        };
        let first = occupied.read(read);
        let second = occupied.read(read);
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(reads.get(), 1);
        // An address occupied outside is never handed out.
        let free = allocate(&first).unwrap();
        assert_ne!(free, Ipv4Addr::new(127, 1, 0, 1));
        release(&free.to_string());
        *lock_unpoisoned(&occupied.last) = Some((
            Instant::now() - OCCUPIED_FRESH_FOR,
            Arc::new(BTreeSet::new()),
        ));
        occupied.read(read);
        assert_eq!(reads.get(), 2);
    }

    #[test]
    fn a_listening_socket_makes_its_address_taken() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let _ = &listener;
        assert!(listening_addresses().contains(&Ipv4Addr::LOCALHOST));
    }
}
