// Mutual TLS for online pre-check over OpenSSL memory BIOs (online/Tls.h).
//
// Why OpenSSL and memory BIOs: Debian's OpenSSL is the TLS library every Debian machine already has and keeps
// patched; writing TLS by hand is out of the question. Memory BIOs (rather than SSL_set_fd) leave every
// socket call where it was (the server's poll loop, the client's I/O thread), so TLS adds no second I/O path
// and no OpenSSL call ever blocks.
#include "online/Tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "probe/error.h"

namespace probe::online::detail {
namespace {

// TLS 1.2: ECDHE (forward secrecy) with an AEAD cipher only; ECDSA and RSA certificates both work.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:"
    "ECDHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256";
// TLS 1.3: its AEAD suites (OpenSSL's default set, written out so it cannot drift).
constexpr const char* kTls13Suites =
    "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256";
constexpr const char* kField = "tls_path";

struct BioFree {
  void operator()(BIO* p) const { BIO_free(p); }
};
struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
};
struct CrlFree {
  void operator()(X509_CRL* p) const { X509_CRL_free(p); }
};
struct KeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct CtxFree {
  void operator()(SSL_CTX* p) const { SSL_CTX_free(p); }
};
struct SslFree {
  void operator()(SSL* p) const { SSL_free(p); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using CrlPtr = std::unique_ptr<X509_CRL, CrlFree>;
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyFree>;

// This thread's queued OpenSSL errors as one line of reasons ("certificate verify failed; ..."); empties it.
std::string openssl_errors() {
  std::string text;
  for (unsigned long e = ERR_get_error(); e != 0; e = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(e);
    char code[64];
    std::snprintf(code, sizeof code, "OpenSSL error %lx", e);
    const std::string r = reason ? reason : code;
    if (text.find(r) != std::string::npos) continue;
    if (!text.empty()) text += "; ";
    text += r;
  }
  return text.empty() ? std::string("no reason given by OpenSSL") : text;
}

// Never prompts on the terminal for a passphrase (OpenSSL's default would): an encrypted key is refused.
int no_passphrase(char*, int, int, void*) { return 0; }

std::string read_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error(ErrorKind::Io, "the " + what + " is missing", path, kField);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, "cannot read the " + what + ": " + std::strerror(errno), path, kField);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) throw Error(ErrorKind::Io, "cannot read the " + what, path, kField);
  return ss.str();
}

BioPtr memory_bio(const std::string& text) {
  BioPtr bio(BIO_new_mem_buf(text.data(), static_cast<int>(std::min<std::size_t>(text.size(), INT_MAX))));
  if (!bio) throw Error(ErrorKind::Internal, "OpenSSL cannot allocate a buffer: " + openssl_errors());
  return bio;
}

std::vector<X509Ptr> read_certificates(const std::string& path, const std::string& what) {
  const std::string text = read_file(path, what);
  BioPtr bio = memory_bio(text);
  std::vector<X509Ptr> certs;
  ERR_clear_error();
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, no_passphrase, nullptr)) certs.emplace_back(x);
  ERR_clear_error();  // the end of the text reads as "no start line"
  if (certs.empty()) throw Error(ErrorKind::Format, "no PEM certificate in the " + what, path, kField);
  return certs;
}

KeyPtr read_key(const std::string& path) {
  const std::string text = read_file(path, "private key");
  if (text.find("ENCRYPTED") != std::string::npos)
    throw Error(
        ErrorKind::Unsupported,
        "the private key is encrypted; probe reads unencrypted keys only (msprobe asked for the "
        "passphrase on the terminal): decrypt it with `openssl pkey -in KEY -out KEY` into a file only "
        "its owner can read",
        path, kField);
  BioPtr bio = memory_bio(text);
  ERR_clear_error();
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr));
  if (!key) throw Error(ErrorKind::Format, "not a PEM private key: " + openssl_errors(), path, kField);
  return key;
}

std::vector<CrlPtr> read_crls(const std::string& path) {
  const std::string text = read_file(path, "certificate revocation list");
  BioPtr bio = memory_bio(text);
  std::vector<CrlPtr> crls;
  ERR_clear_error();
  while (X509_CRL* c = PEM_read_bio_X509_CRL(bio.get(), nullptr, no_passphrase, nullptr))
    crls.emplace_back(c);
  ERR_clear_error();
  if (crls.empty())
    throw Error(ErrorKind::Format, "no PEM certificate revocation list (X509 CRL)", path, kField);
  return crls;
}

std::string time_text(const ASN1_TIME* t) {
  std::tm tm{};
  if (!t || ASN1_TIME_to_tm(t, &tm) != 1) return "an unreadable date";
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string name_text(const X509_NAME* name) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || !name) return "?";
  X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string("(empty name)");
}

// msprobe checks the validity window of its certificates at start; so does probe (the peer's is checked by
// OpenSSL in the handshake).
void check_dates(X509* cert, const std::string& path, const std::string& what) {
  const ASN1_TIME* from = X509_get0_notBefore(cert);
  const ASN1_TIME* until = X509_get0_notAfter(cert);
  const int before = X509_cmp_current_time(from), after = X509_cmp_current_time(until);
  if (before == 0 || after == 0)
    throw Error(ErrorKind::Format, "the " + what + " has unreadable validity dates", path, kField);
  if (before > 0)
    throw Error(ErrorKind::InvalidArgument,
                "the " + what + " (" + name_text(X509_get_subject_name(cert)) + ") is not valid before " +
                    time_text(from),
                path, kField);
  if (after < 0)
    throw Error(
        ErrorKind::InvalidArgument,
        "the " + what + " (" + name_text(X509_get_subject_name(cert)) + ") expired on " + time_text(until),
        path, kField);
}

void check_crl_dates(X509_CRL* crl, const std::string& path) {
  const ASN1_TIME* next = X509_CRL_get0_nextUpdate(crl);
  if (next && X509_cmp_current_time(next) < 0)
    throw Error(ErrorKind::InvalidArgument,
                "the certificate revocation list of " + name_text(X509_CRL_get_issuer(crl)) +
                    " is out of date (next update was due " + time_text(next) + ")",
                path, kField);
  const ASN1_TIME* last = X509_CRL_get0_lastUpdate(crl);
  if (last && X509_cmp_current_time(last) > 0)
    throw Error(ErrorKind::InvalidArgument,
                "the certificate revocation list of " + name_text(X509_CRL_get_issuer(crl)) +
                    " is not valid before " + time_text(last),
                path, kField);
}

// Client: a session ticket arrived; the session's app data is its `confirmed` flag.
int on_new_session(SSL* ssl, SSL_SESSION*) {
  if (auto* confirmed = static_cast<bool*>(SSL_get_app_data(ssl))) *confirmed = true;
  return 0;  // not kept: probe never resumes a session
}

}  // namespace

struct TlsContext::Impl {
  TlsRole role = TlsRole::Server;
  std::unique_ptr<SSL_CTX, CtxFree> ctx;
  std::string description;
};

TlsContext::TlsContext(const std::string& dir, TlsRole role) : impl_(std::make_unique<Impl>()) {
  impl_->role = role;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw Error(ErrorKind::Io, "the TLS directory does not exist or is not a directory", dir, kField);
  const std::string own = role == TlsRole::Server ? "server" : "client";
  const std::string key_path = dir + "/" + own + ".key", crt_path = dir + "/" + own + ".crt",
                    ca_path = dir + "/ca.crt", crl_path = dir + "/crl.pem";

  const std::vector<X509Ptr> certs = read_certificates(crt_path, own + " certificate");
  check_dates(certs.front().get(), crt_path, own + " certificate");
  const KeyPtr key = read_key(key_path);
  const std::vector<X509Ptr> cas = read_certificates(ca_path, "CA certificate");
  for (const auto& ca : cas) check_dates(ca.get(), ca_path, "CA certificate");
  std::vector<CrlPtr> crls;
  if (std::filesystem::exists(crl_path, ec)) {
    crls = read_crls(crl_path);
    for (const auto& crl : crls) check_crl_dates(crl.get(), crl_path);
  }

  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(role == TlsRole::Server ? TLS_server_method() : TLS_client_method());
  if (!ctx) throw Error(ErrorKind::Internal, "cannot create an OpenSSL context: " + openssl_errors());
  impl_->ctx.reset(ctx);
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1 || SSL_CTX_set_ciphersuites(ctx, kTls13Suites) != 1)
    throw Error(ErrorKind::Internal, "OpenSSL refuses probe's TLS settings: " + openssl_errors());
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);

  if (SSL_CTX_use_certificate(ctx, certs.front().get()) != 1)
    throw Error(ErrorKind::InvalidArgument, "OpenSSL refuses the certificate: " + openssl_errors(), crt_path,
                kField);
  for (std::size_t i = 1; i < certs.size(); ++i)  // intermediates after the leaf, as in a chain file
    if (SSL_CTX_add1_chain_cert(ctx, certs[i].get()) != 1)
      throw Error(ErrorKind::InvalidArgument, "OpenSSL refuses a chain certificate: " + openssl_errors(),
                  crt_path, kField);
  if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1)
    throw Error(
        ErrorKind::InvalidArgument,
        "the private key does not belong to the certificate " + crt_path + " (" + openssl_errors() + ")",
        key_path, kField);

  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  std::string ca_names;
  for (const auto& ca : cas) {
    if (X509_STORE_add_cert(store, ca.get()) != 1)
      throw Error(ErrorKind::InvalidArgument, "OpenSSL refuses a CA certificate: " + openssl_errors(),
                  ca_path, kField);
    // The server names its CAs in the CertificateRequest, so a client with several certificates picks right.
    if (role == TlsRole::Server && SSL_CTX_add_client_CA(ctx, ca.get()) != 1)
      throw Error(ErrorKind::InvalidArgument, "OpenSSL refuses a CA certificate: " + openssl_errors(),
                  ca_path, kField);
    ca_names += (ca_names.empty() ? "" : ", ") + name_text(X509_get_subject_name(ca.get()));
  }
  int revoked = 0;
  for (const auto& crl : crls) {
    if (X509_STORE_add_crl(store, crl.get()) != 1)
      throw Error(ErrorKind::InvalidArgument, "OpenSSL refuses the revocation list: " + openssl_errors(),
                  crl_path, kField);
    if (const auto* list = X509_CRL_get_REVOKED(crl.get())) revoked += sk_X509_REVOKED_num(list);
  }
  // With a CRL, the peer's certificate must be covered by a valid CRL of its issuer and not be on it.
  if (!crls.empty()) X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
  SSL_CTX_set_verify(
      ctx, role == TlsRole::Server ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT : SSL_VERIFY_PEER,
      nullptr);
  if (role == TlsRole::Server) {
    // One TLS 1.3 session ticket, sent once the client's certificate has been accepted: the client waits for
    // it (TlsSession::established). probe never resumes sessions, so the server keeps none.
    SSL_CTX_set_num_tickets(ctx, 1);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  } else {
    // The client is told of the ticket through the new-session callback; it stores nothing.
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, on_new_session);
  }
  impl_->description = "certificate " + name_text(X509_get_subject_name(certs.front().get())) + ", CA " +
                       ca_names +
                       (crls.empty() ? std::string(", no CRL")
                                     : ", CRL with " + std::to_string(revoked) + " revoked certificate(s)");
}

TlsContext::~TlsContext() = default;

TlsRole TlsContext::role() const { return impl_->role; }

const std::string& TlsContext::description() const { return impl_->description; }

struct TlsSession::Impl {
  TlsRole role = TlsRole::Server;
  std::unique_ptr<SSL, SslFree> ssl;
  bool done = false;       // handshake finished
  bool confirmed = false;  // client: a session ticket arrived (the server accepted our certificate)
  bool closed = false;     // the peer sent close_notify
  bool failed = false;
  bool shut = false;
  std::vector<std::byte> pending;  // plaintext written before the handshake finished

  Error failure(int code) {
    failed = true;
    std::string why = code == SSL_ERROR_SSL       ? openssl_errors()
                      : code == SSL_ERROR_SYSCALL ? "the TLS stream ended unexpectedly"
                                                  : "OpenSSL error code " + std::to_string(code);
    const long verify = SSL_get_verify_result(ssl.get());
    if (verify != X509_V_OK) why += " (" + std::string(X509_verify_cert_error_string(verify)) + ")";
    return Error(ErrorKind::Io, why);
  }

  void write_now(std::span<const std::byte> plain) {
    std::size_t at = 0;
    while (at < plain.size()) {
      const int chunk = static_cast<int>(std::min<std::size_t>(plain.size() - at, 1 << 30));
      ERR_clear_error();
      const int n = SSL_write(ssl.get(), plain.data() + at, chunk);
      if (n <= 0) throw failure(SSL_get_error(ssl.get(), n));
      at += static_cast<std::size_t>(n);
    }
  }
};

TlsSession::TlsSession(const TlsContext& context, const std::string& server_ip)
    : impl_(std::make_unique<Impl>()) {
  impl_->role = context.impl_->role;
  ERR_clear_error();
  impl_->ssl.reset(SSL_new(context.impl_->ctx.get()));
  if (!impl_->ssl) throw Error(ErrorKind::Internal, "cannot create a TLS session: " + openssl_errors());
  SSL* ssl = impl_->ssl.get();
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  if (!in || !out) {
    BIO_free(in);
    BIO_free(out);
    throw Error(ErrorKind::Internal, "cannot create the TLS buffers: " + openssl_errors());
  }
  SSL_set_bio(ssl, in, out);  // the session owns both
  SSL_set_app_data(ssl, &impl_->confirmed);
  if (impl_->role == TlsRole::Client) {
    SSL_set_connect_state(ssl);
    if (!server_ip.empty() && X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), server_ip.c_str()) != 1)
      throw Error(ErrorKind::InvalidArgument, "not an IP address: '" + server_ip + "'", {}, "host");
  } else {
    SSL_set_accept_state(ssl);
  }
}

TlsSession::~TlsSession() = default;

void TlsSession::feed(std::span<const std::byte> cipher) {
  BIO* in = SSL_get_rbio(impl_->ssl.get());
  std::size_t at = 0;
  while (at < cipher.size()) {
    const int chunk = static_cast<int>(std::min<std::size_t>(cipher.size() - at, 1 << 30));
    const int n = BIO_write(in, cipher.data() + at, chunk);
    if (n <= 0) throw Error(ErrorKind::Internal, "cannot buffer received TLS data: " + openssl_errors());
    at += static_cast<std::size_t>(n);
  }
}

bool TlsSession::read(std::vector<std::byte>& plain) {
  Impl& s = *impl_;
  SSL* ssl = s.ssl.get();
  if (s.closed) return false;
  if (s.failed) throw Error(ErrorKind::Io, "the TLS session has failed");
  if (!s.done) {
    ERR_clear_error();
    const int r = SSL_do_handshake(ssl);
    if (r != 1) {
      const int code = SSL_get_error(ssl, r);
      if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) return true;
      throw s.failure(code);
    }
    s.done = true;
    if (!s.pending.empty()) {
      s.write_now(s.pending);
      s.pending.clear();
      s.pending.shrink_to_fit();
    }
  }
  constexpr std::size_t kChunk = 64 * 1024;
  for (;;) {
    const std::size_t at = plain.size();
    plain.resize(at + kChunk);
    ERR_clear_error();
    const int n = SSL_read(ssl, plain.data() + at, static_cast<int>(kChunk));
    plain.resize(at + static_cast<std::size_t>(std::max(n, 0)));
    if (n > 0) continue;
    const int code = SSL_get_error(ssl, n);
    if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) return true;
    if (code == SSL_ERROR_ZERO_RETURN) {
      s.closed = true;
      return false;
    }
    throw s.failure(code);
  }
}

void TlsSession::write(std::span<const std::byte> plain) {
  if (impl_->failed) throw Error(ErrorKind::Io, "the TLS session has failed");
  if (!impl_->done) {
    impl_->pending.insert(impl_->pending.end(), plain.begin(), plain.end());
    return;
  }
  impl_->write_now(plain);
}

void TlsSession::drain(std::vector<std::byte>& out) {
  BIO* wbio = SSL_get_wbio(impl_->ssl.get());
  for (;;) {
    const std::size_t pending = BIO_ctrl_pending(wbio);
    if (pending == 0) return;
    const std::size_t chunk = std::min<std::size_t>(pending, 1 << 30);
    const std::size_t at = out.size();
    out.resize(at + chunk);
    const int n = BIO_read(wbio, out.data() + at, static_cast<int>(chunk));
    out.resize(at + static_cast<std::size_t>(std::max(n, 0)));
    if (n <= 0) return;
  }
}

void TlsSession::shutdown() {
  Impl& s = *impl_;
  if (!s.done || s.failed || s.shut) return;
  s.shut = true;
  ERR_clear_error();
  SSL_shutdown(s.ssl.get());  // queues close_notify; the peer's answer is not awaited
  ERR_clear_error();
}

bool TlsSession::handshake_done() const { return impl_->done; }

bool TlsSession::established() const {
  const Impl& s = *impl_;
  if (!s.done) return false;
  if (s.role == TlsRole::Server) return true;
  return SSL_version(s.ssl.get()) < TLS1_3_VERSION || s.confirmed;
}

std::string TlsSession::description() const {
  SSL* ssl = impl_->ssl.get();
  if (!impl_->done) return "TLS handshake not finished";
  std::string text = std::string(SSL_get_version(ssl)) + " " + SSL_get_cipher_name(ssl);
  if (X509* peer = SSL_get0_peer_certificate(ssl)) text += ", peer " + name_text(X509_get_subject_name(peer));
  return text;
}

}  // namespace probe::online::detail
