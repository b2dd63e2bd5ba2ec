//! chat: a chat-room server over loopback TCP (seed 003's Volanomark), a
//! workload on the load-curve engine. It stresses what Volanomark did: the
//! scheduler (two threads per client, most of them blocked in read) and the
//! TCP stack (every message fanned out to a room).
//!
//! The load is the total number of clients, spread over `rooms` rooms
//! (client i in room i mod R, so rooms differ by at most one client); a
//! room needs two clients, so the smallest load is 2R and the default
//! ladder starts there. Each client is one thread of the client process
//! with one connection; the server is one process with one thread per
//! connection. Every message a client sends is relayed by its connection's
//! server thread to every other client of its room (a write per member,
//! under that member's lock so that messages never interleave).
//!
//! Clients run a closed loop, Volanomark's kind of pacing: a client sends
//! one `size`-byte message carrying its send time, then receives; once it
//! has received as many messages as its room has other members it sends
//! its next one. So each member has at most about two rounds of messages
//! in flight, queues stay short, and the delivery latency measures the
//! relay, not a backlog.
//!
//! One operation is one message delivered to one client; its latency runs
//! from the send time in the message (CLOCK_MONOTONIC, the engine's clock)
//! to its receipt (`Client::started_ns`). Throughput is messages delivered
//! per second: a room of C clients delivers C − 1 per message sent.
//!
//! Ending: the engine stops the clients after the window; each client that
//! leaves closes its connection, and its server thread then tells the rest
//! of its room (a "left" notice), so that a client blocked waiting for a
//! message it will never get returns (with an operation outside the window,
//! which does not count) and sees the stop. Nothing waits forever.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use touchstone_harness::clock::now_ns;
use touchstone_harness::workload::{
    check_open_files, tasks_limit, Client, ClientContext, ClientKind, ServerContext, ServerLink,
    TrialContext, Workload,
};
use touchstone_harness::{BenchError, Fallible};

use crate::family::{Family, RunContext};
use crate::params::{Param, Point};
use crate::support::echo_server;
use crate::support::server_workers;
use crate::support::sockets::{
    connect_loopback, inet_socket, read_or_eof, send_all, set_nodelay, TrialListener,
};
use crate::support::sys::{self, close};

pub const NAME: &str = "chat";
pub const SUMMARY: &str =
    "a chat-room server on 127.0.0.1: every message relayed to the rest of its room, a thread per connection (seed 003's Volanomark)";
/// What one operation is: one message delivered to one client.
pub const OPERATION: &str = "message";
/// The most clients in all: two threads each (client and server side).
pub const MAX_LOAD: u32 = 1024;
/// The most clients in one room.
pub const MAX_ROOM: u32 = 256;
/// A message's header: kind, sender, sequence number, send time.
const HEADER: usize = 24;

pub const ROOMS: Param = Param::int("rooms", 1, 256)
    .measured(&["1"])
    .help("chat rooms; the load (total clients) is spread over them, at least 2 per room");

pub const SIZE: Param = Param::size("size", HEADER as u64, 64 << 10)
    .measured(&["100"])
    .help("message size in bytes (hackbench's are 100)");

pub const PARAMS: &[Param] = &[ROOMS, SIZE];

/// Message kinds.
const MESSAGE: u32 = 1;
/// A member of the room has left (only ever after the trial's window).
const LEFT: u32 = 2;

/// Build the workload from a point of its parameters.
pub fn build(p: &Point, _: &RunContext) -> Result<Box<dyn Workload>, String> {
    Ok(Box::new(Chat::new(
        p.num(ROOMS.name) as u32,
        p.num(SIZE.name) as usize,
    )?))
}

/// The workload: parameters, and the listening socket of the current trial.
pub struct Chat {
    pub rooms: u32,
    pub size: usize,
    listener: TrialListener,
}

impl Chat {
    pub fn new(rooms: u32, size: usize) -> Result<Chat, String> {
        if rooms == 0 {
            return Err("rooms:0: a chat needs at least one room".into());
        }
        if !(HEADER..=64 << 10).contains(&size) {
            return Err(format!("size:{size}: a message is {HEADER} to 65536 bytes"));
        }
        Ok(Chat {
            rooms,
            size,
            listener: TrialListener::NONE,
        })
    }

    /// The room of client `i`, and how many clients it has, at `load`.
    fn room_of(&self, i: u32, load: u32) -> (u32, u32) {
        let room = i % self.rooms;
        let size = load / self.rooms + u32::from(room < load % self.rooms);
        (room, size)
    }
}

impl Workload for Chat {
    fn client_kind(&self) -> ClientKind {
        ClientKind::Threads
    }
    fn op_types(&self) -> &[&str] {
        &[OPERATION]
    }
    fn min_load(&self) -> u32 {
        2 * self.rooms
    }
    fn max_load(&self) -> Option<u32> {
        Some(MAX_LOAD.min(MAX_ROOM * self.rooms))
    }
    /// Each room at least 2 clients; the threads (two per client) within
    /// `ulimit -u`; each side's descriptors (one per client) within
    /// `ulimit -n`.
    fn check_load(&self, load: u32) -> Result<(), String> {
        if load < 2 * self.rooms {
            return Err(format!(
                "load {load} over {} room(s): every room needs at least 2 clients (a message \
                 goes to the others of its room); use a load of at least {}",
                self.rooms,
                2 * self.rooms
            ));
        }
        let threads = 2 * load as u64 + 8;
        if threads > tasks_limit() {
            return Err(format!(
                "load {load} needs {threads} threads (one per connection on each side), above \
                 this user's limit of {} (`ulimit -u`); raise it or use a smaller load",
                tasks_limit()
            ));
        }
        check_open_files(load, load as u64 + 32, "the chat server process")
    }

    fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
        let backlog = ctx.load.clamp(128, 4096) as libc::c_int;
        self.listener.open(backlog)
    }

    fn release(&mut self) {
        self.listener.close();
    }

    fn has_server(&self) -> bool {
        true
    }

    /// Accept every client (each says which it is), then one thread per
    /// connection relays its messages to the rest of its room.
    fn serve(&self, ctx: &ServerContext, link: &mut dyn ServerLink) -> Fallible {
        link.ready()?;
        let mut members: Vec<Member> = Vec::with_capacity(ctx.load as usize);
        let result = (|| {
            let mut ids = vec![u32::MAX; ctx.load as usize];
            let all_came = echo_server::accept_n(self.listener.fd, ctx.load, link, &mut |fd| {
                members.push(Member::new(fd));
                // Which client this is (sent at once after connecting).
                let mut id = [0u8; 4];
                sys::read_exact(fd, &mut id)
                    .map_err(|e| BenchError(format!("read a client's id: {e}")))?;
                let id = u32::from_ne_bytes(id);
                if id >= ctx.load || ids[id as usize] != u32::MAX {
                    return Err(BenchError(format!("a client says it is {id}")));
                }
                ids[id as usize] = (members.len() - 1) as u32;
                set_nodelay(fd)
            })?;
            if !all_came {
                return Ok(());
            }
            // Room r's members, by index into `members`.
            let mut rooms: Vec<Vec<usize>> = vec![Vec::new(); self.rooms as usize];
            for (id, &m) in ids.iter().enumerate() {
                rooms[self.room_of(id as u32, ctx.load).0 as usize].push(m as usize);
            }
            let mut room_of_member = vec![0usize; members.len()];
            for (r, list) in rooms.iter().enumerate() {
                for &m in list {
                    room_of_member[m] = r;
                }
            }
            self.relay_until_everyone_left(&members, &rooms, &room_of_member, link)
        })();
        for m in &members {
            close(m.fd);
        }
        result
    }

    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        let (_, room_size) = self.room_of(ctx.client, ctx.load);
        if room_size < 2 {
            return Err(BenchError(format!(
                "load {}: client {}'s room has nobody else in it",
                ctx.load, ctx.client
            )));
        }
        let fd = inet_socket(libc::SOCK_STREAM)?;
        let r = (|| {
            connect_loopback(fd, self.listener.port)?;
            set_nodelay(fd)?;
            sys::write_all(fd, &ctx.client.to_ne_bytes())
                .map_err(|e| BenchError(format!("write: {e}")))?;
            Ok(())
        })();
        if let Err(e) = r {
            close(fd);
            return Err(e);
        }
        let mut msg = vec![0x5au8; self.size];
        msg[4..8].copy_from_slice(&ctx.client.to_ne_bytes());
        Ok(Box::new(ChatClient {
            fd,
            peers: room_size - 1,
            owed: 0,
            seq: 0,
            msg,
            got: vec![0u8; self.size],
            origin: None,
        }))
    }
}

/// How often the server looks at `should_stop` while its threads relay.
const POLL_MS: libc::c_int = 50;

/// One connection on the server side.
struct Member {
    fd: RawFd,
    /// Held while a message is written to this member.
    write: Mutex<()>,
    /// The member has left: write no more to it.
    gone: AtomicBool,
}

impl Member {
    fn new(fd: RawFd) -> Member {
        Member {
            fd,
            write: Mutex::new(()),
            gone: AtomicBool::new(false),
        }
    }
}

impl Chat {
    /// One thread per member; the calling thread watches for the stop and
    /// then shuts every connection so that the threads return.
    fn relay_until_everyone_left(
        &self,
        members: &[Member],
        rooms: &[Vec<usize>],
        room_of_member: &[usize],
        link: &mut dyn ServerLink,
    ) -> Fallible {
        let running = AtomicUsize::new(members.len());
        std::thread::scope(|s| {
            let mut handles = Vec::with_capacity(members.len());
            for (i, _) in members.iter().enumerate() {
                let room = &rooms[room_of_member[i]];
                let running = &running;
                let h = std::thread::Builder::new()
                    .name("chat-server".into())
                    .spawn_scoped(s, move || {
                        let r = self.relay(i, members, room);
                        running.fetch_sub(1, Ordering::Release);
                        r
                    });
                match h {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        shut_all(members);
                        return Err(BenchError(format!("cannot start a server thread: {e}")));
                    }
                }
            }
            while running.load(Ordering::Acquire) > 0 {
                if link.should_stop() {
                    shut_all(members);
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(POLL_MS as u64));
            }
            server_workers::join_all(handles, Ok(()))
        })
    }

    /// Member `i`'s thread: read its messages and write each to every other
    /// member of its room; when it leaves, tell them.
    fn relay(&self, i: usize, members: &[Member], room: &[usize]) -> Fallible {
        let me = &members[i];
        let mut buf = vec![0u8; self.size];
        let result = loop {
            match read_or_eof(me.fd, &mut buf) {
                Ok(true) => {}
                Ok(false) => break Ok(()),
                Err(e) => break Err(e),
            }
            for &j in room {
                if j != i {
                    deliver(&members[j], &buf);
                }
            }
        };
        me.gone.store(true, Ordering::Release);
        buf[..4].copy_from_slice(&LEFT.to_ne_bytes());
        for &j in room {
            if j != i {
                deliver(&members[j], &buf);
            }
        }
        result
    }
}

/// Write `msg` to `m` unless it has gone; a member found gone is marked.
fn deliver(m: &Member, msg: &[u8]) {
    if m.gone.load(Ordering::Acquire) {
        return;
    }
    let _held = m.write.lock().unwrap_or_else(|p| p.into_inner());
    if send_all(m.fd, msg).is_err() {
        // EPIPE or ECONNRESET: it left (after the trial); nobody to tell.
        m.gone.store(true, Ordering::Release);
    }
}

/// Shut every connection both ways (the stop: blocked reads return).
fn shut_all(members: &[Member]) {
    for m in members {
        // SAFETY: shutdown on our own socket; errors (already gone) are moot.
        unsafe { libc::shutdown(m.fd, libc::SHUT_RDWR) };
    }
}

/// One client: its connection, and where it is in its round.
struct ChatClient {
    fd: RawFd,
    /// The other members of its room: messages per round.
    peers: u32,
    /// Messages still to receive before it sends its next one.
    owed: u32,
    seq: u64,
    /// Its outgoing message: kind, sender, sequence, send time, padding.
    msg: Vec<u8>,
    got: Vec<u8>,
    /// The send time of the message just delivered.
    origin: Option<u64>,
}

impl Client for ChatClient {
    /// Timed: when its round is complete, the send of its next message
    /// (stamped with the time); then the blocking read of one message.
    /// Its latency runs from that message's send time (`started_ns`).
    #[inline]
    fn op(&mut self) -> Fallible<usize> {
        if self.owed == 0 {
            self.seq += 1;
            self.msg[..4].copy_from_slice(&MESSAGE.to_ne_bytes());
            self.msg[8..16].copy_from_slice(&self.seq.to_ne_bytes());
            self.msg[16..24].copy_from_slice(&now_ns().to_ne_bytes());
            send_all(self.fd, &self.msg).map_err(|e| BenchError(format!("send: {e}")))?;
            self.owed = self.peers;
        }
        if !read_or_eof(self.fd, &mut self.got)? {
            return Err("read: the server closed the connection".into());
        }
        let kind = u32::from_ne_bytes(self.got[..4].try_into().unwrap());
        if kind == LEFT {
            // Only after the window: this operation does not count.
            self.origin = None;
            return Ok(0);
        }
        self.owed -= 1;
        self.origin = Some(u64::from_ne_bytes(self.got[16..24].try_into().unwrap()));
        Ok(0)
    }

    fn started_ns(&self) -> Option<u64> {
        self.origin
    }
}

impl Drop for ChatClient {
    fn drop(&mut self) {
        close(self.fd);
    }
}

/// A workload (measured as a load curve over the spec's `load` ladder and
/// `--cpus`), in the report group of system workloads.
pub const FAMILY: Family = Family {
    params: PARAMS,
    ..Family::workload(NAME, "workload", SUMMARY, OPERATION, build)
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{short_trial, trial_is_sound};
    use touchstone_harness::workload::{
        cpu::usable_cpus, run_trial, validate, SweepPlan, TrialOutcome,
    };

    fn assert_sound(o: &TrialOutcome, load: u32) {
        trial_is_sound(o, load as usize).unwrap();
        assert!(o.clients.iter().all(|c| c.window_ops > 0));
        let d = o.service_demand();
        assert!(d.client_ns_per_op > 0.0 && d.server_ns_per_op.is_some_and(|s| s > 0.0));
        assert_eq!(o.pids.len(), 2, "the server process and the client process");
    }

    #[test]
    fn messages_reach_every_other_member_of_each_room() {
        let cpus = usable_cpus().unwrap();
        for (rooms, load, size) in [(1, 2, 100), (1, 5, 24), (2, 7, 1000)] {
            let mut w = Chat::new(rooms, size).unwrap();
            let o = run_trial(&mut w, load, &cpus, &short_trial(), 0)
                .unwrap_or_else(|e| panic!("{rooms} rooms, load {load}: {e}"));
            assert_sound(&o, load);
            assert_eq!(w.listener.fd, -1, "the listener is released");
            // Closed loop: every member gets about as many messages as its
            // room delivers to each member (one per other member per round).
            let per_client: Vec<u64> = o.clients.iter().map(|c| c.window_ops).collect();
            let (lo, hi) = (
                per_client.iter().min().unwrap(),
                per_client.iter().max().unwrap(),
            );
            if rooms == 1 {
                assert!(*hi <= 2 * *lo + 8, "rounds drift apart: {per_client:?}");
            }
        }
    }

    #[test]
    fn rooms_split_the_load_evenly() {
        let w = Chat::new(3, 100).unwrap();
        let sizes: Vec<(u32, u32)> = (0..8).map(|i| w.room_of(i, 8)).collect();
        assert_eq!(
            sizes,
            vec![
                (0, 3),
                (1, 3),
                (2, 2),
                (0, 3),
                (1, 3),
                (2, 2),
                (0, 3),
                (1, 3)
            ]
        );
    }

    #[test]
    fn bad_input_is_refused_before_anything_runs() {
        assert!(ROOMS.parse("0").is_err());
        assert!(Chat::new(0, 100).is_err());
        assert!(SIZE.parse("8").is_err() && SIZE.parse("1m").is_err());
        let w = Chat::new(2, 100).unwrap();
        // Loads 1–3 leave a room with fewer than 2 clients.
        for loads in [vec![1], vec![3], vec![0]] {
            let plan = SweepPlan {
                loads: Some(loads.clone()),
                ..SweepPlan::quick()
            };
            let e = validate(&w, &plan, 2).unwrap_err().to_string();
            assert!(e.contains("load"), "{loads:?}: {e}");
        }
        assert!(w.check_load(3).unwrap_err().contains("at least 2 clients"));
        // The default ladder starts at 2 per room: 4, 8 on 2 CPUs.
        assert_eq!(validate(&w, &SweepPlan::quick(), 2).unwrap(), vec![4, 8]);
        let one = Chat::new(1, 100).unwrap();
        assert_eq!(
            validate(&one, &SweepPlan::quick(), 2).unwrap(),
            vec![2, 4, 8]
        );
        let too_many = SweepPlan {
            loads: Some(vec![MAX_LOAD + 2]),
            ..SweepPlan::quick()
        };
        assert!(validate(&Chat::new(8, 100).unwrap(), &too_many, 2).is_err());
    }
}
