//! Who may wait for a request head (SPEC §26.5): at most [`PER_PEER`] connections per peer
//! address, and [`IN_ALL`] in all, have yet to send their whole head; a new connection past either
//! bound closes the oldest one waiting (from that peer, else from anyone), never the new one. A
//! peer that opens connections and trickles bytes into them so holds at most eight threads and
//! never locks out the token holder, whose browser sends its head at once: only a flood of new
//! connections faster than a head is sent could close it, and a reload sends it again.
//!
//! Every local user connects from 127.0.0.1 (or another loopback address): the bound is per
//! address because that is all a server can tell peers apart by before their head arrives.

use std::net::{IpAddr, Shutdown, TcpStream};
use std::sync::Mutex;

/// Connections one peer address may hold open without a whole head.
pub const PER_PEER: usize = 8;
/// Connections all peers together may hold open without a whole head (every loopback address
/// is a peer: this bounds the threads they can hold).
pub const IN_ALL: usize = 128;

/// The connections waiting for their head, oldest first.
#[derive(Default)]
pub struct Waiting {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next: u64,
    queue: Vec<(u64, IpAddr, TcpStream)>,
}

impl Waiting {
    /// A new connection from `peer` waits for its head; the oldest one it displaces (past a
    /// bound) is shut down, which ends that connection's read. Returns the ticket [`done`]
    /// takes. `stream` is a handle to the same socket (`try_clone`).
    ///
    /// [`done`]: Waiting::done
    pub fn admit(&self, peer: IpAddr, stream: TcpStream) -> u64 {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let from_peer = inner.queue.iter().filter(|(_, p, _)| *p == peer).count();
        if from_peer >= PER_PEER
            && let Some(at) = inner.queue.iter().position(|(_, p, _)| *p == peer)
        {
            close(inner.queue.remove(at));
        }
        if inner.queue.len() >= IN_ALL {
            close(inner.queue.remove(0));
        }
        inner.next += 1;
        let ticket = inner.next;
        inner.queue.push((ticket, peer, stream));
        ticket
    }

    /// The connection with `ticket` has its head (or is gone): it no longer waits.
    pub fn done(&self, ticket: u64) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.queue.retain(|(t, _, _)| *t != ticket);
    }

    /// How many connections wait now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().unwrap().queue.len()
    }
}

fn close((_, _, stream): (u64, IpAddr, TcpStream)) {
    let _ = stream.shutdown(Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    /// The ninth connection of one peer closes that peer's oldest; another peer's stay.
    #[test]
    fn the_ninth_from_one_peer_closes_its_oldest() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let waiting = Waiting::default();
        let mut clients = Vec::new();
        let mut tickets = Vec::new();
        for i in 0..10 {
            clients.push(TcpStream::connect(addr).unwrap());
            let (server, _) = listener.accept().unwrap();
            let peer: IpAddr = if i == 0 {
                [127, 0, 0, 2]
            } else {
                [127, 0, 0, 1]
            }
            .into();
            tickets.push(waiting.admit(peer, server));
        }
        // 127.0.0.1 brought nine: its oldest (the second connection) was closed.
        assert_eq!(waiting.len(), 9);
        let mut byte = [0u8; 1];
        assert_eq!(clients[1].read(&mut byte).unwrap(), 0, "closed");
        clients[2]
            .set_read_timeout(Some(std::time::Duration::from_millis(50)))
            .unwrap();
        assert!(clients[2].read(&mut byte).is_err(), "still open");
        waiting.done(tickets[0]);
        assert_eq!(waiting.len(), 8);
    }
}
