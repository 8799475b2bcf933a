//! A client connection: plain TCP, or TLS that Pointwork terminated itself.

use monoio::net::TcpStream;
use monoio_rustls::ServerTlsStream;

use crate::tcp_or_tls::TcpOrTls;

pub type ClientConn = TcpOrTls<ServerTlsStream<TcpStream>>;
