// The TCP framing of online pre-check (dump-and-compare §5.3), i.e. msprobe's message and
// acknowledgement layout, with probe's frame (probe/precheck_frame.h) as the payload. Client to server:
//
//   size  field
//   8     payload length N, u64 big-endian (N >= 1)
//   8     sequence number, u64 BE (per connection, from 0)
//   8     rank, u64 BE
//   8     step, u64 BE
//   8     CRC-32 (zlib) of the payload as 8 lowercase ASCII hex digits; only when checksums are on
//   N     payload: a precheck frame, or the 5 ASCII bytes "STOP_"
//
// Server to client, 29 bytes: a 5-byte ASCII code (OK___, ERROR, BUSY_, OVER_, KILL_) followed by the seq,
// rank and step (u64 BE each) of the message it answers (KILL_: seq 100000000, rank 0, step 0).
// Both sides must agree on whether checksums are on; nothing in the stream says so.
// Everything here is pure: the decoders own their buffers and share nothing (one decoder per connection;
// a decoder is not thread-safe, distinct decoders are).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probe/export.h"

namespace probe::online {

inline constexpr std::size_t kMessageHeaderBytes = 32;  ///< length, seq, rank, step
inline constexpr std::size_t kCrcFieldBytes = 8;        ///< CRC-32 as hex text
inline constexpr std::size_t kAckBytes = 29;            ///< code + seq + rank + step
inline constexpr std::string_view kStopPayload = "STOP_";
inline constexpr std::uint64_t kKillSeq = 100000000;  ///< the seq msprobe puts in its KILL_ broadcast

/// Where a message comes from and which one it is; acks echo it.
struct PROBE_API MessageId {
  std::uint64_t seq = 0;
  std::uint64_t rank = 0;
  std::uint64_t step = 0;
  bool operator==(const MessageId&) const = default;
};

/// Settings both ends of a connection must share.
struct PROBE_API WireOptions {
  bool checksum = true;                                      ///< CRC field present (msprobe's default: on)
  std::uint64_t max_payload_bytes = std::uint64_t{1} << 31;  ///< larger announced lengths are refused
};

/// One received message.
struct PROBE_API Message {
  MessageId id;
  std::vector<std::byte> payload;
  bool crc_ok = true;  ///< false: the payload does not match its CRC field; the server answers ERROR
  /// True for the end-of-stream payload "STOP_".
  bool is_stop() const;
};

/// The bytes of one message: header, CRC field when options.checksum, payload. Throws
/// probe::Error(InvalidArgument) for an empty payload or one above options.max_payload_bytes.
PROBE_API std::vector<std::byte> encode_message(const MessageId& id, std::span<const std::byte> payload,
                                                const WireOptions& options = {});

/// The CRC field for a payload: CRC-32 (zlib polynomial) as 8 lowercase hex digits.
PROBE_API std::array<char, kCrcFieldBytes> crc_field(std::span<const std::byte> payload);

enum class AckCode { Ok, Error, Busy, Over, Kill };

/// The 5 ASCII bytes of a code on the wire ("OK___", ...).
PROBE_API std::string_view ack_code_text(AckCode code);

struct PROBE_API Ack {
  AckCode code = AckCode::Ok;
  MessageId id;
  bool operator==(const Ack&) const = default;
};

PROBE_API std::array<std::byte, kAckBytes> encode_ack(const Ack& ack);
/// Decodes exactly kAckBytes bytes; throws probe::Error(Format) for another size or an unknown code.
PROBE_API Ack decode_ack(std::span<const std::byte> bytes);

/// Reassembles messages from a byte stream read in arbitrary pieces. feed() the bytes as they arrive, then
/// call next() until it returns nullopt. A stream that cannot be a message (announced length 0 or above the
/// limit, a CRC field that is not 8 hex digits) throws probe::Error(Format) naming `source` and the field;
/// the stream is then out of step and the connection must be closed. A wrong CRC is not a stream error:
/// the message comes back with crc_ok false, so the sender can be asked to resend it. The decoder never
/// holds more than one message plus what was fed since the last next(); once a message's header is in, its
/// buffer is allocated once at the message's size, and a buffer left large by a big message is released.
class PROBE_API MessageDecoder {
 public:
  explicit MessageDecoder(WireOptions options = {}, std::string source = "connection");
  void feed(std::span<const std::byte> bytes);
  std::optional<Message> next();
  /// Bytes received but not yet returned in a message (0 at a clean message boundary).
  std::size_t buffered() const { return buffer_.size() - consumed_; }
  /// Bytes of the message being received (header, CRC field and payload) once its 32-byte header is in
  /// (the announced length is not checked here: next() does); nullopt before.
  std::optional<std::uint64_t> message_bytes() const;
  /// Bytes of a message's header and CRC field with these options.
  std::size_t header_bytes() const;

 private:
  WireOptions options_;
  std::string source_;
  std::vector<std::byte> buffer_;
  std::size_t consumed_ = 0;
};

/// Reassembles 29-byte acknowledgements from a byte stream; next() throws probe::Error(Format) on an
/// unknown code (the stream is then unusable).
class PROBE_API AckDecoder {
 public:
  explicit AckDecoder(std::string source = "connection") : source_(std::move(source)) {}
  void feed(std::span<const std::byte> bytes);
  std::optional<Ack> next();
  std::size_t buffered() const { return buffer_.size() - consumed_; }

 private:
  std::string source_;
  std::vector<std::byte> buffer_;
  std::size_t consumed_ = 0;
};

}  // namespace probe::online
