// The payload of online pre-check (DECISIONS D9): one API call as a language-neutral frame,
// instead of msprobe's pickled ApiData. A frame is a one-entry dump.json document (dump-and-compare §1.4)
// whose tensor descriptors name blobs by index ("data_name": "0", "1", ...), followed by the raw
// little-endian tensor bytes, self-delimiting and checked by CRC-32:
//
//   offset  size       field
//   0       4          magic "PRBF"
//   4       2          format version, u16 LE (kFrameVersion)
//   6       2          flags, u16 LE (0; non-zero is refused so a later version cannot be misread)
//   8       8          frame length in bytes, u64 LE (the whole frame, CRC included)
//   16      4          header length in bytes, u32 LE
//   20      4          blob count n, u32 LE
//   24      8 * n      blob lengths, u64 LE each
//   ...     header     the dump.json document (UTF-8 JSON)
//   ...     blobs      blob 0, blob 1, ... back to back, no padding
//   end-4   4          CRC-32 (zlib polynomial) of every preceding byte, u32 LE
//
// The header may carry a top-level "run_id" string (the producer's run, ClientOptions::run_id; old senders
// omit it): at most 128 characters of [A-Za-z0-9._:-].
//
// Any language with a JSON parser and a CRC-32 can write or read it (tests/data/precheck_frame/ holds
// frames written by a Python script). Decoding never trusts a length: every bound is checked before use.
// All functions are thread-safe (no shared state).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "probe/dump.h"
#include "probe/export.h"
#include "probe/tensor.h"

namespace probe::online {

inline constexpr std::uint16_t kFrameVersion = 1;
/// Bytes of a frame without header and blobs: fixed prefix plus CRC.
inline constexpr std::size_t kFrameOverhead = 28;

/// Bounds a frame must respect; a receiver refuses (probe::Error, Format) a frame that breaks one.
struct PROBE_API FrameLimits {
  std::uint64_t max_frame_bytes = std::uint64_t{1} << 31;  ///< whole frame
  std::uint32_t max_tensors = 4096;                        ///< blobs per frame
  std::uint32_t max_header_bytes = 16u << 20;              ///< JSON header
  int max_json_depth = 64;                                 ///< JSON nesting of the header
};

/// A decoded frame: the header as a parsed dump (exactly one entry) and the blobs as owned tensors.
struct PROBE_API Frame {
  Dump header;
  std::vector<Tensor> tensors;  ///< tensors[i] is blob i, with the dtype and shape of its descriptor
  /// SHA-256 of the frame's bytes as decoded (all zero for a Frame not made by decode_frame): a record
  /// sent again unchanged has the same digest, one with other content under the same name has not.
  std::array<std::uint8_t, 32> digest{};

  /// The producer's run id from the header ("" when the sender gave none).
  const std::string& run_id() const { return header.run_id(); }

  /// The frame's single API record.
  const DumpEntry& entry() const { return header.entries().front(); }
  /// The blob a descriptor of entry() points at; throws InvalidArgument if it has no data_name.
  const Tensor& tensor(const TensorInfo& info) const;
};

inline constexpr std::size_t kMaxRunIdBytes = 128;
/// Whether `run_id` may name a run: 1 to kMaxRunIdBytes characters of [A-Za-z0-9._:-].
PROBE_API bool valid_run_id(std::string_view run_id);

/// Builds a frame from a header document and the blobs its descriptors name by index. The header is
/// validated exactly as decode_frame() will (so a sender cannot produce a frame its receiver refuses with
/// the same limits); throws probe::Error (Format/InvalidArgument/Unsupported) naming the API and field.
PROBE_API std::vector<std::byte> encode_frame(std::string_view header_json, std::span<const Tensor> tensors,
                                              const FrameLimits& limits = {});

/// Decodes one whole frame. Throws probe::Error (Format) for a truncated or oversized frame, a bad magic,
/// version or CRC, a header that is not a one-entry dump.json, or a descriptor that does not match its
/// blob; `source` names the frame in messages (e.g. "rank 3 seq 17").
PROBE_API Frame decode_frame(std::span<const std::byte> bytes, const FrameLimits& limits = {},
                             const std::string& source = "precheck frame");

/// The total length announced by a frame's first 16 bytes, for stream readers; nullopt while fewer than 16
/// bytes are available. Throws Format for a bad magic/version/flags or a length outside
/// [kFrameOverhead, limits.max_frame_bytes], so a reader never waits for or allocates a hostile length.
PROBE_API std::optional<std::uint64_t> frame_length(std::span<const std::byte> prefix,
                                                    const FrameLimits& limits = {},
                                                    const std::string& source = "precheck frame");

/// The forward API records of a dump as frames, in file order: what a training process would have sent
/// instead of dumping (`probe replay`, tests). Each frame's header is the entry's JSON as dumped (numbers
/// kept as written) with every data_name replaced by its blob index; the blobs are read from the tensor
/// files. Const member functions are thread-safe.
class PROBE_API DumpRecords {
 public:
  /// Reads and checks dump.json (as Dump::open; throws probe::Error naming the file and field).
  static DumpRecords open(const std::string& dump_json);
  ~DumpRecords();
  DumpRecords(DumpRecords&&) noexcept;
  DumpRecords& operator=(DumpRecords&&) noexcept;

  std::size_t size() const;
  /// The dump.json key of record i ("Functional.relu.0.forward").
  const std::string& key(std::size_t i) const;
  /// Encodes record i with its tensors read now, its header carrying `run_id` when not empty (a client's
  /// Client::run_id()). Throws probe::Error naming the tensor file and field when a file cannot be read, or
  /// when the frame breaks `limits` or run_id is not valid_run_id().
  std::vector<std::byte> frame(std::size_t i, const FrameLimits& limits = {},
                               std::string_view run_id = {}) const;

 private:
  struct Impl;
  explicit DumpRecords(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace probe::online
