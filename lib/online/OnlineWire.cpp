#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "probe/error.h"
#include "probe/online_wire.h"

namespace probe::online {
namespace {

std::uint64_t read_be(const std::byte* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
  return v;
}

void write_be(std::byte* out, std::uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<std::byte>(v & 0xff);
}

void write_id(std::byte* out, const MessageId& id) {
  write_be(out, id.seq);
  write_be(out + 8, id.rank);
  write_be(out + 16, id.step);
}

MessageId read_id(const std::byte* p) { return {read_be(p), read_be(p + 8), read_be(p + 16)}; }

std::string describe(const MessageId& id) {
  return "seq " + std::to_string(id.seq) + " rank " + std::to_string(id.rank) + " step " +
         std::to_string(id.step);
}

constexpr std::array<std::string_view, 5> kCodes = {"OK___", "ERROR", "BUSY_", "OVER_", "KILL_"};

/// Drops the consumed front of a buffer once it outweighs the rest, so appends stay amortised O(1).
void compact(std::vector<std::byte>& buffer, std::size_t& consumed) {
  if (consumed == 0 || consumed < buffer.size() - consumed) return;
  buffer.erase(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(consumed));
  consumed = 0;
}

}  // namespace

bool Message::is_stop() const {
  return payload.size() == kStopPayload.size() &&
         std::memcmp(payload.data(), kStopPayload.data(), kStopPayload.size()) == 0;
}

std::array<char, kCrcFieldBytes> crc_field(std::span<const std::byte> payload) {
  auto crc = static_cast<std::uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(payload.empty() ? nullptr : payload.data()), payload.size()));
  static constexpr char kHex[] = "0123456789abcdef";
  std::array<char, kCrcFieldBytes> out{};
  for (int i = 7; i >= 0; --i, crc >>= 4) out[static_cast<std::size_t>(i)] = kHex[crc & 0xf];
  return out;
}

std::vector<std::byte> encode_message(const MessageId& id, std::span<const std::byte> payload,
                                      const WireOptions& options) {
  if (payload.empty())
    throw Error(ErrorKind::InvalidArgument, "an online message needs a non-empty payload", describe(id),
                "payload");
  if (payload.size() > options.max_payload_bytes)
    throw Error(ErrorKind::InvalidArgument,
                "payload of " + std::to_string(payload.size()) + " bytes exceeds the limit of " +
                    std::to_string(options.max_payload_bytes),
                describe(id), "payload");
  const std::size_t head = kMessageHeaderBytes + (options.checksum ? kCrcFieldBytes : 0);
  std::vector<std::byte> out(head + payload.size());
  write_be(out.data(), payload.size());
  write_id(out.data() + 8, id);
  if (options.checksum) {
    const auto crc = crc_field(payload);
    std::memcpy(out.data() + kMessageHeaderBytes, crc.data(), crc.size());
  }
  std::memcpy(out.data() + head, payload.data(), payload.size());
  return out;
}

std::string_view ack_code_text(AckCode code) { return kCodes[static_cast<std::size_t>(code)]; }

std::array<std::byte, kAckBytes> encode_ack(const Ack& ack) {
  std::array<std::byte, kAckBytes> out{};
  const auto text = ack_code_text(ack.code);
  std::memcpy(out.data(), text.data(), text.size());
  write_id(out.data() + 5, ack.id);
  return out;
}

Ack decode_ack(std::span<const std::byte> bytes) {
  if (bytes.size() != kAckBytes)
    throw Error(
        ErrorKind::Format,
        "an acknowledgement is " + std::to_string(kAckBytes) + " bytes, got " + std::to_string(bytes.size()),
        "acknowledgement", "ack");
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), 5);
  const auto it = std::find(kCodes.begin(), kCodes.end(), text);
  if (it == kCodes.end()) {
    std::string shown;
    for (char c : text) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
    throw Error(ErrorKind::Format, "unknown acknowledgement code \"" + shown + "\"", "acknowledgement",
                "code");
  }
  return {static_cast<AckCode>(it - kCodes.begin()), read_id(bytes.data() + 5)};
}

MessageDecoder::MessageDecoder(WireOptions options, std::string source)
    : options_(options), source_(std::move(source)) {}

std::size_t MessageDecoder::header_bytes() const {
  return kMessageHeaderBytes + (options_.checksum ? kCrcFieldBytes : 0);
}

std::optional<std::uint64_t> MessageDecoder::message_bytes() const {
  if (buffered() < kMessageHeaderBytes) return std::nullopt;
  const std::uint64_t length = read_be(buffer_.data() + consumed_);
  const std::uint64_t head = header_bytes();
  return length > UINT64_MAX - head ? UINT64_MAX : head + length;
}

void MessageDecoder::feed(std::span<const std::byte> bytes) {
  compact(buffer_, consumed_);
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
  // One allocation of the message's size instead of doubling: a large payload would otherwise peak at
  // one and a half to three times its size while the vector grows.
  if (const auto want = message_bytes(); want && *want - header_bytes() <= options_.max_payload_bytes) {
    const std::uint64_t need = consumed_ + *want;
    if (need > buffer_.capacity()) buffer_.reserve(static_cast<std::size_t>(need));
  }
}

std::optional<Message> MessageDecoder::next() {
  const std::size_t avail = buffered();
  if (avail < kMessageHeaderBytes) return std::nullopt;
  const std::byte* p = buffer_.data() + consumed_;
  const std::uint64_t length = read_be(p);
  const MessageId id = read_id(p + 8);
  // Checked as soon as the header is in, so a hostile length is refused before its bytes are awaited.
  // msprobe waits forever on a zero length; here it is a stream error.
  if (length == 0 || length > options_.max_payload_bytes)
    throw Error(ErrorKind::Format,
                "announced payload length " + std::to_string(length) + " is outside [1, " +
                    std::to_string(options_.max_payload_bytes) + "] (" + describe(id) + ")",
                source_, "length");
  const std::size_t head = kMessageHeaderBytes + (options_.checksum ? kCrcFieldBytes : 0);
  Message message;
  message.id = id;
  std::uint32_t expected_crc = 0;
  if (options_.checksum) {
    if (avail < head) return std::nullopt;
    for (std::size_t i = 0; i < kCrcFieldBytes; ++i) {
      const auto c = std::to_integer<unsigned char>(p[kMessageHeaderBytes + i]);
      unsigned digit = 0;
      if (c >= '0' && c <= '9')
        digit = c - '0';
      else if (c >= 'a' && c <= 'f')
        digit = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')  // not what msprobe writes, but the value is unambiguous
        digit = c - 'A' + 10;
      else
        throw Error(ErrorKind::Format, "CRC field is not 8 hex digits (" + describe(id) + ")", source_,
                    "crc32");
      expected_crc = (expected_crc << 4) | digit;
    }
  }
  if (avail - head < length) return std::nullopt;
  const std::byte* body = p + head;
  if (consumed_ == 0 && buffer_.size() == head + length) {
    // The buffer holds exactly this message: it becomes the payload, without a second copy of its size.
    message.payload = std::move(buffer_);
    message.payload.erase(message.payload.begin(),
                          message.payload.begin() + static_cast<std::ptrdiff_t>(head));
    buffer_ = {};
    consumed_ = 0;
  } else {
    message.payload.assign(body, body + length);
    consumed_ += head + static_cast<std::size_t>(length);
  }
  if (buffered() == 0) {
    buffer_.clear();
    consumed_ = 0;
    if (buffer_.capacity() > (std::size_t{1} << 20)) buffer_ = {};  // a big message's pages go back
  }
  if (options_.checksum) {
    const auto crc = static_cast<std::uint32_t>(
        crc32_z(0, reinterpret_cast<const Bytef*>(message.payload.data()), message.payload.size()));
    message.crc_ok = crc == expected_crc;
  }
  return message;
}

void AckDecoder::feed(std::span<const std::byte> bytes) {
  compact(buffer_, consumed_);
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

std::optional<Ack> AckDecoder::next() {
  if (buffered() < kAckBytes) return std::nullopt;
  try {
    Ack ack = decode_ack(std::span(buffer_).subspan(consumed_, kAckBytes));
    consumed_ += kAckBytes;
    return ack;
  } catch (Error& e) {
    throw Error(ErrorKind::Format, e.message(), source_, "code");
  }
}

}  // namespace probe::online
