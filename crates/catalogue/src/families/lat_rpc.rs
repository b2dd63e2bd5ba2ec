//! lat_rpc: latency of an ONC RPC (RFC 5531) call of the null procedure
//! over UDP or TCP on 127.0.0.1, after lmbench's lat_rpc, without the RPC
//! library glibc no longer ships: the XDR of the call and the reply and
//! TCP's record marking are written here by hand. The helper is the server
//! (program 0x20007473 version 1, AUTH_NONE); it checks each call and
//! replies SUCCESS, or PROG_UNAVAIL/PROC_UNAVAIL. One iteration is one call
//! answered (a round trip); the benchmark checks the xid and the status.

use std::os::fd::RawFd;

use touchstone_harness::{BenchError, Context, Fallible};

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::hot_potato::{Baton, HotPotato};
use crate::support::placement;
use crate::support::sockets::{recv_datagram, set_recv_timeout, tcp_pair, udp_pair};
use crate::support::sys;

pub const PROG: u32 = 0x2000_7473;
pub const VERS: u32 = 1;
const CALL: u32 = 0;
const REPLY: u32 = 1;
const MSG_ACCEPTED: u32 = 0;
const SUCCESS: u32 = 0;
const PROG_UNAVAIL: u32 = 1;
const PROC_UNAVAIL: u32 = 3;
const LAST_FRAGMENT: u32 = 0x8000_0000;
/// A call with AUTH_NONE credentials and verifier: 10 XDR words.
pub const CALL_LEN: usize = 40;
/// An accepted reply with an AUTH_NONE verifier: 6 XDR words.
pub const REPLY_LEN: usize = 24;

fn put(buf: &mut [u8], word: usize, v: u32) {
    buf[word * 4..word * 4 + 4].copy_from_slice(&v.to_be_bytes());
}
fn get(buf: &[u8], word: usize) -> u32 {
    u32::from_be_bytes(buf[word * 4..word * 4 + 4].try_into().unwrap())
}

/// XDR of a call of `proc` (xid filled in per call).
pub fn encode_call(buf: &mut [u8; CALL_LEN], xid: u32, proc_: u32) {
    // xid, CALL, rpcvers 2, prog, vers, proc, cred {0, 0}, verf {0, 0}
    for (i, v) in [xid, CALL, 2, PROG, VERS, proc_, 0, 0, 0, 0]
        .into_iter()
        .enumerate()
    {
        put(buf, i, v);
    }
}

/// The server's answer to a call: the reply's XDR, or None when the bytes
/// are not an RPC version 2 call at all.
pub fn answer(call: &[u8], out: &mut [u8; REPLY_LEN]) -> Option<()> {
    if call.len() < CALL_LEN || get(call, 1) != CALL || get(call, 2) != 2 {
        return None;
    }
    let stat = if get(call, 3) != PROG || get(call, 4) != VERS {
        PROG_UNAVAIL
    } else if get(call, 5) != 0 {
        PROC_UNAVAIL
    } else {
        SUCCESS
    };
    // xid, REPLY, MSG_ACCEPTED, verf {AUTH_NONE, 0}, accept_stat
    for (i, v) in [get(call, 0), REPLY, MSG_ACCEPTED, 0, 0, stat]
        .into_iter()
        .enumerate()
    {
        put(out, i, v);
    }
    Some(())
}

/// Check a reply to call `xid`: accepted with SUCCESS.
#[inline]
pub fn check_reply(r: &[u8], xid: u32) -> Fallible {
    if get(r, 0) != xid || get(r, 1) != REPLY || get(r, 2) != MSG_ACCEPTED {
        return Err(BenchError(format!("rpc: bad reply to xid {xid}")));
    }
    match get(r, 5) {
        SUCCESS => Ok(()),
        s => Err(BenchError(format!(
            "rpc: call not successful (accept_stat {s})"
        ))),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Proto {
    Udp,
    Tcp,
}

pub struct RpcBaton {
    proto: Proto,
    xid: u32,
    client: RawFd,
    server: RawFd,
    // record mark + call; record mark + reply (the mark unused over UDP)
    call: [u8; 4 + CALL_LEN],
    reply: [u8; 4 + REPLY_LEN],
}

impl RpcBaton {
    fn frame(&self) -> usize {
        if self.proto == Proto::Tcp {
            0
        } else {
            4
        }
    }
}

impl Baton for RpcBaton {
    fn open(&mut self, _: &Context) -> Fallible {
        let (c, s) = match self.proto {
            Proto::Udp => udp_pair()?,
            Proto::Tcp => tcp_pair()?,
        };
        (self.client, self.server) = (c, s);
        set_recv_timeout(c, 2)?;
        let mut body = [0u8; CALL_LEN];
        encode_call(&mut body, 0, 0);
        self.call[4..].copy_from_slice(&body);
        self.call[..4].copy_from_slice(&(LAST_FRAGMENT | CALL_LEN as u32).to_be_bytes());
        Ok(())
    }

    fn helper_side(&mut self) -> Fallible {
        sys::close(self.client);
        Ok(())
    }

    fn parent_side(&mut self) -> Fallible {
        sys::close_and_clear(&mut self.server);
        Ok(())
    }

    /// Timed: set the xid, send the call (one write: the record mark and
    /// the call over TCP, the call datagram over UDP), read the reply whole
    /// and check it.
    #[inline]
    fn ping(&mut self) -> Fallible {
        self.xid = self.xid.wrapping_add(1);
        self.call[4..8].copy_from_slice(&self.xid.to_be_bytes());
        let f = self.frame();
        sys::write_all(self.client, &self.call[f..])?;
        match self.proto {
            Proto::Udp => recv_datagram(self.client, &mut self.reply[4..])?,
            Proto::Tcp => {
                sys::read_exact(self.client, &mut self.reply)?;
                let mark = u32::from_be_bytes(self.reply[..4].try_into().unwrap());
                if mark != LAST_FRAGMENT | REPLY_LEN as u32 {
                    return Err(BenchError(format!("rpc: bad record mark {mark:#x}")));
                }
            }
        }
        check_reply(&self.reply[4..], self.xid)
    }

    fn pong(&mut self) -> Fallible {
        let mut call = [0u8; 4 + CALL_LEN];
        match self.proto {
            Proto::Udp => recv_datagram(self.server, &mut call[4..])?,
            Proto::Tcp => {
                sys::read_exact(self.server, &mut call[..4])?;
                let mark = u32::from_be_bytes(call[..4].try_into().unwrap());
                if mark != LAST_FRAGMENT | CALL_LEN as u32 {
                    return Err("rpc server: unexpected record".into());
                }
                sys::read_exact(self.server, &mut call[4..])?;
            }
        }
        let mut body = [0u8; REPLY_LEN];
        answer(&call[4..], &mut body).ok_or("rpc server: not an RPC call")?;
        let mut out = [0u8; 4 + REPLY_LEN];
        out[..4].copy_from_slice(&(LAST_FRAGMENT | REPLY_LEN as u32).to_be_bytes());
        out[4..].copy_from_slice(&body);
        let f = self.frame();
        sys::write_all(self.server, &out[f..])?;
        Ok(())
    }

    fn close(&mut self) {
        sys::close(self.client);
        sys::close(self.server);
        (self.client, self.server) = (-1, -1);
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let proto = match p.text("proto") {
        "udp" => Proto::Udp,
        _ => Proto::Tcp,
    };
    HotPotato::case(
        RpcBaton {
            proto,
            xid: 0,
            client: -1,
            server: -1,
            call: [0; 4 + CALL_LEN],
            reply: [0; 4 + REPLY_LEN],
        },
        p,
    )
}

pub const FAMILY: Family = Family {
    params: &[
        Param::choice("proto", &["udp", "tcp"])
            .positional()
            .help("transport"),
        placement::PARAM,
    ],
    ..Family::new(
        "lat_rpc",
        "comm_lat",
        "ONC RPC null-procedure call round trip over UDP or TCP on 127.0.0.1",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xdr_call_and_reply() {
        let mut c = [0u8; CALL_LEN];
        encode_call(&mut c, 0xdead_beef, 0);
        // xid first, then CALL (0), RPC version 2, program number
        assert_eq!(&c[..12], &[0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0, 0, 0, 0, 2]);
        assert_eq!(&c[12..16], &PROG.to_be_bytes());
        let mut r = [0u8; REPLY_LEN];
        answer(&c, &mut r).unwrap();
        check_reply(&r, 0xdead_beef).unwrap();
        assert!(check_reply(&r, 1).is_err());
        encode_call(&mut c, 7, 5);
        answer(&c, &mut r).unwrap();
        assert!(check_reply(&r, 7).unwrap_err().0.contains("accept_stat 3"));
        assert!(answer(&[0u8; 8], &mut r).is_none());
    }
}
