// Mutual TLS of online pre-check (issue 17 item 4) on loopback (127.0.0.1, ephemeral ports, bounded waits).
// Every certificate is made here by the openssl command in a scratch directory: two CAs, a server certificate
// naming IP 127.0.0.1 and one naming another address, client certificates from each CA, a revoked one with
// the first CA's CRL, and an expired one. `openssl s_client` stands in for peers probe's own client refuses
// to be (an expired certificate, none at all, TLS 1.2 with a cipher outside probe's list).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/ScratchDir.h"
#include "online/OnlineTestSupport.h"
#include "probe/error.h"
#include "probe/online_client.h"
#include "probe/online_server.h"
#include "probe/precheck_frame.h"

namespace {

using namespace probe::online_test;
using probe::online::Client;
using probe::online::DumpRecords;
using probe::testing::ScratchDir;
namespace fs = std::filesystem;

bool openssl_on_path() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  std::size_t at = 0;
  while (at <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', at), dirs.size());
    const std::string dir = dirs.substr(at, end - at);
    if (!dir.empty() && ::access((dir + "/openssl").c_str(), X_OK) == 0) return true;
    at = end + 1;
  }
  return false;
}

// A small PKI made by the openssl command. Directories laid out as tls_path expects them:
//   server/      server.key, server.crt (CA 1, subjectAltName IP:127.0.0.1), ca.crt (CA 1)
//   server_other_ip/  the same, but the certificate names IP:192.0.2.1 (TEST-NET-1), not 127.0.0.1
//   server_crl/  the same and crl.pem (CA 1's CRL, revoking the certificate in revoked/)
//   good/        client.key, client.crt (CA 1), ca.crt (CA 1)
//   other/       a client certificate from CA 2, ca.crt (CA 1)
//   revoked/     a client certificate from CA 1 that CA 1's CRL revokes
//   expired/     a client certificate from CA 1 valid only in January 2020
//   distrust/    good/'s certificate, but ca.crt is CA 2's (does not trust the server)
class Pki {
 public:
  std::string error;  // non-empty: a command failed (what it said)

  Pki() {
    const std::string d = dir_.path().string();
    {
      std::ofstream cnf(d + "/openssl.cnf");
      cnf << "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = unused\n"
          << "[ca_ext]\nbasicConstraints = critical,CA:true\nkeyUsage = critical,keyCertSign,cRLSign\n"
          << "subjectKeyIdentifier = hash\n"
          << "[server_ext]\nbasicConstraints = critical,CA:false\nkeyUsage = critical,digitalSignature\n"
          << "extendedKeyUsage = serverAuth\nsubjectAltName = IP:127.0.0.1\n"
          << "[server_other_ip_ext]\nbasicConstraints = critical,CA:false\nkeyUsage = "
             "critical,digitalSignature\n"
          << "extendedKeyUsage = serverAuth\nsubjectAltName = IP:192.0.2.1\n"
          << "[client_ext]\nbasicConstraints = critical,CA:false\nkeyUsage = critical,digitalSignature\n"
          << "extendedKeyUsage = clientAuth\n"
          << "[policy_any]\ncommonName = supplied\n";
      for (const char* ca : {"ca1", "ca2"})
        cnf << "[" << ca << "]\ndatabase = " << d << "/" << ca << "/index.txt\nserial = " << d << "/" << ca
            << "/serial\nnew_certs_dir = " << d << "/" << ca << "\ncertificate = " << d << "/" << ca
            << "/ca.crt\nprivate_key = " << d << "/" << ca << "/ca.key\ndefault_md = sha256\n"
            << "default_days = 30\ndefault_crl_days = 30\npolicy = policy_any\nunique_subject = no\n";
    }
    for (const char* ca : {"ca1", "ca2"}) {
      fs::create_directory(d + "/" + ca);
      std::ofstream(d + "/" + ca + "/index.txt");
      std::ofstream(d + "/" + ca + "/serial") << (std::string(ca) == "ca1" ? "1000\n" : "2000\n");
      if (!openssl({"req",
                    "-config",
                    cnf(),
                    "-x509",
                    "-new",
                    "-newkey",
                    "ec",
                    "-pkeyopt",
                    "ec_paramgen_curve:prime256v1",
                    "-noenc",
                    "-keyout",
                    d + "/" + ca + "/ca.key",
                    "-out",
                    d + "/" + ca + "/ca.crt",
                    "-days",
                    "30",
                    "-subj",
                    std::string("/CN=probe test ") + ca,
                    "-extensions",
                    "ca_ext"}))
        return;
    }
    if (!issue("server", "ca1", "server_ext") || !issue("server_other_ip", "ca1", "server_other_ip_ext") ||
        !issue("client", "ca1", "client_ext") || !issue("other", "ca2", "client_ext") ||
        !issue("revoked", "ca1", "client_ext") ||
        !issue("expired", "ca1", "client_ext",
               {"-startdate", "20200101000000Z", "-enddate", "20200201000000Z"}))
      return;
    if (!openssl({"ca", "-config", cnf(), "-name", "ca1", "-revoke", d + "/revoked.crt"}) ||
        !openssl({"ca", "-config", cnf(), "-name", "ca1", "-gencrl", "-out", d + "/crl.pem"}))
      return;
    const std::string ca1 = d + "/ca1/ca.crt", ca2 = d + "/ca2/ca.crt";
    lay_out("server", "server", "server", ca1);
    lay_out("server_other_ip", "server_other_ip", "server", ca1);
    lay_out("server_crl", "server", "server", ca1);
    fs::copy_file(d + "/crl.pem", dir("server_crl") + "/crl.pem");
    lay_out("good", "client", "client", ca1);
    lay_out("other", "other", "client", ca1);
    lay_out("revoked", "revoked", "client", ca1);
    lay_out("expired", "expired", "client", ca1);
    lay_out("distrust", "client", "client", ca2);
  }

  std::string dir(const std::string& name) const { return dir_.file(name); }
  std::string file(const std::string& name) const { return dir_.file(name); }

  // Runs `openssl args...`; false (and `error` says why) when it fails.
  bool openssl(std::vector<std::string> args) {
    args.insert(args.begin(), "openssl");
    Process p(args);
    const int rc = p.wait_exit(30s);
    if (rc == 0) return true;
    std::string line;
    for (const auto& a : args) line += a + " ";
    error += line + "-> exit " + std::to_string(rc) + ": " + p.text + "\n";
    return false;
  }

 private:
  std::string cnf() const { return dir_.file("openssl.cnf"); }

  bool issue(const std::string& name, const std::string& ca, const std::string& ext,
             const std::vector<std::string>& dates = {}) {
    const std::string base = dir_.file(name);
    if (!openssl({"req", "-config", cnf(), "-new", "-newkey", "ec", "-pkeyopt",
                  "ec_paramgen_curve:prime256v1", "-noenc", "-keyout", base + ".key", "-out", base + ".csr",
                  "-subj", "/CN=" + name}))
      return false;
    std::vector<std::string> args = {"ca",          "-config", cnf(),         "-name", ca,
                                     "-batch",      "-notext", "-extensions", ext,     "-in",
                                     base + ".csr", "-out",    base + ".crt"};
    args.insert(args.end(), dates.begin(), dates.end());
    return openssl(args);
  }

  void lay_out(const std::string& name, const std::string& cert, const std::string& as,
               const std::string& ca) {
    const std::string d = dir(name);
    fs::create_directory(d);
    fs::copy_file(dir_.file(cert + ".key"), d + "/" + as + ".key");
    fs::copy_file(dir_.file(cert + ".crt"), d + "/" + as + ".crt");
    fs::copy_file(ca, d + "/ca.crt");
  }

  ScratchDir dir_{"online-pki"};
};

class OnlineTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (openssl_on_path()) pki_ = new Pki();
  }
  static void TearDownTestSuite() {
    delete pki_;
    pki_ = nullptr;
  }
  void SetUp() override {
    if (!pki_) GTEST_SKIP() << "the openssl command is not on PATH (Debian: apt-get install openssl)";
    ASSERT_TRUE(pki_->error.empty()) << pki_->error;
  }
  static Pki& pki() { return *pki_; }

  // A TLS server writing to `out` with the server certificate, as tls_client() is its client.
  static ServerOptions tls_server(const std::string& out) {
    auto o = server_options(out, 1);
    o.tls_dir = pki().dir("server");
    return o;
  }

  static ClientOptions tls_client(std::uint16_t port, const std::string& dir) {
    auto o = client_options(port);
    o.tls_dir = pki().dir(dir);
    return o;
  }

  // `openssl s_client` as a peer of `port` with the certificate in `dir` and extra flags; its stdin is
  // /dev/null, so it ends after the handshake.
  static int s_client(std::uint16_t port, const std::string& dir,
                      const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"openssl",  "s_client",
                                     "-connect", "127.0.0.1:" + std::to_string(port),
                                     "-cert",    pki().dir(dir) + "/client.crt",
                                     "-key",     pki().dir(dir) + "/client.key",
                                     "-CAfile",  pki().dir(dir) + "/ca.crt"};
    args.insert(args.end(), extra.begin(), extra.end());
    Process p(args);
    return p.wait_exit(30s);
  }

  // Sends every record of `dump` through `client` and closes it.
  static probe::online::ClientStats send_all(Client& client, const DumpRecords& records,
                                             std::uint64_t rank = 0) {
    for (std::size_t i = 0; i < records.size(); ++i) client.send_frame(records.frame(i), 0, rank);
    return client.close(30s);
  }

  static Pki* pki_;
};

Pki* OnlineTls::pki_ = nullptr;

TEST_F(OnlineTls, ATlsRunWritesTheRowsOfThePlaintextRun) {
  ScratchDir dir("online-tls");
  const DumpRecords records = DumpRecords::open(kRunUt + "pt_mixed/dump.json");
  auto serve = [&](const std::string& out, const std::string& server_tls, const std::string& client_tls,
                   std::string* log) {
    auto o = server_options(dir.file(out), 1);
    o.tls_dir = server_tls;
    Running server(o);
    auto c = client_options(server.port());
    c.tls_dir = client_tls;
    Client client(c);
    const auto stats = send_all(client, records);
    EXPECT_EQ(stats.acked, records.size());
    EXPECT_TRUE(stats.stopped);
    const ServerSummary s = server.finish();
    *log = server.joined_log();
    return s;
  };
  std::string plain_log, tls_log;
  const ServerSummary plain = serve("plain", "", "", &plain_log);
  const ServerSummary tls = serve("tls", pki().dir("server"), pki().dir("good"), &tls_log);
  EXPECT_EQ(tls.connections, 1u) << tls_log;
  EXPECT_EQ(tls.tls_refused, 0u) << tls_log;
  EXPECT_EQ(tls.lost, 0u) << tls_log;
  EXPECT_EQ(tls.stops, 1u) << tls_log;
  EXPECT_NE(tls_log.find("authenticated: TLSv1.3"), std::string::npos) << tls_log;
  EXPECT_NE(tls_log.find("peer CN=client"), std::string::npos) << tls_log;
  ASSERT_EQ(plain.ranks.count(0), 1u) << plain_log;
  ASSERT_EQ(tls.ranks.count(0), 1u) << tls_log;
  EXPECT_EQ(tls.ranks.at(0).run_ut.apis, records.size());
  EXPECT_EQ(slurp(tls.ranks.at(0).run_ut.result_csv), slurp(plain.ranks.at(0).run_ut.result_csv));
  EXPECT_EQ(slurp(tls.ranks.at(0).run_ut.details_csv), slurp(plain.ranks.at(0).run_ut.details_csv));
}

TEST_F(OnlineTls, AClientCertificateFromAnotherCaIsRefusedAndTheGoodClientGoesOn) {
  ScratchDir dir("online-tls");
  const std::string dump = kRunUt + "pt_fp32_fwd/dump.json";
  const auto want = offline(dump, dir.file("offline"));
  const DumpRecords records = DumpRecords::open(dump);
  auto o = tls_server(dir.file("online"));
  Running server(o);
  Client good(tls_client(server.port(), "good"));
  for (std::size_t i = 0; i < records.size() / 2; ++i) good.send_frame(records.frame(i), 0, 0);
  try {
    Client other(tls_client(server.port(), "other"));
    other.send_frame(records.frame(0), 0, 0);
    other.close(10s);
    ADD_FAILURE() << "a client certificate from another CA was accepted";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.kind(), probe::ErrorKind::Io) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find("127.0.0.1 port " + std::to_string(server.port())), std::string::npos) << what;
    EXPECT_NE(what.find("unknown ca"), std::string::npos) << what;  // the server's alert
  }
  for (std::size_t i = records.size() / 2; i < records.size(); ++i) good.send_frame(records.frame(i), 0, 0);
  EXPECT_EQ(good.close(30s).acked, records.size());
  const ServerSummary s = server.finish();
  const std::string log = server.joined_log();
  EXPECT_EQ(s.tls_refused, 1u) << log;
  EXPECT_EQ(s.connections, 1u) << log;
  EXPECT_EQ(s.lost, 0u) << log;
  EXPECT_NE(log.find("unable to get local issuer certificate"), std::string::npos) << log;
  EXPECT_EQ(slurp(s.ranks.at(0).run_ut.result_csv), slurp(want.result_csv));
  EXPECT_EQ(slurp(s.ranks.at(0).run_ut.details_csv), slurp(want.details_csv));
}

// A peer that trickles a TLS record header and then one byte at a time never lets the idle timeout fire;
// the handshake timeout closes it, and a good client is served meanwhile and afterwards.
TEST_F(OnlineTls, AStalledHandshakeIsClosedAtTheHandshakeTimeout) {
  ScratchDir dir("online-tls");
  const std::string dump = kRunUt + "pt_fp32_fwd/dump.json";
  const auto want = offline(dump, dir.file("offline"));
  const DumpRecords records = DumpRecords::open(dump);
  auto o = tls_server(dir.file("online"));
  o.handshake_timeout = 400ms;
  Running server(o);
  Client good(tls_client(server.port(), "good"));
  RawSocket stalled(server.port());
  const auto t0 = Clock::now();
  // A handshake record announcing 16 KiB, then its body one byte per 50 ms.
  const std::byte header[] = {std::byte{0x16}, std::byte{0x03}, std::byte{0x01}, std::byte{0x40},
                              std::byte{0}};
  for (std::byte b : header) stalled.send(std::span(&b, 1));
  bool closed = false;
  for (int i = 0; i < 200 && !closed; ++i) {
    const std::byte zero{0};
    if (::send(stalled.fd(), &zero, 1, MSG_NOSIGNAL) != 1) break;  // closed: EPIPE/ECONNRESET
    closed = stalled.closed_by_server(50ms);
  }
  const auto held = Clock::now() - t0;
  EXPECT_TRUE(closed || stalled.closed_by_server(5s)) << "the stalled peer was still connected after 10 s";
  EXPECT_GE(held, 400ms);
  for (std::size_t i = 0; i < records.size(); ++i) good.send_frame(records.frame(i), 0, 0);
  EXPECT_EQ(good.close(30s).acked, records.size());
  const ServerSummary s = server.finish();
  const std::string log = server.joined_log();
  EXPECT_EQ(s.tls_refused, 1u) << log;
  EXPECT_EQ(s.closed_idle, 0u) << log;
  EXPECT_EQ(s.connections, 1u) << log;
  EXPECT_NE(log.find("TLS handshake not finished after 400 ms (handshake timeout)"), std::string::npos)
      << log;
  EXPECT_EQ(slurp(s.ranks.at(0).run_ut.result_csv), slurp(want.result_csv));
}

TEST_F(OnlineTls, ARevokedClientCertificateIsRefusedWithTheCrl) {
  ScratchDir dir("online-tls");
  const DumpRecords records = DumpRecords::open(kRunUt + "pt_fp32_fwd/dump.json");
  auto o = server_options(dir.file("online"), 1);
  o.tls_dir = pki().dir("server_crl");
  Running server(o);
  try {
    Client revoked(tls_client(server.port(), "revoked"));
    ADD_FAILURE() << "a revoked client certificate was accepted";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.kind(), probe::ErrorKind::Io) << e.what();
    EXPECT_NE(std::string(e.what()).find("revoked"), std::string::npos) << e.what();
  }
  // Without the CRL the same certificate passes: the refusal above is the CRL's doing.
  {
    auto plain_o = tls_server(dir.file("no_crl"));
    Running no_crl(plain_o);
    Client revoked(tls_client(no_crl.port(), "revoked"));
    EXPECT_EQ(send_all(revoked, records).acked, records.size());
    EXPECT_EQ(no_crl.finish().tls_refused, 0u);
  }
  Client good(tls_client(server.port(), "good"));  // CA 1's CRL covers it and does not list it
  EXPECT_EQ(send_all(good, records).acked, records.size());
  const ServerSummary s = server.finish();
  const std::string log = server.joined_log();
  EXPECT_EQ(s.tls_refused, 1u) << log;
  EXPECT_EQ(s.connections, 1u) << log;
  EXPECT_NE(log.find("certificate revoked"), std::string::npos) << log;
  EXPECT_NE(log.find("CRL with 1 revoked"), std::string::npos) << log;
  EXPECT_EQ(s.ranks.at(0).run_ut.apis, records.size());
}

TEST_F(OnlineTls, PlaintextPeersAndTlsServersDoNotMix) {
  ScratchDir dir("online-tls");
  const DumpRecords records = DumpRecords::open(kRunUt + "pt_fp32_fwd/dump.json");
  auto o = tls_server(dir.file("online"));
  Running server(o);
  {  // msprobe's framing in the clear
    RawSocket raw(server.port());
    raw.send(probe::online::encode_message({0, 0, 0}, records.frame(0)));
    EXPECT_TRUE(raw.closed_by_server());
  }
  {  // probe's client without TLS: a lost connection, reported
    Client plain(client_options(server.port()));
    EXPECT_THROW(
        {
          plain.send_frame(records.frame(0), 0, 0);
          plain.close(10s);
        },
        probe::Error);
  }
  server.stop.request_stop();
  const ServerSummary s = server.finish();
  const std::string log = server.joined_log();
  EXPECT_EQ(s.tls_refused, 2u) << log;
  EXPECT_EQ(s.connections, 0u) << log;
  EXPECT_EQ(s.messages, 0u) << log;  // nothing sent in the clear was taken as a message
  EXPECT_TRUE(s.ranks.empty()) << log;

  // A TLS client and a plaintext server: the handshake fails in the constructor, never a plaintext fallback.
  Running plain_server(server_options(dir.file("plain"), 0));
  try {
    Client tls(tls_client(plain_server.port(), "good"));
    ADD_FAILURE() << "a TLS client connected to a plaintext server";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.kind(), probe::ErrorKind::Io) << e.what();
    EXPECT_NE(std::string(e.what()).find("TLS handshake"), std::string::npos) << e.what();
  }
}

TEST_F(OnlineTls, TheClientChecksTheServerCertificate) {
  ScratchDir dir("online-tls");
  auto o = tls_server(dir.file("online"));
  Running server(o);
  try {
    Client c(tls_client(server.port(), "distrust"));  // ca.crt is CA 2: the server's CA 1 certificate fails
    ADD_FAILURE() << "the client accepted a server certificate its ca.crt does not vouch for";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.kind(), probe::ErrorKind::Io) << e.what();
    EXPECT_NE(std::string(e.what()).find("certificate verify failed"), std::string::npos) << e.what();
  }
  // The client's alert names the reason in the server's log.
  EXPECT_TRUE(server.wait_for_log("closed: TLS handshake failed: tlsv1 alert unknown ca"))
      << server.joined_log();
}

// A certificate from the right CA is not enough: it must name the address the client connected to.
TEST_F(OnlineTls, TheClientRefusesAServerCertificateNamingAnotherAddress) {
  ScratchDir dir("online-tls");
  auto o = server_options(dir.file("online"), 1);
  o.tls_dir = pki().dir("server_other_ip");
  Running server(o);
  try {
    Client c(tls_client(server.port(), "good"));
    ADD_FAILURE() << "the client accepted a certificate for 192.0.2.1 from a server at 127.0.0.1";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.kind(), probe::ErrorKind::Io) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find("certificate verify failed"), std::string::npos) << what;
    EXPECT_NE(what.find("IP address mismatch"), std::string::npos) << what;
  }
  EXPECT_TRUE(server.wait_for_log("closed: TLS handshake failed")) << server.joined_log();
  server.stop.request_stop();
  const ServerSummary s = server.finish();
  EXPECT_EQ(s.tls_refused, 1u) << server.joined_log();
  EXPECT_EQ(s.connections, 0u) << server.joined_log();
}

// Mutual TLS: a peer that presents no certificate at all (openssl s_client without -cert) is closed in the
// handshake, and the server goes on serving a client that has one.
TEST_F(OnlineTls, APeerWithoutACertificateIsRefusedAndTheServerGoesOn) {
  ScratchDir dir("online-tls");
  const DumpRecords records = DumpRecords::open(kRunUt + "pt_fp32_fwd/dump.json");
  auto o = tls_server(dir.file("online"));
  Running server(o);
  for (const char* version : {"-tls1_3", "-tls1_2"}) {
    Process anonymous({"openssl", "s_client", "-connect", "127.0.0.1:" + std::to_string(server.port()),
                       "-CAfile", pki().dir("good") + "/ca.crt", version});
    anonymous.wait_exit(30s);
  }
  EXPECT_TRUE(server.wait_for_log("peer did not return a certificate")) << server.joined_log();
  Client good(tls_client(server.port(), "good"));
  EXPECT_EQ(send_all(good, records).acked, records.size());
  const ServerSummary s = server.finish();
  const std::string log = server.joined_log();
  EXPECT_EQ(s.tls_refused, 2u) << log;
  EXPECT_EQ(s.connections, 1u) << log;
  EXPECT_EQ(s.lost, 0u) << log;
  EXPECT_EQ(log.find(" authenticated: "), log.rfind(" authenticated: ")) << "only the good client is\n"
                                                                         << log;
  EXPECT_NE(log.find("peer CN=client"), std::string::npos) << log;
  ASSERT_EQ(s.ranks.count(0), 1u) << log;
  EXPECT_EQ(s.ranks.at(0).run_ut.apis, records.size());
}

TEST_F(OnlineTls, ExpiredCertificatesAreRefused) {
  ScratchDir dir("online-tls");
  // probe's own certificate is checked when it is loaded, on either side.
  try {
    Client c(tls_client(1, "expired"));
    ADD_FAILURE() << "an expired client certificate was loaded";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.kind(), probe::ErrorKind::InvalidArgument) << e.what();
    EXPECT_EQ(e.file(), pki().dir("expired") + "/client.crt");
    EXPECT_NE(e.message().find("expired on 2020-02-01"), std::string::npos) << e.what();
  }
  const std::string expired_server = dir.file("expired_server");
  fs::create_directory(expired_server);
  fs::copy_file(pki().file("expired.crt"), expired_server + "/server.crt");
  fs::copy_file(pki().file("expired.key"), expired_server + "/server.key");
  fs::copy_file(pki().dir("server") + "/ca.crt", expired_server + "/ca.crt");
  auto bad = server_options(dir.file("unused"), 1);
  bad.tls_dir = expired_server;
  try {
    Server s(bad);
    ADD_FAILURE() << "an expired server certificate was loaded";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.file(), expired_server + "/server.crt") << e.what();
    EXPECT_NE(e.message().find("expired"), std::string::npos) << e.what();
  }
  // A peer presenting an expired certificate is refused in the handshake.
  auto o = tls_server(dir.file("online"));
  Running server(o);
  s_client(server.port(), "expired");
  EXPECT_TRUE(server.wait_for_log("certificate has expired")) << server.joined_log();
  server.stop.request_stop();
  const ServerSummary s = server.finish();
  EXPECT_EQ(s.tls_refused, 1u) << server.joined_log();
  EXPECT_EQ(s.connections, 0u) << server.joined_log();
}

// TLS 1.2 works, with probe's ciphers only (ECDHE with an AEAD): a client offering only a CBC cipher is
// refused.
TEST_F(OnlineTls, TlsTwelveUsesOnlyTheRestrictedCiphers) {
  ScratchDir dir("online-tls");
  auto o = tls_server(dir.file("online"));
  Running server(o);
  s_client(server.port(), "good", {"-tls1_2"});
  EXPECT_TRUE(server.wait_for_log("authenticated: TLSv1.2 ECDHE-ECDSA-")) << server.joined_log();
  s_client(server.port(), "good", {"-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA"});
  EXPECT_TRUE(server.wait_for_log("no shared cipher")) << server.joined_log();
  server.stop.request_stop();
  const ServerSummary s = server.finish();
  EXPECT_EQ(s.connections, 1u) << server.joined_log();
  EXPECT_EQ(s.tls_refused, 1u) << server.joined_log();
}

TEST_F(OnlineTls, BadKeyFilesAreErrorsNamingTheFile) {
  ScratchDir dir("online-tls");
  auto copy_dir = [&](const std::string& from, const std::string& to) {
    fs::copy(pki().dir(from), dir.file(to));
    return dir.file(to);
  };
  auto client_error = [&](const std::string& tls_dir) -> probe::Error {
    auto o = client_options(1);
    o.tls_dir = tls_dir;
    try {
      Client c(o);
    } catch (const probe::Error& e) {
      return e;
    }
    ADD_FAILURE() << "no error for " << tls_dir;
    return probe::Error(probe::ErrorKind::Internal, "none");
  };
  {  // the server's key is missing
    const std::string d = copy_dir("server", "no_server_key");
    fs::remove(d + "/server.key");
    auto o = server_options(dir.file("unused"), 1);
    o.tls_dir = d;
    try {
      Server s(o);
      ADD_FAILURE() << "a server started without its key";
    } catch (const probe::Error& e) {
      EXPECT_EQ(e.kind(), probe::ErrorKind::Io) << e.what();
      EXPECT_EQ(e.file(), d + "/server.key") << e.what();
      EXPECT_NE(e.message().find("missing"), std::string::npos) << e.what();
    }
  }
  {  // the client's key is missing
    const std::string d = copy_dir("good", "no_client_key");
    fs::remove(d + "/client.key");
    const probe::Error e = client_error(d);
    EXPECT_EQ(e.kind(), probe::ErrorKind::Io) << e.what();
    EXPECT_EQ(e.file(), d + "/client.key") << e.what();
  }
  {  // the key of another certificate
    const std::string d = copy_dir("good", "mismatch");
    fs::copy_file(pki().file("other.key"), d + "/client.key", fs::copy_options::overwrite_existing);
    const probe::Error e = client_error(d);
    EXPECT_EQ(e.kind(), probe::ErrorKind::InvalidArgument) << e.what();
    EXPECT_EQ(e.file(), d + "/client.key") << e.what();
    EXPECT_NE(e.message().find("does not belong"), std::string::npos) << e.what();
  }
  {  // an encrypted key: refused, never a passphrase prompt
    const std::string d = copy_dir("good", "encrypted");
    fs::remove(d + "/client.key");
    ASSERT_TRUE(pki().openssl({"pkey", "-in", pki().file("client.key"), "-aes256", "-passout", "pass:secret",
                               "-out", d + "/client.key"}))
        << pki().error;
    const probe::Error e = client_error(d);
    EXPECT_EQ(e.kind(), probe::ErrorKind::Unsupported) << e.what();
    EXPECT_EQ(e.file(), d + "/client.key") << e.what();
  }
  {  // not PEM
    const std::string d = copy_dir("good", "garbage");
    std::ofstream(d + "/ca.crt", std::ios::trunc) << "not a certificate\n";
    const probe::Error e = client_error(d);
    EXPECT_EQ(e.kind(), probe::ErrorKind::Format) << e.what();
    EXPECT_EQ(e.file(), d + "/ca.crt") << e.what();
  }
  {  // TLS and the shared-directory mode exclude each other
    auto o = client_options(1);
    o.tls_dir = pki().dir("good");
    o.shared_dir = dir.path().string();
    EXPECT_THROW(Client{o}, probe::Error);
  }
}

// --- the CLI ---------------------------------------------------------------------------------------------

TEST_F(OnlineTls, RunUtAndReplayWithTlsPathGiveTheOfflineRows) {
  ScratchDir dir("online-tls");
  const std::string dump = kRunUt + "real_ties_fp32/dump.json";
  const auto want = offline(dump, dir.file("offline"));
  {
    std::ofstream cfg(dir.file("config.json"));
    cfg << R"({"task": "run_ut", "run_ut": {"is_online": true, "host": "127.0.0.1", "port": 0,
              "rank_list": [0], "nfs_path": "", "tls_path": ")"
        << pki().dir("server") << R"("}})";
  }
  Process server({PROBE_CLI_PATH, "run_ut", "-config", dir.file("config.json"), "-o", dir.file("online"),
                  "--timestamp", kTs, "-n", "2"});
  const std::uint16_t port = server.listening_port();
  ASSERT_NE(port, 0) << server.text;
  Process replay({PROBE_CLI_PATH, "replay", "-api_info", dump, "--port", std::to_string(port), "--tls_path",
                  pki().dir("good"), "-q"});
  EXPECT_EQ(replay.wait_exit(60s), 0) << replay.text;
  EXPECT_EQ(server.wait_exit(60s), 0) << server.text;
  EXPECT_NE(server.text.find("mutual TLS"), std::string::npos) << server.text;
  const std::string base = dir.file("online") + "/accuracy_checking_";
  EXPECT_EQ(slurp(base + "result_" + kTs + "_rank0.csv"), slurp(want.result_csv));
  EXPECT_EQ(slurp(base + "details_" + kTs + "_rank0.csv"), slurp(want.details_csv));
}

TEST_F(OnlineTls, TheCliNamesAMissingKeyFile) {
  ScratchDir dir("online-tls");
  fs::copy(pki().dir("server"), dir.file("tls"));
  fs::remove(dir.file("tls") + "/server.key");
  Process server({PROBE_CLI_PATH, "run_ut", "--online", "--port", "0", "--tls_path", dir.file("tls"), "-o",
                  dir.file("o")});
  EXPECT_EQ(server.wait_exit(20s), 3) << server.text;  // I/O error
  EXPECT_NE(server.text.find(dir.file("tls") + "/server.key"), std::string::npos) << server.text;
  EXPECT_EQ(server.text.find("listening"), std::string::npos) << server.text;
  Process replay({PROBE_CLI_PATH, "replay", "-api_info", kRunUt + "pt_fp32_fwd/dump.json", "--port", "1",
                  "--tls_path", dir.file("tls")});
  EXPECT_EQ(replay.wait_exit(20s), 3) << replay.text;
  EXPECT_NE(replay.text.find(dir.file("tls") + "/client.crt"), std::string::npos) << replay.text;
}

}  // namespace
