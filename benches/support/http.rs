//! A lean HTTP/1.1 load client for the API benchmark, built the way `wrk` and `oha` are: one
//! keep-alive TCP connection per client, each request written as prepared bytes, each response
//! read by its `Content-Length` and nothing more. A general-purpose client (reqwest, with its
//! pool, header maps and body streams) spent a large share of the two cores this benchmark shares
//! with the server and the database; the raw side (pgbench, a plain loop) has no such overhead.

use std::io;
use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Largest response head the client accepts.
const MAX_HEADERS: usize = 32;

/// One request, serialized once: method, path, bearer token and an optional JSON body.
pub fn request(method: &str, path: &str, token: &str, json: Option<&[u8]>) -> Vec<u8> {
    let mut bytes =
        format!("{method} {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n")
            .into_bytes();
    if let Some(body) = json {
        bytes.extend_from_slice(
            format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        );
        bytes.extend_from_slice(body);
    } else {
        bytes.extend_from_slice(b"\r\n");
    }
    bytes
}

/// A response: its status and body.
pub struct Response<'a> {
    /// The HTTP status code.
    pub status: u16,
    /// The body, exactly `Content-Length` bytes.
    pub body: &'a [u8],
}

/// One keep-alive connection to the server.
pub struct Connection {
    stream: TcpStream,
    buffer: Vec<u8>,
    /// Bytes of `buffer` that belong to the previous response.
    consumed: usize,
}

impl Connection {
    /// Opens a connection with Nagle's algorithm off, as every HTTP client does.
    pub async fn open(addr: SocketAddr) -> io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream,
            buffer: Vec::with_capacity(16 * 1024),
            consumed: 0,
        })
    }

    /// Sends `request` and reads the whole response.
    pub async fn send(&mut self, request: &[u8]) -> io::Result<Response<'_>> {
        self.buffer.drain(..self.consumed);
        self.consumed = 0;
        self.stream.write_all(request).await?;
        loop {
            if let Some((status, head, length)) = parse_head(&self.buffer)? {
                while self.buffer.len() < head + length {
                    self.read_more().await?;
                }
                self.consumed = head + length;
                return Ok(Response {
                    status,
                    body: &self.buffer[head..head + length],
                });
            }
            self.read_more().await?;
        }
    }

    async fn read_more(&mut self) -> io::Result<()> {
        let start = self.buffer.len();
        self.buffer.resize(start + 16 * 1024, 0);
        let read = self.stream.read(&mut self.buffer[start..]).await?;
        self.buffer.truncate(start + read);
        if read == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        Ok(())
    }
}

/// Status, head length and body length of a complete response head, or `None` while the head is
/// still incomplete.
fn parse_head(buffer: &[u8]) -> io::Result<Option<(u16, usize, usize)>> {
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let head = match response.parse(buffer) {
        Ok(httparse::Status::Complete(head)) => head,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(invalid(format!("unparsable response head: {e}"))),
    };
    let length = response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| std::str::from_utf8(h.value).ok())
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| invalid("a response without Content-Length".into()))?;
    Ok(Some((response.code.unwrap_or_default(), head, length)))
}
