//! The byte stream to a server: TCP, a Unix socket, or TLS over TCP
//! (rustls with the ring provider), each with read and write timeouts so
//! that a server that stops answering is an error, never a hang.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme, StreamOwned,
};

use crate::error::LiveError;
use crate::url::{ServerUrl, Transport};

/// How to reach a server, besides its URL.
#[derive(Clone, Debug, Default)]
pub struct ConnectOptions {
    pub tls: TlsOptions,
    /// How long a connect, a read or a write may wait; `None`: forever.
    pub timeout: Option<Duration>,
}

/// `rediss://` settings, as redis-cli's `--cacert`, `--cert`, `--key`,
/// `--sni` and `--insecure`.
#[derive(Clone, Debug, Default)]
pub struct TlsOptions {
    /// The CA certificates (PEM) the server's certificate must chain to;
    /// `None`: the system's store.
    pub ca_file: Option<PathBuf>,
    /// A client certificate chain (PEM), for `tls-auth-clients yes`.
    pub cert_file: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    pub key_file: Option<PathBuf>,
    /// The name sent as SNI and checked in the certificate, instead of the
    /// URL's host.
    pub sni: Option<String>,
    /// Accept any certificate (no check of who the server is).
    pub insecure: bool,
}

/// An open connection.
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    /// Connects to the server `url` names.
    pub fn connect(url: &ServerUrl, opts: &ConnectOptions) -> Result<Stream, LiveError> {
        let connect_error = |error| LiveError::Connect {
            url: url.to_string(),
            error,
        };
        let stream = match &url.transport {
            Transport::Tcp { host, port } => {
                Stream::Tcp(tcp(host, *port, opts.timeout).map_err(connect_error)?)
            }
            Transport::Unix { path } => {
                let s = UnixStream::connect(path).map_err(connect_error)?;
                s.set_read_timeout(opts.timeout).map_err(connect_error)?;
                s.set_write_timeout(opts.timeout).map_err(connect_error)?;
                Stream::Unix(s)
            }
            Transport::Tls { host, port } => {
                let config = tls_config(&opts.tls)?;
                let name = opts.tls.sni.as_deref().unwrap_or(host);
                let name = ServerName::try_from(name.to_string()).map_err(|e| LiveError::Tls {
                    url: url.to_string(),
                    why: format!("`{name}` is not a host name to check a certificate against: {e}"),
                })?;
                let mut sock = tcp(host, *port, opts.timeout).map_err(connect_error)?;
                let mut conn = ClientConnection::new(config, name).map_err(|e| LiveError::Tls {
                    url: url.to_string(),
                    why: e.to_string(),
                })?;
                // The handshake now, so that a certificate problem is named
                // as one rather than as the first command's failure.
                while conn.is_handshaking() {
                    conn.complete_io(&mut sock).map_err(|e| LiveError::Tls {
                        url: url.to_string(),
                        why: format!("the TLS handshake failed: {e}"),
                    })?;
                }
                Stream::Tls(Box::new(StreamOwned::new(conn, sock)))
            }
        };
        Ok(stream)
    }

    /// Closes both directions now (the server sees the replica leave).
    pub fn hang_up(&mut self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(Shutdown::Both),
            Stream::Unix(s) => s.shutdown(Shutdown::Both),
            Stream::Tls(s) => {
                s.conn.send_close_notify();
                let _ = s.conn.complete_io(&mut s.sock);
                s.sock.shutdown(Shutdown::Both)
            }
        };
    }

    /// Changes the read timeout (a DUMP walk's replies, a snapshot's wait).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(timeout),
            Stream::Unix(s) => s.set_read_timeout(timeout),
            Stream::Tls(s) => s.sock.set_read_timeout(timeout),
        }
    }
}

fn tcp(host: &str, port: u16, timeout: Option<Duration>) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("`{host}` has no address"));
    for addr in (host, port).to_socket_addrs()? {
        let attempt = match timeout {
            Some(t) => TcpStream::connect_timeout(&addr, t),
            None => TcpStream::connect(addr),
        };
        match attempt {
            Ok(s) => {
                s.set_read_timeout(timeout)?;
                s.set_write_timeout(timeout)?;
                // Commands are small and answered one at a time.
                s.set_nodelay(true)?;
                return Ok(s);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// A buffered connection: replies are read through the buffer, commands
/// written straight to the stream.
pub type Buffered = BufReader<Stream>;

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn tls_config(opts: &TlsOptions) -> Result<Arc<ClientConfig>, LiveError> {
    let fail = |why: String| LiveError::TlsSetup(why);
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| fail(e.to_string()))?;
    let builder = if opts.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider())))
    } else {
        builder.with_root_certificates(roots(opts.ca_file.as_deref())?)
    };
    let config = match (&opts.cert_file, &opts.key_file) {
        (Some(cert), Some(key)) => {
            let chain = certificates(cert)?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| fail(format!("{}: no private key read: {e}", key.display())))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| fail(format!("the client certificate and key: {e}")))?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => {
            return Err(fail(
                "a client certificate needs its key: give --tls-cert and --tls-key together".into(),
            ))
        }
    };
    Ok(Arc::new(config))
}

/// The CA certificates of `ca_file`, or the system's.
fn roots(ca_file: Option<&Path>) -> Result<RootCertStore, LiveError> {
    let mut store = RootCertStore::empty();
    match ca_file {
        Some(path) => {
            for cert in certificates(path)? {
                store
                    .add(cert)
                    .map_err(|e| LiveError::TlsSetup(format!("{}: {e}", path.display())))?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
            if store.is_empty() {
                return Err(LiveError::TlsSetup(
                    "no CA certificate found in the system's store: give --tls-ca FILE".into(),
                ));
            }
        }
    }
    Ok(store)
}

/// Every certificate in the PEM file `path` (at least one).
fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, LiveError> {
    let fail = |why: String| LiveError::TlsSetup(format!("{}: {why}", path.display()));
    // Opened first, so that a missing file is named as one.
    File::open(path).map_err(|e| fail(e.to_string()))?;
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| fail(e.to_string()))?;
    if certs.is_empty() {
        return Err(fail("no PEM certificate in it".into()));
    }
    Ok(certs)
}

/// `--tls-insecure`: any certificate is taken (signatures are still
/// checked, so the handshake itself is sound).
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
