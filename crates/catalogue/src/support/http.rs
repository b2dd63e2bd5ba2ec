//! Just enough HTTP/1.1 for a web workload's server and client: parsing a
//! request head (method, target, Content-Length, keep-alive) and a
//! response head (status, Content-Length, keep-alive) out of bytes that
//! may have arrived in pieces, and writing numbers and text into fixed
//! buffers — all without allocation, for the hot paths. Anything beyond
//! that (chunked bodies, continuation lines) is refused as unsupported
//! rather than half-understood.

use std::ops::Range;

/// The end of a head.
const HEAD_END: &[u8] = b"\r\n\r\n";

/// Why bytes are not an acceptable HTTP message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError(pub &'static str);

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Head,
    Other,
}

/// A parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: Method,
    /// Where the target (path and query) lies in the buffer.
    pub target: Range<usize>,
    /// Bytes of the head, the blank line included: the body starts here.
    pub head_len: usize,
    pub content_length: usize,
    /// HTTP/1.1 without `Connection: close`, or HTTP/1.0 with
    /// `Connection: keep-alive`.
    pub keep_alive: bool,
}

impl Request {
    /// Bytes of the whole request, body included.
    pub fn len(&self) -> usize {
        self.head_len + self.content_length
    }
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// A parsed response head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    pub status: u16,
    pub head_len: usize,
    pub content_length: usize,
    pub keep_alive: bool,
}

/// Where the head ends (just past the blank line), once it has arrived.
#[inline]
pub fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(HEAD_END.len())
        .position(|w| w == HEAD_END)
        .map(|p| p + HEAD_END.len())
}

/// The request head at the start of `buf`: None until all of it has
/// arrived.
pub fn parse_request(buf: &[u8]) -> Result<Option<Request>, HttpError> {
    let Some(head_len) = head_end(buf) else {
        return Ok(None);
    };
    let head = &buf[..head_len];
    let mut lines = Lines::new(head);
    let line = lines.next().ok_or(HttpError("empty request"))?;
    let mut parts = line.split(|&b| b == b' ');
    let method = match parts.next() {
        Some(b"GET") => Method::Get,
        Some(b"POST") => Method::Post,
        Some(b"HEAD") => Method::Head,
        Some(m) if !m.is_empty() => Method::Other,
        _ => return Err(HttpError("no method in the request line")),
    };
    let target = parts
        .next()
        .ok_or(HttpError("no target in the request line"))?;
    let version = parts
        .next()
        .ok_or(HttpError("no version in the request line"))?;
    if parts.next().is_some() || target.is_empty() || target[0] != b'/' {
        return Err(HttpError("malformed request line"));
    }
    let start = target.as_ptr() as usize - buf.as_ptr() as usize;
    let mut keep_alive = match version {
        b"HTTP/1.1" => true,
        b"HTTP/1.0" => false,
        _ => return Err(HttpError("unsupported HTTP version")),
    };
    let headers = headers(lines, &mut keep_alive)?;
    Ok(Some(Request {
        method,
        target: start..start + target.len(),
        head_len,
        content_length: headers,
        keep_alive,
    }))
}

/// The response head at the start of `buf`: None until all of it has
/// arrived.
pub fn parse_response(buf: &[u8]) -> Result<Option<ResponseHead>, HttpError> {
    let Some(head_len) = head_end(buf) else {
        return Ok(None);
    };
    let mut lines = Lines::new(&buf[..head_len]);
    let line = lines.next().ok_or(HttpError("empty response"))?;
    let mut keep_alive = if line.starts_with(b"HTTP/1.1 ") {
        true
    } else if line.starts_with(b"HTTP/1.0 ") {
        false
    } else {
        return Err(HttpError("not an HTTP/1.x status line"));
    };
    let status = line
        .get(9..12)
        .and_then(parse_decimal)
        .filter(|s| (100..600).contains(s))
        .ok_or(HttpError("malformed status code"))? as u16;
    let content_length = headers(lines, &mut keep_alive)?;
    Ok(Some(ResponseHead {
        status,
        head_len,
        content_length,
        keep_alive,
    }))
}

/// Walk the header lines: Content-Length (0 when absent) and Connection.
fn headers(lines: Lines<'_>, keep_alive: &mut bool) -> Result<usize, HttpError> {
    let mut content_length = 0;
    for line in lines {
        if line.is_empty() {
            break;
        }
        if line[0] == b' ' || line[0] == b'\t' {
            return Err(HttpError("continuation lines are not supported"));
        }
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or(HttpError("a header line without a colon"))?;
        let (name, value) = (&line[..colon], trim(&line[colon + 1..]));
        if name.eq_ignore_ascii_case(b"content-length") {
            content_length =
                parse_decimal(value).ok_or(HttpError("malformed Content-Length"))? as usize;
        } else if name.eq_ignore_ascii_case(b"connection") {
            if value.eq_ignore_ascii_case(b"close") {
                *keep_alive = false;
            } else if value.eq_ignore_ascii_case(b"keep-alive") {
                *keep_alive = true;
            }
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            return Err(HttpError("transfer encodings are not supported"));
        }
    }
    Ok(content_length)
}

/// Lines of a head, without their CRLF.
struct Lines<'a> {
    rest: &'a [u8],
}

impl<'a> Lines<'a> {
    fn new(head: &'a [u8]) -> Lines<'a> {
        Lines { rest: head }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.rest.is_empty() {
            return None;
        }
        let end = self
            .rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .unwrap_or(self.rest.len());
        let line = &self.rest[..end];
        self.rest = &self.rest[(end + 2).min(self.rest.len())..];
        Some(line)
    }
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// A decimal number of at most 18 digits.
pub fn parse_decimal(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 18 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0, |n, &d| n * 10 + (d - b'0') as u64))
}

/// Appends text and numbers to a fixed buffer (no allocation); writing
/// past its end is an error the caller sees once, at `finish`.
pub struct Out<'a> {
    buf: &'a mut [u8],
    len: usize,
    overflow: bool,
}

impl<'a> Out<'a> {
    pub fn new(buf: &'a mut [u8]) -> Out<'a> {
        Out {
            buf,
            len: 0,
            overflow: false,
        }
    }

    #[inline]
    pub fn put(&mut self, s: &[u8]) -> &mut Self {
        match self.buf.get_mut(self.len..self.len + s.len()) {
            Some(dst) => {
                dst.copy_from_slice(s);
                self.len += s.len();
            }
            None => self.overflow = true,
        }
        self
    }

    #[inline]
    pub fn num(&mut self, mut n: u64) -> &mut Self {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.put(&digits[i..])
    }

    /// `n` with at least `width` digits (leading zeros).
    #[inline]
    pub fn num_padded(&mut self, n: u64, width: usize) -> &mut Self {
        let mut digits = 1;
        let mut m = n / 10;
        while m > 0 {
            digits += 1;
            m /= 10;
        }
        for _ in digits..width {
            self.put(b"0");
        }
        self.num(n)
    }

    /// Bytes written, or None if they did not fit.
    pub fn finish(&self) -> Option<usize> {
        (!self.overflow).then_some(self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_parsed_once_its_head_is_whole() {
        let raw = b"POST /post?x=1 HTTP/1.1\r\nHost: a\r\ncontent-length:  5 \r\n\r\nhelloGET";
        for cut in 0..raw.len() - 8 {
            assert_eq!(parse_request(&raw[..cut]), Ok(None), "cut {cut}");
        }
        let r = parse_request(raw).unwrap().unwrap();
        assert_eq!(r.method, Method::Post);
        assert_eq!(&raw[r.target.clone()], b"/post?x=1");
        assert_eq!(r.content_length, 5);
        assert!(r.keep_alive);
        assert_eq!(&raw[r.head_len..r.len()], b"hello");
    }

    #[test]
    fn keep_alive_follows_the_version_and_connection_header() {
        let ka = |raw: &[u8]| parse_request(raw).unwrap().unwrap().keep_alive;
        assert!(ka(b"GET / HTTP/1.1\r\n\r\n"));
        assert!(!ka(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n"));
        assert!(!ka(b"GET / HTTP/1.0\r\n\r\n"));
        assert!(ka(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
    }

    #[test]
    fn malformed_requests_are_refused() {
        for raw in [
            &b"GET\r\n\r\n"[..],
            b"GET nopath HTTP/1.1\r\n\r\n",
            b"GET / HTTP/2\r\n\r\n",
            b"GET / HTTP/1.1 extra\r\n\r\n",
            b"GET / HTTP/1.1\r\nNoColon\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: -3\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
        ] {
            assert!(
                parse_request(raw).is_err(),
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    #[test]
    fn a_response_head_gives_status_length_and_connection() {
        let raw = b"HTTP/1.1 404 Not Found\r\nContent-Length: 12\r\nConnection: close\r\n\r\n";
        let h = parse_response(raw).unwrap().unwrap();
        assert_eq!((h.status, h.content_length, h.keep_alive), (404, 12, false));
        assert_eq!(h.head_len, raw.len());
        assert_eq!(parse_response(&raw[..20]), Ok(None));
        assert!(parse_response(b"HTTP/1.1 2x0 OK\r\n\r\n").is_err());
        assert!(parse_response(b"SPDY 200\r\n\r\n").is_err());
    }

    #[test]
    fn out_writes_numbers_and_reports_overflow() {
        let mut b = [0u8; 32];
        let mut o = Out::new(&mut b);
        o.put(b"n=")
            .num(0)
            .put(b",")
            .num(1234567890)
            .put(b",")
            .num_padded(42, 5);
        let n = o.finish().unwrap();
        assert_eq!(&b[..n], b"n=0,1234567890,00042");
        let mut small = [0u8; 4];
        let mut o = Out::new(&mut small);
        o.put(b"abc").num(12);
        assert_eq!(o.finish(), None);
        assert_eq!(parse_decimal(b"0042"), Some(42));
        assert_eq!(parse_decimal(b""), None);
    }
}
