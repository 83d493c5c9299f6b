// msprobe's TCP framing for online pre-check (probe/online_wire.h). Expected bytes are written out by hand
// below (CRC-32 of "123456789" is the standard check value cbf43926) or come from
// tests/data/online_wire/make_stream.py, an encoder written in Python with struct and zlib.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "probe/error.h"
#include "probe/online_wire.h"

namespace {

using probe::Error;
using probe::ErrorKind;
using namespace probe::online;
using Bytes = std::vector<std::byte>;

const std::string kDir = std::string(PROBE_TEST_DATA_DIR) + "/online_wire/";

Bytes bytes_of(std::string_view s) {
  Bytes b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());
  return b;
}

Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return bytes_of(s);
}

/// 8 bytes, big-endian.
std::string be(std::uint64_t v) {
  std::string s(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) s[static_cast<std::size_t>(i)] = static_cast<char>(v & 0xff);
  return s;
}

template <class F>
void expect_format_error(F&& f, const std::string& field) {
  try {
    f();
    ADD_FAILURE() << "no error, expected a Format error on field " << field;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

TEST(OnlineWire, EncodesMessageByteForByte) {
  const Bytes payload = bytes_of("123456789");
  const auto with_crc = encode_message({1, 2, 3}, payload);
  // length 9, seq 1, rank 2, step 3, big-endian; CRC-32("123456789") = 0xcbf43926 as lowercase hex.
  const std::string expected = std::string("\0\0\0\0\0\0\0\x09", 8) + std::string("\0\0\0\0\0\0\0\x01", 8) +
                               std::string("\0\0\0\0\0\0\0\x02", 8) + std::string("\0\0\0\0\0\0\0\x03", 8) +
                               "cbf43926" + "123456789";
  EXPECT_EQ(with_crc, bytes_of(expected));
  WireOptions off;
  off.checksum = false;
  EXPECT_EQ(encode_message({1, 2, 3}, payload, off), bytes_of(expected.substr(0, 32) + "123456789"));
  // A seq needing all 8 bytes is written most significant byte first.
  const auto big = encode_message({0x0102030405060708ULL, 0, 0}, payload, off);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(big.data()) + 8, 8),
            "\x01\x02\x03\x04\x05\x06\x07\x08");
}

TEST(OnlineWire, EncoderRefusesEmptyAndOversizedPayloads) {
  WireOptions small;
  small.max_payload_bytes = 4;
  EXPECT_THROW(encode_message({}, Bytes{}), Error);
  EXPECT_THROW(encode_message({}, bytes_of("12345"), small), Error);
  EXPECT_NO_THROW(encode_message({}, bytes_of("1234"), small));
}

TEST(OnlineWire, DecodesPythonStreamInEveryPieceSize) {
  const Bytes relu = read_bytes(std::string(PROBE_TEST_DATA_DIR) + "/precheck_frame/relu.frame");
  for (const bool crc : {true, false}) {
    const Bytes stream = read_bytes(kDir + (crc ? "client_crc.bin" : "client_nocrc.bin"));
    // Sizes from the Python script: 3 headers (+ 3 CRC fields) + relu.frame + "abc" + "STOP_".
    ASSERT_EQ(stream.size(), 3 * (32 + (crc ? 8u : 0u)) + relu.size() + 3 + 5);
    for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{40}, std::size_t{1000}}) {
      WireOptions options;
      options.checksum = crc;
      MessageDecoder decoder(options, "test");
      std::vector<Message> got;
      for (std::size_t at = 0; at < stream.size(); at += piece) {
        decoder.feed(std::span(stream).subspan(at, std::min(piece, stream.size() - at)));
        while (auto m = decoder.next()) got.push_back(std::move(*m));
      }
      ASSERT_EQ(got.size(), 3u) << "piece " << piece;
      EXPECT_EQ(decoder.buffered(), 0u);
      EXPECT_EQ(got[0].id, (MessageId{0, 3, 7}));
      EXPECT_EQ(got[0].payload, relu);
      EXPECT_EQ(got[1].id, (MessageId{1, 3, 7}));
      EXPECT_EQ(got[1].payload, bytes_of("abc"));
      EXPECT_EQ(got[2].id, (MessageId{2, 3, 8}));
      EXPECT_TRUE(got[2].is_stop());
      EXPECT_FALSE(got[1].is_stop());
      for (const auto& m : got) EXPECT_TRUE(m.crc_ok);
      // probe's encoder writes the Python bytes exactly.
      Bytes again;
      for (const auto& m : got) {
        const auto b = encode_message(m.id, m.payload, options);
        again.insert(again.end(), b.begin(), b.end());
      }
      EXPECT_EQ(again, stream);
    }
  }
}

TEST(OnlineWire, TruncatedMessageWaitsForTheRest) {
  const Bytes stream = read_bytes(kDir + "client_crc.bin");
  const Bytes relu = read_bytes(std::string(PROBE_TEST_DATA_DIR) + "/precheck_frame/relu.frame");
  const std::size_t first = 40 + relu.size();
  for (std::size_t cut = 0; cut < first; ++cut) {
    MessageDecoder decoder;
    decoder.feed(std::span(stream).first(cut));
    EXPECT_FALSE(decoder.next().has_value()) << "cut " << cut;
    EXPECT_EQ(decoder.buffered(), cut);
  }
  MessageDecoder decoder;
  decoder.feed(std::span(stream).first(first + 10));
  ASSERT_TRUE(decoder.next().has_value());
  EXPECT_FALSE(decoder.next().has_value());
  EXPECT_EQ(decoder.buffered(), 10u);
}

TEST(OnlineWire, HostileLengthIsRefusedBeforeItsBytesArrive) {
  WireOptions options;
  options.max_payload_bytes = 1024;
  for (const std::uint64_t length : {std::uint64_t{1025}, std::uint64_t{1} << 63, ~std::uint64_t{0}}) {
    MessageDecoder decoder(options);
    decoder.feed(bytes_of(be(length) + be(0) + be(0) + be(0)));  // the header alone
    expect_format_error([&] { (void)decoder.next(); }, "length");
  }
  MessageDecoder at_limit(options);
  at_limit.feed(bytes_of(be(1024) + be(0) + be(0) + be(0)));
  EXPECT_FALSE(at_limit.next().has_value());  // legal: waits for the CRC field and the payload
  // msprobe would wait forever on a zero length; probe refuses it.
  MessageDecoder zero;
  zero.feed(bytes_of(be(0) + be(0) + be(0) + be(0) + "00000000"));
  expect_format_error([&] { (void)zero.next(); }, "length");
}

TEST(OnlineWire, GarbageIsAStreamError) {
  MessageDecoder http;
  // "GET / HT" read as a big-endian length is 0x474554202f204854, far above the 2 GiB default.
  http.feed(bytes_of("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  expect_format_error([&] { (void)http.next(); }, "length");
  MessageDecoder bad_crc_text;
  bad_crc_text.feed(bytes_of(be(3) + be(0) + be(0) + be(0) + "cbf4392g" + "abc"));
  expect_format_error([&] { (void)bad_crc_text.next(); }, "crc32");
}

TEST(OnlineWire, WrongCrcIsReportedAndTheStreamStaysInStep) {
  Bytes stream = read_bytes(kDir + "client_crc.bin");
  const Bytes relu = read_bytes(std::string(PROBE_TEST_DATA_DIR) + "/precheck_frame/relu.frame");
  stream[40 + relu.size() / 2] ^= std::byte{0x01};  // one payload bit of the first message
  MessageDecoder decoder;
  decoder.feed(stream);
  auto first = decoder.next();
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(first->crc_ok);
  EXPECT_EQ(first->id, (MessageId{0, 3, 7}));
  auto second = decoder.next();
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->crc_ok);
  EXPECT_EQ(second->payload, bytes_of("abc"));
  // The CRC field may be upper case (same value); a wrong digit is a mismatch.
  MessageDecoder upper;
  upper.feed(bytes_of(be(9) + be(0) + be(0) + be(0) + "CBF43926" + "123456789"));
  upper.feed(bytes_of(be(9) + be(1) + be(0) + be(0) + "cbf43927" + "123456789"));
  EXPECT_TRUE(upper.next()->crc_ok);
  EXPECT_FALSE(upper.next()->crc_ok);
}

TEST(OnlineWire, AcksMatchPythonBytes) {
  const Bytes stream = read_bytes(kDir + "acks.bin");
  const std::vector<Ack> expected = {{AckCode::Ok, {0, 3, 7}},
                                     {AckCode::Error, {1, 3, 7}},
                                     {AckCode::Busy, {1, 3, 7}},
                                     {AckCode::Over, {2, 3, 8}},
                                     {AckCode::Kill, {kKillSeq, 0, 0}}};
  ASSERT_EQ(stream.size(), expected.size() * kAckBytes);
  AckDecoder decoder("test");
  std::vector<Ack> got;
  for (std::size_t at = 0; at < stream.size(); at += 3) {
    decoder.feed(std::span(stream).subspan(at, std::min<std::size_t>(3, stream.size() - at)));
    while (auto a = decoder.next()) got.push_back(*a);
  }
  EXPECT_EQ(got, expected);
  EXPECT_EQ(decoder.buffered(), 0u);
  Bytes again;
  for (const auto& a : expected) {
    const auto b = encode_ack(a);
    again.insert(again.end(), b.begin(), b.end());
  }
  EXPECT_EQ(again, stream);
  // KILL_'s seq 100000000 = 0x05f5e100.
  const auto kill = encode_ack({AckCode::Kill, {kKillSeq, 0, 0}});
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(kill.data()), 13),
            std::string("KILL_\0\0\0\0\x05\xf5\xe1\x00", 13));
}

TEST(OnlineWire, UnknownAckCodeIsRefused) {
  expect_format_error([] { (void)decode_ack(bytes_of("NOPE!" + be(0) + be(0) + be(0))); }, "code");
  expect_format_error([] { (void)decode_ack(bytes_of("OK___" + be(0))); }, "ack");
  AckDecoder decoder;
  decoder.feed(bytes_of("ok___" + be(0) + be(0) + be(0)));  // codes are case-sensitive
  expect_format_error([&] { (void)decoder.next(); }, "code");
}

}  // namespace
