// Mutual TLS for online pre-check (dump-and-compare §5.3), with Debian's OpenSSL. Internal:
// no OpenSSL type leaves lib/online/Tls.cpp. TLS is a layer under the byte stream the server's poll loop and
// the client's I/O thread already move: a TlsSession takes the ciphertext read from the socket (feed), hands
// back plaintext (read), encrypts plaintext (write) and leaves the ciphertext to send in a buffer (drain), so
// the wire codec (probe/online_wire.h) and the socket code do not change.
//
// Settings: TLS 1.2 or 1.3 only; TLS 1.2 cipher list restricted to ECDHE key exchange with AES-GCM or
// ChaCha20-Poly1305, TLS 1.3 with its AEAD suites; no renegotiation, no compression. Both ends present a
// certificate and verify the other's against ca.crt (the server requires one from the client); the client
// also checks that the server's certificate names the address it connected to (subjectAltName IP). With
// crl.pem present, the peer's certificate is checked against it (X509_V_FLAG_CRL_CHECK). Certificate dates
// are checked by OpenSSL for the peer and at load time for the own certificate, the CA certificates and the
// CRL.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace probe::online::detail {

enum class TlsRole { Server, Client };

/// One end's certificates and settings, loaded from msprobe's tls_path directory: `server.key`/`server.crt`
/// (server) or `client.key`/`client.crt` (client), `ca.crt`, and `crl.pem` when present. Throws
/// probe::Error naming the file: Io (missing, unreadable), Format (not PEM), Unsupported (an encrypted key),
/// InvalidArgument (a key that does not match its certificate, a certificate or CRL outside its dates).
/// Immutable once built; sessions of one context may run on different threads.
class TlsContext {
 public:
  TlsContext(const std::string& dir, TlsRole role);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  TlsRole role() const;
  /// "certificate CN=..., CA CN=..., CRL with N revoked" for a log line.
  const std::string& description() const;

 private:
  friend class TlsSession;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// One TLS connection over memory buffers. Not thread-safe (one owner thread at a time).
class TlsSession {
 public:
  /// `server_ip`: client role only, the address the server's certificate must name.
  explicit TlsSession(const TlsContext& context, const std::string& server_ip = {});
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  /// Ciphertext received from the socket.
  void feed(std::span<const std::byte> cipher);
  /// Advances the handshake and appends the plaintext that has arrived to `plain`. Returns false once the
  /// peer has ended the session (close_notify). Throws probe::Error(Io) with OpenSSL's reasons (and the
  /// certificate verification result) when the handshake or a record fails; the session is then unusable, but
  /// drain() still yields the alert for the peer.
  bool read(std::vector<std::byte>& plain);
  /// Encrypts plaintext; before the handshake has finished it is kept and encrypted then.
  void write(std::span<const std::byte> plain);
  /// Moves the ciphertext waiting for the socket (handshake, records, alerts) to the end of `out`.
  void drain(std::vector<std::byte>& out);
  /// Queues close_notify (after the handshake; no-op otherwise).
  void shutdown();

  bool handshake_done() const;
  /// The client's handshake is done and the server has accepted it: with TLS 1.3 the server's certificate
  /// check of the client comes after the client's handshake, and the session ticket the server then sends
  /// says it passed. Server role: the same as handshake_done().
  bool established() const;
  /// "TLSv1.3 TLS_AES_256_GCM_SHA384, peer CN=..." once the handshake is done.
  std::string description() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace probe::online::detail
