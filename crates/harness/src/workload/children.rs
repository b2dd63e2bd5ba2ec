//! What runs in a trial's forked children: the preamble every child
//! runs first, a client's session (set up, ready, wait for the start,
//! drive, write the record) and the server's, each reporting failure
//! through its slot of the board and the up pipe.

use std::sync::atomic::Ordering;

use touchstone_results::curve::latency_histogram;

use crate::clock::Monotonic;
use crate::parallel::pipes::{self, Pipe, DONE, FAILED, READY, WARM};

use super::board::Board;
use super::client::{drive, ClientRecord, Schedule};
use super::{ClientContext, ServerContext, ServerLink, Workload};

/// The server's "ready" message on the up pipe.
pub(super) const SERVER_READY: u8 = b'S';

/// In a freshly forked child of the trial.
pub(super) fn child_preamble(parent: libc::pid_t, up: &Pipe, start: &Pipe) {
    crate::parallel::enter_child(parent);
    // SAFETY: closing descriptors this child does not use.
    unsafe {
        // Children only write `up` and wait on `start`.
        libc::close(up.read_fd());
        libc::close(start.write_fd());
    }
    // A panic's message travels in the child's slot; `enter_child` has
    // silenced the hook the supervisor installed before forking.
}

/// A client's link to the supervisor: its slot and the up pipe.
struct SlotLink<'a> {
    board: &'a Board,
    client: usize,
    up: i32,
}

impl super::client::Board for SlotLink<'_> {
    #[inline]
    fn window(&self) -> Option<(u64, u64)> {
        self.board.window()
    }
    #[inline]
    fn stop(&self) -> bool {
        self.board.header().stop.load(Ordering::Acquire) == 1
    }
    #[inline]
    fn progress(&mut self, ops_total: u64) {
        self.board
            .slot(self.client)
            .progress
            .store(ops_total, Ordering::Relaxed);
    }
    fn warm(&mut self) -> crate::Fallible {
        Ok(pipes::send(self.up, WARM)?)
    }
    fn done(&mut self) -> crate::Fallible {
        Ok(pipes::send(self.up, DONE)?)
    }
}

pub(super) fn fail_client(board: &Board, client: u32, message: &str, up: i32) {
    board.set_client_error(client as usize, message);
    let _ = pipes::send(up, FAILED);
}

/// One client, in its process or thread: set up, ready, wait for the
/// start, run until stop, write the record. Returns the exit code.
pub(super) fn client_main(
    w: &dyn Workload,
    ctx: &ClientContext,
    schedule: Option<Schedule>,
    board: &Board,
    up: i32,
    start: i32,
) -> i32 {
    let i = ctx.client as usize;
    let session = || -> Result<(), String> {
        let mut client = w.client(ctx).map_err(|e| e.0)?;
        let mut hists = vec![latency_histogram(); w.op_types().len()];
        let slot = board.slot(i);
        slot.waiting.store(1, Ordering::Release);
        pipes::send(up, READY).map_err(|e| e.to_string())?;
        pipes::wait_closed(start).map_err(|e| e.to_string())?;
        slot.waiting.store(0, Ordering::Release);
        let mut link = SlotLink {
            board,
            client: i,
            up,
        };
        let rec =
            drive(&mut *client, schedule, &Monotonic, &mut link, &mut hists).map_err(|e| e.0)?;
        drop(client);
        board.finish(
            i,
            &ClientRecord {
                client: ctx.client,
                ..rec
            },
            &hists,
        )
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(session)) {
        Ok(Ok(())) => 0,
        Ok(Err(message)) => {
            fail_client(board, ctx.client, &message, up);
            1
        }
        Err(panic) => {
            let message = format!("panicked: {}", panic_text(&*panic));
            fail_client(board, ctx.client, &message, up);
            101
        }
    }
}

struct ServerBoardLink<'a> {
    board: &'a Board,
    up: i32,
    readied: bool,
}

impl ServerLink for ServerBoardLink<'_> {
    fn ready(&mut self) -> crate::Fallible {
        if !self.readied {
            self.readied = true;
            pipes::send(self.up, SERVER_READY)?;
        }
        Ok(())
    }
    fn should_stop(&self) -> bool {
        self.board.header().server_stop.load(Ordering::Acquire) == 1
    }
}

pub(super) fn server_main(w: &dyn Workload, ctx: &ServerContext, board: &Board, up: i32) -> i32 {
    let mut link = ServerBoardLink {
        board,
        up,
        readied: false,
    };
    let outcome =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.serve(ctx, &mut link)));
    let message = match outcome {
        Ok(Ok(())) => return 0,
        Ok(Err(e)) => e.0,
        Err(panic) => format!("panicked: {}", panic_text(&*panic)),
    };
    board.set_server_error(&message);
    let _ = pipes::send(up, FAILED);
    1
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}
