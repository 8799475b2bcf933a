//! A tiny blocking HTTP/1.1 client over `std::net::TcpStream` (or rustls over one), strict
//! enough to notice a missing last chunk or a short body, and timing each chunk's arrival.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};

/// Long enough for any answer of these tests, short enough that a hang fails fast.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// What a client talks over: plain TCP, or TLS over TCP.
pub trait Wire: Read + Write {
    fn tcp(&self) -> &TcpStream;
}

impl Wire for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
}

pub type TlsWire = StreamOwned<ClientConnection, TcpStream>;

impl Wire for TlsWire {
    fn tcp(&self) -> &TcpStream {
        self.get_ref()
    }
}

pub struct Client<S = TcpStream> {
    stream: S,
    buffer: Vec<u8>,
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// For chunked bodies: each data chunk and when it was complete.
    pub chunks: Vec<(Instant, Vec<u8>)>,
    /// When the terminating zero-length chunk arrived (`None` if it never did).
    pub last_chunk_at: Option<Instant>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|error| panic!("body is not JSON ({error}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// The `data:` payloads of a server-sent event stream, in order.
    pub fn events(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.body)
            .split("\n\n")
            .filter_map(|event| event.strip_prefix("data: "))
            .map(str::to_owned)
            .collect()
    }
}

/// How a response ended when it did not end properly.
#[derive(Debug)]
pub enum Broken {
    /// The peer closed before the response was complete; what had arrived.
    Closed(Response),
    /// Read by `Debug` when a test fails on it.
    #[allow(dead_code)]
    Io(io::Error),
}

fn connect_tcp(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("connect to mock");
    stream.set_read_timeout(Some(READ_TIMEOUT)).expect("timeout");
    stream.set_nodelay(true).expect("nodelay");
    stream
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        Client { stream: connect_tcp(addr), buffer: Vec::new() }
    }
}

impl Client<TlsWire> {
    /// Connects over TLS to `addr`, verifying the server as `server_name` with `config`. The
    /// handshake happens with the first request (see [`Client::handshake`] to force it).
    pub fn connect_tls(addr: SocketAddr, server_name: &str, config: Arc<ClientConfig>) -> Client<TlsWire> {
        let name = ServerName::try_from(server_name.to_owned()).expect("valid server name");
        let connection = ClientConnection::new(config, name).expect("TLS client connection");
        Client { stream: StreamOwned::new(connection, connect_tcp(addr)), buffer: Vec::new() }
    }

    /// Completes the TLS handshake now; its error is the reason the server was refused.
    pub fn handshake(&mut self) -> io::Result<()> {
        let TlsWire { conn, sock } = &mut self.stream;
        while conn.is_handshaking() {
            conn.complete_io(sock)?;
        }
        Ok(())
    }
}

impl<S: Wire> Client<S> {
    pub fn set_read_timeout(&self, timeout: Duration) {
        self.stream.tcp().set_read_timeout(Some(timeout)).expect("timeout");
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("send request");
        self.stream.flush().expect("send request");
    }

    pub fn send(&mut self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) {
        self.send_raw(&request_bytes(method, path, headers, body));
    }

    /// Sends a request and reads its whole response.
    pub fn request(&mut self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
        self.send(method, path, headers, body);
        self.read_response()
    }

    pub fn get(&mut self, path: &str) -> Response {
        self.request("GET", path, &[], b"")
    }

    pub fn post_json(&mut self, path: &str, body: &serde_json::Value) -> Response {
        self.request("POST", path, &[], body.to_string().as_bytes())
    }

    pub fn read_response(&mut self) -> Response {
        self.try_read_response().unwrap_or_else(|broken| panic!("incomplete response: {broken:?}"))
    }

    /// Reads one response; says how it broke if the peer closed early or IO failed.
    pub fn try_read_response(&mut self) -> Result<Response, Broken> {
        let head_end = loop {
            if let Some(end) = find(&self.buffer, b"\r\n\r\n") {
                break end + 4;
            }
            if self.fill().map_err(Broken::Io)? == 0 {
                return Err(Broken::Io(io::ErrorKind::UnexpectedEof.into()));
            }
        };
        let head = String::from_utf8(self.buffer[..head_end].to_vec()).expect("ascii head");
        self.buffer.drain(..head_end);
        let mut lines = head.split("\r\n");
        let status_line = lines.next().expect("status line");
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
        let headers: Vec<(String, String)> = lines
            .filter(|line| !line.is_empty())
            .map(|line| {
                let (name, value) = line.split_once(':').expect("header colon");
                (name.trim().to_owned(), value.trim().to_owned())
            })
            .collect();
        let mut response = Response { status, headers, body: Vec::new(), chunks: Vec::new(), last_chunk_at: None };
        if status / 100 == 1 {
            return Ok(response);
        }
        if response.header("transfer-encoding").is_some_and(|coding| coding.eq_ignore_ascii_case("chunked")) {
            if !self.read_chunked(&mut response).map_err(Broken::Io)? {
                return Err(Broken::Closed(response));
            }
        } else {
            let length: usize = response
                .header("content-length")
                .expect("content-length or chunked")
                .parse()
                .expect("numeric content-length");
            while self.buffer.len() < length {
                if self.fill().map_err(Broken::Io)? == 0 {
                    response.body = std::mem::take(&mut self.buffer);
                    return Err(Broken::Closed(response));
                }
            }
            response.body = self.buffer.drain(..length).collect();
        }
        Ok(response)
    }

    /// Reads chunks into `response`; false when the peer closed before the last chunk.
    fn read_chunked(&mut self, response: &mut Response) -> io::Result<bool> {
        loop {
            let line_end = loop {
                if let Some(end) = find(&self.buffer, b"\r\n") {
                    break end;
                }
                if self.fill()? == 0 {
                    return Ok(false);
                }
            };
            let size_text = String::from_utf8_lossy(&self.buffer[..line_end]).into_owned();
            let size = usize::from_str_radix(size_text.trim(), 16).expect("hex chunk size");
            let needed = line_end + 2 + size + 2;
            while self.buffer.len() < needed {
                if self.fill()? == 0 {
                    return Ok(false);
                }
            }
            let chunk: Vec<u8> = self.buffer[line_end + 2..line_end + 2 + size].to_vec();
            assert_eq!(&self.buffer[needed - 2..needed], b"\r\n", "chunk CRLF");
            self.buffer.drain(..needed);
            if size == 0 {
                response.last_chunk_at = Some(Instant::now());
                return Ok(true);
            }
            response.body.extend_from_slice(&chunk);
            response.chunks.push((Instant::now(), chunk));
        }
    }

    fn fill(&mut self) -> io::Result<usize> {
        let mut block = [0u8; 16 * 1024];
        // A signal that interrupts the read is no end of the response: read again.
        let read = loop {
            match self.stream.read(&mut block) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        self.buffer.extend_from_slice(&block[..read]);
        Ok(read)
    }

    /// Reads until the peer closes or the read fails; returns what came and how it ended.
    pub fn read_to_end(&mut self) -> (Vec<u8>, io::Result<()>) {
        loop {
            match self.fill() {
                Ok(0) => return (std::mem::take(&mut self.buffer), Ok(())),
                Ok(_) => {}
                Err(error) => return (std::mem::take(&mut self.buffer), Err(error)),
            }
        }
    }
}

pub fn request_bytes(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut bytes = format!("{method} {path} HTTP/1.1\r\nHost: mock\r\n").into_bytes();
    for (name, value) in headers {
        bytes.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    if !body.is_empty() || method == "POST" {
        bytes.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
    }
    bytes.extend_from_slice(b"\r\n");
    bytes.extend_from_slice(body);
    bytes
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}
