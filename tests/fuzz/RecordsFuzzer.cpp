// libFuzzer target: what the online server does with a stream of records once the wire has delivered them:
// decode each frame, take the name it is checked under, and decide it (checked, resend, conflict, another
// run) through run_ut's RecordBook, whose digests file survives a resume of the server.
// Run: probe_fuzz_records -max_total_time=60 corpus/   (seeds: tests/data/precheck_frame/*.frame, framed)
//
// The input is a sequence of segments, each led by a tag byte:
//   0, u16 length, bytes  a frame (its length and CRC fields repaired, so the checks behind them are reached)
//   1, u8 n, n bytes, u8 m, m bytes, 32 bytes  a decoded record: run id, entry key, digest
//   2, u8 n, n bytes      a resume: the book is rebuilt from what was written and the digests file, plus
//                         these bytes as the torn tail a killed server may leave
//   3, u16 length, bytes  a digests file of any content, resumed into a scratch book (must not crash)
//   4, u8 n, u8 d         a record of the run so far named Functional.op<n>.0 with every digest byte d
//                         (few bytes per record, so that long sequences of names are cheap to reach)
// Whatever the records, a name is checked at most once per run, a resend of the same digest is a repeat,
// other content under a checked name a conflict, another run's record refused; and the same holds after
// each resume, whatever bytes the names hold.
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "probe/dump.h"
#include "probe/error.h"
#include "probe/precheck_frame.h"
#include "run_ut/RecordBook.h"

namespace {

using probe::rut::Admission;
using probe::rut::RecordBook;
using probe::rut::RecordDigest;

struct Input {
  const std::uint8_t* p;
  std::size_t n;
  bool take(std::size_t k, const std::uint8_t*& out) {
    if (k > n) return false;
    out = p;
    p += k;
    n -= k;
    return true;
  }
  std::optional<std::size_t> u8() {
    const std::uint8_t* b;
    if (!take(1, b)) return std::nullopt;
    return b[0];
  }
  std::optional<std::size_t> u16() {
    const std::uint8_t* b;
    if (!take(2, b)) return std::nullopt;
    return b[0] | (std::size_t{b[1]} << 8);
  }
  std::optional<std::string> bytes(std::optional<std::size_t> k) {
    const std::uint8_t* b;
    if (!k || !take(*k, b)) return std::nullopt;
    return std::string(reinterpret_cast<const char*>(b), *k);
  }
};

struct Record {
  std::string run_id, key;
  RecordDigest digest{};
};

std::optional<Record> decode(std::string bytes) {
  if (bytes.size() >= probe::online::kFrameOverhead) {
    const std::uint64_t size = bytes.size();
    for (int i = 0; i < 8; ++i) bytes[8 + i] = static_cast<char>((size >> (8 * i)) & 0xff);
    const auto crc = crc32_z(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size() - 4);
    for (int i = 0; i < 4; ++i) bytes[bytes.size() - 4 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  }
  probe::online::FrameLimits limits;
  limits.max_frame_bytes = 1 << 20;
  limits.max_tensors = 64;
  limits.max_header_bytes = 1 << 16;
  limits.max_json_depth = 32;
  try {
    const auto frame = probe::online::decode_frame(
        {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, limits, "fuzz frame");
    return Record{frame.run_id(), frame.entry().key, frame.digest};
  } catch (const probe::Error&) {
    return std::nullopt;  // refused as the server refuses it: the connection is closed
  }
}

// What the book must answer, kept the simple way: the run, and per name the digest taken (none for a name
// written by an older server, which compares as a resend).
struct Model {
  std::optional<std::string> run;
  std::map<std::string, std::optional<RecordDigest>> taken;
  std::vector<std::string> written;
  std::string digests;  // the file as the stream appends to it
};

void check(bool ok) {
  if (!ok) std::abort();
}

void admit(RecordBook& book, Model& model, const Record& r) {
  const probe::RunUtKey key = probe::classify_run_ut_key(r.key);
  std::optional<std::string> api;
  if (key.kind == probe::RunUtKey::Kind::Forward) api = key.full_name;
  bool fixed = false;
  const Admission a = book.admit(r.run_id, api, r.digest, &fixed);
  check(fixed == !model.run.has_value());
  if (!model.run) model.run = r.run_id;
  check(book.run_id() == model.run);
  if (r.run_id != *model.run) return check(a == Admission::OtherRun);
  if (!api) return check(a == Admission::Ignored);
  auto it = model.taken.find(*api);
  if (it == model.taken.end()) {
    check(a == Admission::Check);
    model.taken.emplace(*api, r.digest);
    model.written.push_back(*api);
    model.digests += RecordBook::digest_line(*api, r.digest);
  } else {
    check(a == (!it->second || *it->second == r.digest ? Admission::Repeat : Admission::Conflict));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in{data, size};
  RecordBook book;
  Model model;
  while (auto tag = in.u8()) {
    if (*tag % 5 == 0) {
      auto bytes = in.bytes(in.u16());
      if (!bytes) break;
      if (auto r = decode(std::move(*bytes))) admit(book, model, *r);
    } else if (*tag % 5 == 1) {
      Record r;
      auto run_id = in.bytes(in.u8());
      auto key = in.bytes(in.u8());
      auto digest = in.bytes(32);
      if (!run_id || !key || !digest) break;
      r.run_id = std::move(*run_id);
      r.key = std::move(*key);
      std::memcpy(r.digest.data(), digest->data(), r.digest.size());
      admit(book, model, r);
    } else if (*tag % 5 == 2) {
      auto tail = in.bytes(in.u8());
      if (!tail) break;
      // A torn tail has no line break (the stream writes whole lines); cut it at the first one.
      tail->resize(std::min(tail->size(), tail->find('\n')));
      book = RecordBook();
      const std::string file = model.digests + *tail;
      const std::size_t intact = book.resume(model.run, model.written, file);
      check(intact <= file.size());
      model.digests = file.substr(0, intact);  // the stream cuts the file there and appends after it
    } else if (*tag % 5 == 4) {
      const auto n = in.u8(), d = in.u8();
      if (!n || !d) break;
      Record r;
      r.run_id = model.run.value_or("run-a");
      r.key = "Functional.op" + std::to_string(*n) + ".0.forward";
      r.digest.fill(static_cast<std::uint8_t>(*d));
      admit(book, model, r);
    } else {
      auto text = in.bytes(in.u16());
      if (!text) break;
      RecordBook scratch;
      scratch.resume(std::nullopt, {"Functional.relu.0", *text}, *text);
      RecordDigest d{};
      (void)scratch.admit("", std::string("Functional.relu.0"), d);
    }
  }
  return 0;
}
