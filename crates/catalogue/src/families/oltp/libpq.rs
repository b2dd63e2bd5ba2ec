//! The timed PostgreSQL connections of `oltp` go through libpq, the C client
//! library that pgbench and psql use, loaded at run time (`dlopen`) only when
//! `--postgres` is given: a load generator must not cost more per statement
//! than the reference tool driving the same server. The `postgres` crate,
//! which makes and drops the schema, costs about twice libpq's client CPU
//! per transaction (its async runtime, channels and allocation per query);
//! on a machine the server shares that is throughput taken from the server.
//!
//! Per statement: `PQexecPrepared` with text parameters formatted into
//! stack buffers, one round trip (Bind, Execute, Sync), text results parsed
//! in place — the same messages pgbench `-M prepared` sends.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

/// libpq's soname, as every distribution ships it.
const SONAME: &str = "libpq.so.5";

/// `ConnStatusType::CONNECTION_OK`.
const CONNECTION_OK: c_int = 0;
/// `ExecStatusType` values a statement may end with.
const PGRES_COMMAND_OK: c_int = 1;
const PGRES_TUPLES_OK: c_int = 2;
/// `PG_DIAG_MESSAGE_PRIMARY`: the server's own message.
const PG_DIAG_MESSAGE_PRIMARY: c_int = b'M' as c_int;

#[repr(C)]
struct PGconn {
    _opaque: [u8; 0],
}
#[repr(C)]
struct PGresult {
    _opaque: [u8; 0],
}

/// The libpq functions used, resolved once.
struct Api {
    connectdb_params:
        unsafe extern "C" fn(*const *const c_char, *const *const c_char, c_int) -> *mut PGconn,
    status: unsafe extern "C" fn(*const PGconn) -> c_int,
    error_message: unsafe extern "C" fn(*const PGconn) -> *const c_char,
    finish: unsafe extern "C" fn(*mut PGconn),
    backend_pid: unsafe extern "C" fn(*const PGconn) -> c_int,
    exec: unsafe extern "C" fn(*mut PGconn, *const c_char) -> *mut PGresult,
    prepare: unsafe extern "C" fn(
        *mut PGconn,
        *const c_char,
        *const c_char,
        c_int,
        *const u32,
    ) -> *mut PGresult,
    exec_prepared: unsafe extern "C" fn(
        *mut PGconn,
        *const c_char,
        c_int,
        *const *const c_char,
        *const c_int,
        *const c_int,
        c_int,
    ) -> *mut PGresult,
    result_status: unsafe extern "C" fn(*const PGresult) -> c_int,
    result_error_field: unsafe extern "C" fn(*const PGresult, c_int) -> *const c_char,
    result_error_message: unsafe extern "C" fn(*const PGresult) -> *const c_char,
    ntuples: unsafe extern "C" fn(*const PGresult) -> c_int,
    getvalue: unsafe extern "C" fn(*const PGresult, c_int, c_int) -> *const c_char,
    cmd_tuples: unsafe extern "C" fn(*mut PGresult) -> *const c_char,
    clear: unsafe extern "C" fn(*mut PGresult),
}

static API: OnceLock<Result<Api, String>> = OnceLock::new();

/// Load libpq (once). Call before forking clients: dlopen after a fork of
/// a threaded process may find the loader's lock held.
pub fn load() -> Result<(), String> {
    api().map(|_| ())
}

fn api() -> Result<&'static Api, String> {
    API.get_or_init(open).as_ref().map_err(Clone::clone)
}

// The field a pointer is transmuted into names its type.
#[allow(clippy::missing_transmute_annotations)]
fn open() -> Result<Api, String> {
    // A static glibc would load libpq next to a second, dynamic C library.
    if cfg!(target_feature = "crt-static") {
        return Err(format!(
            "--postgres: this touchstone is statically linked and cannot load {SONAME}; \
             use the ordinary (dynamically linked) build"
        ));
    }
    let name = CString::new(SONAME).expect("no NUL in the soname");
    // SAFETY: dlopen with a valid C string; the handle is never closed, so
    // the function pointers below stay valid for the process's life.
    let lib = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if lib.is_null() {
        // SAFETY: dlerror returns a C string or null.
        let why = unsafe { libc::dlerror() };
        let why = if why.is_null() {
            String::new()
        } else {
            unsafe { CStr::from_ptr(why) }
                .to_string_lossy()
                .into_owned()
        };
        return Err(format!(
            "--postgres: cannot load {SONAME}, PostgreSQL's client library, which oltp's \
             clients use ({why}); install it (Debian/Ubuntu: apt install libpq5; \
             Fedora/RHEL: dnf install libpq)"
        ));
    }
    let sym = |s: &str| -> Result<*mut c_void, String> {
        let c = CString::new(s).expect("no NUL in a symbol name");
        // SAFETY: dlsym on the handle opened above.
        let p = unsafe { libc::dlsym(lib, c.as_ptr()) };
        if p.is_null() {
            Err(format!("--postgres: {SONAME} has no {s}: too old a libpq"))
        } else {
            Ok(p)
        }
    };
    // SAFETY: each symbol is libpq's function of that name, whose C
    // signature (libpq-fe.h) the field's type repeats.
    unsafe {
        Ok(Api {
            connectdb_params: std::mem::transmute(sym("PQconnectdbParams")?),
            status: std::mem::transmute(sym("PQstatus")?),
            error_message: std::mem::transmute(sym("PQerrorMessage")?),
            finish: std::mem::transmute(sym("PQfinish")?),
            backend_pid: std::mem::transmute(sym("PQbackendPID")?),
            exec: std::mem::transmute(sym("PQexec")?),
            prepare: std::mem::transmute(sym("PQprepare")?),
            exec_prepared: std::mem::transmute(sym("PQexecPrepared")?),
            result_status: std::mem::transmute(sym("PQresultStatus")?),
            result_error_field: std::mem::transmute(sym("PQresultErrorField")?),
            result_error_message: std::mem::transmute(sym("PQresultErrorMessage")?),
            ntuples: std::mem::transmute(sym("PQntuples")?),
            getvalue: std::mem::transmute(sym("PQgetvalue")?),
            cmd_tuples: std::mem::transmute(sym("PQcmdTuples")?),
            clear: std::mem::transmute(sym("PQclear")?),
        })
    }
}

fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: libpq returns NUL-terminated strings valid until the next call.
    unsafe { CStr::from_ptr(p) }
        .to_string_lossy()
        .trim_end()
        .to_string()
}

/// An i64 in libpq's text form, parsed without allocating.
fn int(p: *const c_char) -> i64 {
    if p.is_null() {
        return 0;
    }
    // SAFETY: a NUL-terminated value from PQgetvalue.
    let b = unsafe { CStr::from_ptr(p) }.to_bytes();
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        _ => (false, b),
    };
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add((d - b'0') as i64);
    }
    if neg {
        -v
    } else {
        v
    }
}

/// A result, cleared when dropped.
struct Res<'a>(&'a Api, *mut PGresult);

impl Res<'_> {
    /// The result if the statement succeeded, else the server's message.
    fn ok(self) -> Result<Self, String> {
        // SAFETY: a result pointer from libpq (null only when out of memory).
        let status = unsafe { (self.0.result_status)(self.1) };
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
            return Ok(self);
        }
        let primary = text(unsafe { (self.0.result_error_field)(self.1, PG_DIAG_MESSAGE_PRIMARY) });
        Err(if primary.is_empty() {
            text(unsafe { (self.0.result_error_message)(self.1) })
        } else {
            primary
        })
    }
}

impl Drop for Res<'_> {
    fn drop(&mut self) {
        // SAFETY: cleared once; PQclear accepts null.
        unsafe { (self.0.clear)(self.1) }
    }
}

/// One connection, its statements prepared as "s0", "s1", ….
pub struct Connection {
    api: &'static Api,
    conn: *mut PGconn,
}

// The connection is used by one client at a time (a client process or
// thread owns it); libpq connections may move between threads.
unsafe impl Send for Connection {}

/// Seconds libpq waits for a connection, unless the URL says otherwise.
const CONNECT_TIMEOUT_S: &str = "10";

impl Connection {
    /// Connect with `url` (a postgresql:// URL or key=value string).
    pub fn connect(url: &str) -> Result<Connection, String> {
        let api = api()?;
        // Keywords before "dbname" are overridden by what the expanded URL
        // names, so the URL's own timeout wins over the default.
        let keys = [c"connect_timeout", c"fallback_application_name", c"dbname"];
        let url = CString::new(url).map_err(|_| "--postgres: the URL contains a NUL byte")?;
        let values = [
            CString::new(CONNECT_TIMEOUT_S).expect("no NUL"),
            CString::new("touchstone").expect("no NUL"),
            url,
        ];
        let kp: Vec<*const c_char> = keys
            .iter()
            .map(|k| k.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        let vp: Vec<*const c_char> = values
            .iter()
            .map(|v| v.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        // SAFETY: NULL-terminated arrays of C strings that outlive the call.
        let conn = unsafe { (api.connectdb_params)(kp.as_ptr(), vp.as_ptr(), 1) };
        let c = Connection { api, conn };
        if conn.is_null() {
            return Err("libpq could not allocate a connection".into());
        }
        // SAFETY: a connection from PQconnectdbParams.
        if unsafe { (api.status)(conn) } != CONNECTION_OK {
            return Err(text(unsafe { (api.error_message)(conn) }));
        }
        Ok(c)
    }

    pub fn backend_pid(&self) -> i32 {
        // SAFETY: an open connection.
        unsafe { (self.api.backend_pid)(self.conn) }
    }

    /// Run SQL without parameters (simple query protocol).
    pub fn exec(&mut self, sql: &str) -> Result<(), String> {
        let sql = CString::new(sql).map_err(|_| "SQL contains a NUL byte")?;
        // SAFETY: an open connection and a C string.
        Res(self.api, unsafe {
            (self.api.exec)(self.conn, sql.as_ptr())
        })
        .ok()
        .map(|_| ())
    }

    /// Prepare `sql` as statement number `n` (named "s<n>").
    pub fn prepare(&mut self, n: usize, sql: &str) -> Result<(), String> {
        let name = CString::new(format!("s{n}")).expect("no NUL");
        let sql = CString::new(sql).map_err(|_| "SQL contains a NUL byte")?;
        // SAFETY: an open connection, C strings; no parameter types given
        // (the server infers them, as for pgbench's statements).
        Res(self.api, unsafe {
            (self.api.prepare)(self.conn, name.as_ptr(), sql.as_ptr(), 0, std::ptr::null())
        })
        .ok()
        .map(|_| ())
    }

    /// Run prepared statement `n` with integer `args`; hand each row's
    /// first `columns` values (NULL as 0) to `each`; return the rows (for
    /// a query) or the rows changed (for a write).
    pub fn run(
        &mut self,
        n: usize,
        args: &[i64],
        columns: usize,
        each: &mut dyn FnMut(&[i64; 4]),
    ) -> Result<u64, String> {
        // The statement's name and parameters as text in stack buffers: no
        // allocation per statement.
        const MAX_ARGS: usize = 4;
        let mut name = [0u8; 8];
        let digits = itoa(n as i64, &mut name[1..]);
        name[0] = b's';
        name[1 + digits] = 0;
        let mut bufs = [[0u8; 24]; MAX_ARGS];
        let mut ptrs = [std::ptr::null::<c_char>(); MAX_ARGS];
        let k = args.len().min(MAX_ARGS);
        for i in 0..k {
            let len = itoa(args[i], &mut bufs[i]);
            bufs[i][len] = 0;
            ptrs[i] = bufs[i].as_ptr() as *const c_char;
        }
        // SAFETY: an open connection; `ptrs[..k]` point at NUL-terminated
        // texts that live until the call returns.
        let r = Res(self.api, unsafe {
            (self.api.exec_prepared)(
                self.conn,
                name.as_ptr() as *const c_char,
                k as c_int,
                ptrs.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                0,
            )
        })
        .ok()?;
        // SAFETY: a successful result.
        let rows = unsafe { (self.api.ntuples)(r.1) };
        if columns == 0 {
            return Ok(int(unsafe { (self.api.cmd_tuples)(r.1) }) as u64);
        }
        for row in 0..rows {
            let mut v = [0i64; 4];
            for (col, x) in v.iter_mut().enumerate().take(columns.min(4)) {
                *x = int(unsafe { (self.api.getvalue)(r.1, row, col as c_int) });
            }
            each(&v);
        }
        Ok(rows as u64)
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // SAFETY: finished once; PQfinish also frees a failed connection.
        unsafe { (self.api.finish)(self.conn) }
    }
}

/// Write `v` in decimal into `out`; return the digits written.
fn itoa(v: i64, out: &mut [u8]) -> usize {
    let mut tmp = [0u8; 20];
    let mut n = 0;
    let neg = v < 0;
    let mut u = v.unsigned_abs();
    loop {
        tmp[n] = b'0' + (u % 10) as u8;
        n += 1;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    let mut w = 0;
    if neg {
        out[0] = b'-';
        w = 1;
    }
    for i in (0..n).rev() {
        out[w] = tmp[i];
        w += 1;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip_through_text() {
        for v in [0i64, 7, -7, 42, 1_000_000, i64::MAX, i64::MIN + 1, -999] {
            let mut b = [0u8; 24];
            let n = itoa(v, &mut b);
            b[n] = 0;
            assert_eq!(std::str::from_utf8(&b[..n]).unwrap(), v.to_string());
            assert_eq!(int(b.as_ptr() as *const c_char), v);
        }
        assert_eq!(int(std::ptr::null()), 0);
    }
}
