#include <openssl/evp.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>

#include "probe/error.h"
#include "probe/precheck_frame.h"

namespace probe::online {
namespace {

// The blobs are the tensors' own bytes; a big-endian host would need a byte swap per element.
static_assert(std::endian::native == std::endian::little, "precheck frames assume a little-endian host");

constexpr char kMagic[4] = {'P', 'R', 'B', 'F'};
constexpr std::size_t kPrefixBytes = 24;  // up to and including the blob count

std::uint64_t read_le(const std::byte* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
  return v;
}

void write_le(std::vector<std::byte>& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
}

std::uint32_t crc32_of(std::span<const std::byte> bytes) {
  return static_cast<std::uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(bytes.empty() ? nullptr : bytes.data()), bytes.size()));
}

[[noreturn]] void fail(const std::string& source, const std::string& message, const std::string& field = {},
                       const std::string& api = {}) {
  throw Error(ErrorKind::Format, message, source, field, api);
}

/// Blob index named by a descriptor's data_name: plain decimal, no sign, no leading zero.
std::optional<std::size_t> blob_index(const std::string& name) {
  if (name.empty() || name.size() > 9 || (name.size() > 1 && name[0] == '0')) return std::nullopt;
  std::size_t v = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
  if (ec != std::errc{} || end != name.data() + name.size()) return std::nullopt;
  return v;
}

/// Parses the header and checks that its descriptors and the blob lengths agree one to one. Returns the
/// parsed header and, per blob, the descriptor that owns it.
Dump parse_header(std::string_view json, std::span<const std::uint64_t> blob_bytes, const FrameLimits& limits,
                  const std::string& source, std::vector<const TensorInfo*>& owner) {
  DumpParseOptions options;
  options.max_depth = limits.max_json_depth;
  Dump header = Dump::parse(json, source, options);
  if (header.entries().size() != 1)
    fail(source,
         "a frame header must hold exactly one API record, found " + std::to_string(header.entries().size()),
         "data");
  const DumpEntry& entry = header.entries().front();
  if (!header.run_id().empty() && !valid_run_id(header.run_id()))
    fail(source, "run_id is not 1 to " + std::to_string(kMaxRunIdBytes) + " characters of [A-Za-z0-9._:-]",
         "run_id");
  owner.assign(blob_bytes.size(), nullptr);
  for (const TensorInfo* info : entry.tensors()) {
    if (!info->has_file()) continue;  // a statistics-only descriptor carries no blob
    const auto index = blob_index(info->data_name);
    if (!index || *index >= blob_bytes.size())
      fail(source,
           "data_name \"" + info->data_name + "\" is not a blob index below " +
               std::to_string(blob_bytes.size()),
           info->field, entry.key);
    if (owner[*index])
      fail(source, "blob " + info->data_name + " is named twice (also by " + owner[*index]->field + ")",
           info->field, entry.key);
    if (!info->dtype)
      throw Error(ErrorKind::Unsupported, "dtype " + info->dtype_name + " cannot be carried in a frame",
                  source, info->field, entry.key);
    const auto expected = info->nbytes();
    if (!expected || static_cast<std::uint64_t>(*expected) != blob_bytes[*index])
      fail(source,
           "blob " + info->data_name + " holds " + std::to_string(blob_bytes[*index]) + " bytes but " +
               info->dtype_name + " " + shape_to_string(info->shape) + " needs " +
               (expected ? std::to_string(*expected) : std::string("an unrepresentable count")),
           info->field, entry.key);
    owner[*index] = info;
  }
  for (std::size_t i = 0; i < owner.size(); ++i)
    if (!owner[i])
      fail(source, "blob " + std::to_string(i) + " is named by no descriptor", "data", entry.key);
  return header;
}

/// Checks magic, version and flags of a prefix of at least 16 bytes; returns the announced frame length.
std::uint64_t check_prefix(std::span<const std::byte> bytes, const FrameLimits& limits,
                           const std::string& source) {
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    fail(source, "not a precheck frame (magic is not \"PRBF\")", "magic");
  const auto version = read_le(bytes.data() + 4, 2);
  if (version != kFrameVersion)
    fail(source,
         "unsupported frame version " + std::to_string(version) + " (this probe reads " +
             std::to_string(kFrameVersion) + ")",
         "version");
  if (read_le(bytes.data() + 6, 2) != 0) fail(source, "unknown frame flags", "flags");
  const std::uint64_t length = read_le(bytes.data() + 8, 8);
  if (length < kFrameOverhead)
    fail(source,
         "frame length " + std::to_string(length) + " is below the minimum " + std::to_string(kFrameOverhead),
         "frame_length");
  if (length > limits.max_frame_bytes)
    fail(source,
         "frame length " + std::to_string(length) + " exceeds the limit " +
             std::to_string(limits.max_frame_bytes),
         "frame_length");
  return length;
}

}  // namespace

bool valid_run_id(std::string_view run_id) {
  if (run_id.empty() || run_id.size() > kMaxRunIdBytes) return false;
  return std::all_of(run_id.begin(), run_id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == ':' || c == '-';
  });
}

const Tensor& Frame::tensor(const TensorInfo& info) const {
  const auto index = blob_index(info.data_name);
  if (!index || *index >= tensors.size())
    throw Error(ErrorKind::InvalidArgument, "descriptor names no blob of this frame", header.path(),
                info.field, entry().key);
  return tensors[*index];
}

std::optional<std::uint64_t> frame_length(std::span<const std::byte> prefix, const FrameLimits& limits,
                                          const std::string& source) {
  if (prefix.size() < 16) return std::nullopt;
  return check_prefix(prefix, limits, source);
}

std::vector<std::byte> encode_frame(std::string_view header_json, std::span<const Tensor> tensors,
                                    const FrameLimits& limits) {
  const std::string source = "precheck frame being encoded";
  if (tensors.size() > limits.max_tensors)
    throw Error(ErrorKind::InvalidArgument,
                std::to_string(tensors.size()) + " tensors exceed the frame limit " +
                    std::to_string(limits.max_tensors),
                source);
  if (header_json.size() > limits.max_header_bytes)
    throw Error(ErrorKind::InvalidArgument,
                "header of " + std::to_string(header_json.size()) + " bytes exceeds the limit " +
                    std::to_string(limits.max_header_bytes),
                source);
  std::vector<std::uint64_t> blob_bytes;
  std::uint64_t total = kFrameOverhead + header_json.size() + 8 * tensors.size();
  for (const Tensor& t : tensors) {
    blob_bytes.push_back(t.nbytes());
    total += t.nbytes();
  }
  if (total > limits.max_frame_bytes)
    throw Error(ErrorKind::InvalidArgument,
                "frame of " + std::to_string(total) + " bytes exceeds the limit " +
                    std::to_string(limits.max_frame_bytes),
                source);
  std::vector<const TensorInfo*> owner;
  const Dump header = parse_header(header_json, blob_bytes, limits, source, owner);
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].dtype() != *owner[i]->dtype || tensors[i].shape() != owner[i]->shape)
      throw Error(ErrorKind::InvalidArgument,
                  "tensor " + std::to_string(i) + " is " + std::string(name(tensors[i].dtype())) + " " +
                      shape_to_string(tensors[i].shape()) + " but its descriptor says " +
                      owner[i]->dtype_name + " " + shape_to_string(owner[i]->shape),
                  source, owner[i]->field, header.entries().front().key);

  std::vector<std::byte> out;
  out.reserve(total);
  for (char c : kMagic) out.push_back(static_cast<std::byte>(c));
  write_le(out, kFrameVersion, 2);
  write_le(out, 0, 2);
  write_le(out, total, 8);
  write_le(out, header_json.size(), 4);
  write_le(out, tensors.size(), 4);
  for (std::uint64_t b : blob_bytes) write_le(out, b, 8);
  for (char c : header_json) out.push_back(static_cast<std::byte>(c));
  for (const Tensor& t : tensors) out.insert(out.end(), t.bytes(), t.bytes() + t.nbytes());
  write_le(out, crc32_of(out), 4);
  return out;
}

Frame decode_frame(std::span<const std::byte> bytes, const FrameLimits& limits, const std::string& source) {
  if (bytes.size() < kPrefixBytes)
    fail(source, "truncated frame: " + std::to_string(bytes.size()) +
                     " bytes, the fixed prefix alone needs " + std::to_string(kPrefixBytes));
  const std::uint64_t length = check_prefix(bytes, limits, source);
  if (length != bytes.size())
    fail(source,
         (length > bytes.size() ? "truncated frame: " : "trailing bytes after frame: ") +
             std::to_string(bytes.size()) + " bytes received, frame length says " + std::to_string(length),
         "frame_length");
  // The CRC comes first: a damaged frame is reported as damaged, whichever field the damage hit.
  const std::uint32_t stored = static_cast<std::uint32_t>(read_le(bytes.data() + length - 4, 4));
  const std::uint32_t computed = crc32_of(bytes.first(length - 4));
  if (stored != computed) {
    char text[64];
    std::snprintf(text, sizeof text, "CRC-32 mismatch: frame says %08x, bytes give %08x", stored, computed);
    fail(source, text, "crc32");
  }

  const std::uint64_t header_len = read_le(bytes.data() + 16, 4);
  const std::uint64_t count = read_le(bytes.data() + 20, 4);
  if (header_len > limits.max_header_bytes)
    fail(source,
         "header length " + std::to_string(header_len) + " exceeds the limit " +
             std::to_string(limits.max_header_bytes),
         "header_length");
  if (count > limits.max_tensors)
    fail(source,
         "blob count " + std::to_string(count) + " exceeds the limit " + std::to_string(limits.max_tensors),
         "blob_count");
  // Everything below is bounded by `length`, itself the size of the span: sums cannot overflow once each
  // term is checked against what is left.
  std::uint64_t left = length - kFrameOverhead;
  if (count * 8 > left)
    fail(source, "blob table of " + std::to_string(count) + " entries overruns the frame", "blob_count");
  left -= count * 8;
  if (header_len > left)
    fail(source, "header length " + std::to_string(header_len) + " overruns the frame", "header_length");
  left -= header_len;
  std::vector<std::uint64_t> blob_bytes(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    blob_bytes[i] = read_le(bytes.data() + kPrefixBytes + 8 * i, 8);
    if (blob_bytes[i] > left)
      fail(source,
           "blob " + std::to_string(i) + " length " + std::to_string(blob_bytes[i]) + " overruns the frame",
           "blob_length");
    left -= blob_bytes[i];
  }
  if (left != 0)
    fail(source, std::to_string(left) + " unaccounted bytes between the blobs and the CRC", "frame_length");
  const std::size_t header_at = kPrefixBytes + 8 * count;
  const std::string_view json(reinterpret_cast<const char*>(bytes.data() + header_at), header_len);
  std::vector<const TensorInfo*> owner;
  Frame frame{parse_header(json, blob_bytes, limits, source, owner), {}};
  frame.tensors.reserve(count);
  std::size_t at = header_at + header_len;
  for (std::uint64_t i = 0; i < count; ++i) {
    const TensorInfo& info = *owner[i];
    // Copied, not viewed: the receive buffer is reused and blobs are not aligned for typed access.
    Tensor t = Tensor::zeros(*info.dtype, info.shape);
    if (blob_bytes[i]) std::memcpy(t.mutable_bytes(), bytes.data() + at, blob_bytes[i]);
    if (*info.dtype == DType::Bool)
      for (std::uint64_t k = 0; k < blob_bytes[i]; ++k)
        if (std::to_integer<unsigned>(bytes[at + k]) > 1)
          fail(source,
               "bool blob " + std::to_string(i) + " holds a byte other than 0 or 1 at " + std::to_string(k),
               info.field, frame.entry().key);
    at += blob_bytes[i];
    frame.tensors.push_back(std::move(t));
  }
  unsigned int digest_bytes = 0;
  if (EVP_Digest(bytes.data(), length, frame.digest.data(), &digest_bytes, EVP_sha256(), nullptr) != 1 ||
      digest_bytes != frame.digest.size())
    throw Error(ErrorKind::Internal, "SHA-256 of the frame failed", source);
  return frame;
}

}  // namespace probe::online
