// Online pre-check transport (issue 17 item 7), all on loopback (127.0.0.1). One iteration moves a batch of
// 64 API records (Functional.relu on a float32 [256, 256] tensor: 256 KiB in, 256 KiB out, about 512 KiB per
// frame):
//   BM_RawSocket         baseline: the same message bytes through a plain TCP socket pair, read and dropped;
//   BM_ClientServerWire  probe::online::Client -> Server, records acknowledged and decoded but of a rank
//   outside
//                        rank_list, so nothing is checked: framing, CRC, frame decoding and acknowledgements;
//                        counter vs_raw = raw seconds / its seconds (measured in the same run);
//   BM_ClientServerTls   the same as BM_ClientServerWire through mutual TLS (certificates made by the openssl
//                        command at start: EC P-256, so TLS 1.3 with TLS_AES_256_GCM_SHA384); counters vs_raw
//                        and vs_plain = BM_ClientServerWire's seconds / its seconds; one handshake per
//                        iteration;
//   BM_EndToEnd/W        the same records checked by the server (bench + judge + CSV rows) with W workers.
// Bytes/s and items/s (APIs/s) are reported by Google Benchmark. On the shared 2-core machine (loaded,
// session 7): raw 792 MB/s, wire 185 MB/s (vs_raw 0.23: the payload is CRC'd three times — client, wire
// field, frame — and copied into message and frame buffers), end to end with 1 worker 413 APIs/s (relu is
// cheap to check, so the transport dominates). Session 8 (load average 5 on 2 cores), --benchmark_min_time=1:
// raw 1.60 GB/s, wire 288 MB/s (576 APIs/s, vs_raw 0.18), TLS 154 MB/s (307 APIs/s, vs_plain 0.53; 0.42 in a
// second run): AES-256-GCM on one thread per side plus one more copy each way through OpenSSL's buffers;
// end to end 509 APIs/s with 1 worker, 469 with 2.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "BenchUtil.h"
#include "probe/online_client.h"
#include "probe/online_server.h"

namespace {

constexpr int kBatch = 64;
double g_raw_seconds = 0, g_plain_seconds = 0;

// The TLS case's certificates, made by the openssl command: tls_path directories for a server and a client.
struct Pki {
  probe::bench::ScratchDir dir{"probe-online-pki"};
  std::string server, client, error;
  Pki() {
    const std::string d = dir.path;
    std::ofstream(d + "/x.cnf")
        << "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = bench\n"
        << "[ca]\nbasicConstraints = critical,CA:true\nkeyUsage = keyCertSign,cRLSign\n"
        << "[server]\nsubjectAltName = IP:127.0.0.1\nextendedKeyUsage = serverAuth\n"
        << "[client]\nextendedKeyUsage = clientAuth\n";
    const std::string ec = " -config x.cnf -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -noenc";
    const std::string sign = " -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile x.cnf -extensions ";
    const std::string script = "cd '" + d + "' && mkdir server client && openssl req -x509 -new" + ec +
                               " -keyout ca.key -out ca.crt -days 2 -subj /CN=bench-ca -extensions ca && "
                               "openssl req -new" +
                               ec +
                               " -keyout server/server.key -out s.csr -subj /CN=server && "
                               "openssl x509 -req -in s.csr" +
                               sign +
                               "server -out server/server.crt && "
                               "openssl req -new" +
                               ec +
                               " -keyout client/client.key -out c.csr -subj /CN=client && "
                               "openssl x509 -req -in c.csr" +
                               sign +
                               "client -out client/client.crt && "
                               "cp ca.crt server/ && cp ca.crt client/";
    if (std::system(("(" + script + ") >/dev/null 2>&1").c_str()) != 0) {
      error = "the openssl command failed or is missing: " + script;
      return;
    }
    server = d + "/server";
    client = d + "/client";
  }
};

const Pki& pki() {
  static const Pki p;
  return p;
}

struct Records {
  std::vector<std::vector<std::byte>> frames;
  std::size_t bytes = 0;
  Records() {
    std::vector<float> x(256 * 256), y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(static_cast<double>(i % 1000) * 0.002 - 1.0);
      y[i] = x[i] > 0 ? x[i] : 0.0f;
    }
    const probe::Shape shape{256, 256};
    probe::ApiCall call;
    call.args.emplace_back(probe::Tensor::from_values<float>(x, shape));
    const std::vector<probe::Value> out = {probe::Value(probe::Tensor::from_values<float>(y, shape))};
    for (int i = 0; i < kBatch; ++i) {
      frames.push_back(probe::online::encode_api_frame("Functional.relu." + std::to_string(i), call, out));
      bytes += frames.back().size();
    }
  }
};

const Records& records() {
  static const Records r;
  return r;
}

void BM_RawSocket(benchmark::State& state) {
  const Records& r = records();
  std::vector<std::vector<std::byte>> messages;
  for (std::size_t i = 0; i < r.frames.size(); ++i)
    messages.push_back(probe::online::encode_message({i, 0, 0}, r.frames[i]));
  std::size_t total = 0;
  for (const auto& m : messages) total += m.size();
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::listen(listener, 1);
  socklen_t len = sizeof a;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  const int sender = ::socket(AF_INET, SOCK_STREAM, 0);
  ::connect(sender, reinterpret_cast<sockaddr*>(&a), sizeof a);
  const int receiver = ::accept(listener, nullptr, nullptr);
  probe::bench::timed(state, total, g_raw_seconds, probe::bench::Role::Baseline, [&] {
    std::thread reader([&] {
      std::vector<char> buf(1 << 16);
      std::size_t got = 0;
      while (got < total) {
        const ssize_t n = ::recv(receiver, buf.data(), buf.size(), 0);
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
      }
    });
    for (const auto& m : messages) {
      std::size_t sent = 0;
      while (sent < m.size()) {
        const ssize_t n = ::send(sender, m.data() + sent, m.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
      }
    }
    reader.join();
  });
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kBatch);
  ::close(sender);
  ::close(receiver);
  ::close(listener);
}
BENCHMARK(BM_RawSocket)->Unit(benchmark::kMillisecond)->UseRealTime();

// One server run per iteration: connect, send the batch, STOP_, wait for the end of the run.
void serve_batch(int workers, bool check, const std::string& out, bool tls = false) {
  probe::online::ServerOptions o;
  if (tls) o.tls_dir = pki().server;
  o.producers = 1;
  o.rank_list = {check ? 0u : 1u};  // rank 1 only: the records of rank 0 are acknowledged and dropped
  o.stream.run_ut.out_dir = out;
  o.stream.run_ut.threads = workers;
  probe::online::Server server(o);
  std::thread run([&] { server.run(); });
  {
    probe::online::ClientOptions c;
    c.port = server.port();
    if (tls) c.tls_dir = pki().client;
    probe::online::Client client(c);
    for (const auto& f : records().frames) client.send_frame(f, 0, 0);
    client.close();
  }
  run.join();
}

void BM_ClientServerWire(benchmark::State& state) {
  probe::bench::ScratchDir dir("probe-online-bench");
  double total = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    serve_batch(1, false, dir.path);
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const double per_iter = total / static_cast<double>(state.iterations());
  g_plain_seconds = per_iter;
  if (g_raw_seconds > 0) state.counters["vs_raw"] = g_raw_seconds / per_iter;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * records().bytes));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kBatch);
}
BENCHMARK(BM_ClientServerWire)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ClientServerTls(benchmark::State& state) {
  if (!pki().error.empty()) {
    state.SkipWithError(pki().error.c_str());
    return;
  }
  probe::bench::ScratchDir dir("probe-online-bench");
  double total = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    serve_batch(1, false, dir.path, true);
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const double per_iter = total / static_cast<double>(state.iterations());
  if (g_raw_seconds > 0) state.counters["vs_raw"] = g_raw_seconds / per_iter;
  if (g_plain_seconds > 0) state.counters["vs_plain"] = g_plain_seconds / per_iter;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * records().bytes));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kBatch);
}
BENCHMARK(BM_ClientServerTls)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_EndToEnd(benchmark::State& state) {
  probe::bench::ScratchDir dir("probe-online-bench");
  for (auto _ : state) serve_batch(static_cast<int>(state.range(0)), true, dir.path);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * records().bytes));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kBatch);
}
BENCHMARK(BM_EndToEnd)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
