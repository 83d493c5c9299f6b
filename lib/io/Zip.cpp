// Zip archives over a byte buffer. libzip lists and inflates members (handling ZIP64 and data
// descriptors); the central directory is also walked here because libzip does not expose where a
// stored member's data starts, and mapping that data in place is what makes loading zero-copy.
#include <zip.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "io/TensorIo.h"

namespace probe::io {
namespace {

std::uint64_t le(const std::byte* p, int n) {
  std::uint64_t v = 0;
  for (int k = n - 1; k >= 0; --k) v = (v << 8) | static_cast<std::uint64_t>(p[k]);
  return v;
}

struct CdEntry {
  std::string name;
  std::uint64_t local_offset;
};

// Returns the central directory entries (name, local header offset) in directory order.
std::vector<CdEntry> read_central_directory(const std::byte* d, std::uint64_t size, const std::string& file) {
  auto fail = [&](const std::string& what) -> void {
    throw Error(ErrorKind::Format, "corrupt zip central directory: " + what, file);
  };
  if (size < 22) fail("file too short");
  // The end-of-central-directory record sits in the last 22 + 65535 (comment) bytes.
  std::uint64_t eocd = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  for (std::uint64_t pos = size - 22 + 1; pos-- > lowest;)
    if (le(d + pos, 4) == 0x06054b50) {
      eocd = pos;
      break;
    }
  if (eocd == std::numeric_limits<std::uint64_t>::max()) fail("no end-of-central-directory record");
  std::uint64_t count = le(d + eocd + 10, 2);
  std::uint64_t cd_size = le(d + eocd + 12, 4);
  std::uint64_t cd_off = le(d + eocd + 16, 4);
  if (count == 0xFFFF || cd_size == 0xFFFFFFFF || cd_off == 0xFFFFFFFF) {
    if (eocd < 20 || le(d + eocd - 20, 4) != 0x07064b50) fail("ZIP64 locator missing");
    std::uint64_t z64 = le(d + eocd - 20 + 8, 8);
    if (z64 > size || size - z64 < 56 || le(d + z64, 4) != 0x06064b50) fail("bad ZIP64 end record");
    count = le(d + z64 + 32, 8);
    cd_size = le(d + z64 + 40, 8);
    cd_off = le(d + z64 + 48, 8);
  }
  if (cd_off > size || cd_size > size - cd_off) fail("directory lies outside the file");
  if (count > cd_size / 46) fail("entry count exceeds the directory size");
  std::vector<CdEntry> out;
  out.reserve(count);
  std::uint64_t pos = cd_off, end = cd_off + cd_size;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (end - pos < 46 || le(d + pos, 4) != 0x02014b50) fail("bad entry header");
    std::uint64_t name_len = le(d + pos + 28, 2), extra_len = le(d + pos + 30, 2),
                  comment_len = le(d + pos + 32, 2);
    std::uint64_t usize = le(d + pos + 24, 4), csize = le(d + pos + 20, 4), off = le(d + pos + 42, 4);
    if (end - pos - 46 < name_len + extra_len + comment_len) fail("entry runs past the directory");
    const std::byte* name = d + pos + 46;
    const std::byte* extra = name + name_len;
    if (off == 0xFFFFFFFF) {
      // ZIP64 extended information: only the fields whose 32-bit value is saturated, in this order.
      bool found = false;
      for (std::uint64_t e = 0; e + 4 <= extra_len;) {
        std::uint64_t id = le(extra + e, 2), len = le(extra + e + 2, 2);
        if (e + 4 + len > extra_len) break;
        if (id == 0x0001) {
          std::uint64_t at = 0;
          if (usize == 0xFFFFFFFF) at += 8;
          if (csize == 0xFFFFFFFF) at += 8;
          if (at + 8 <= len) {
            off = le(extra + e + 4 + at, 8);
            found = true;
          }
          break;
        }
        e += 4 + len;
      }
      if (!found) fail("ZIP64 local header offset missing");
    }
    out.push_back({std::string(reinterpret_cast<const char*>(name), name_len), off});
    pos += 46 + name_len + extra_len + comment_len;
  }
  return out;
}

}  // namespace

ZipReader::ZipReader(std::shared_ptr<Storage> buf, std::string file)
    : buf_(std::move(buf)), file_(std::move(file)) {
  const std::byte* d = buf_->data();
  const std::uint64_t size = buf_->size();
  if (size < 4 || (le(d, 4) != 0x04034b50 && le(d, 4) != 0x06054b50))
    throw Error(ErrorKind::Format, "wrong magic (not a zip archive)", file_);
  std::vector<CdEntry> cd = read_central_directory(d, size, file_);

  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* src = zip_source_buffer_create(d, size, 0, &err);
  if (!src) {
    std::string msg = zip_error_strerror(&err);
    zip_error_fini(&err);
    throw Error(ErrorKind::Internal, "libzip: " + msg, file_);
  }
  zip_t* za = zip_open_from_source(src, ZIP_RDONLY, &err);
  if (!za) {
    zip_source_free(src);
    std::string msg = zip_error_strerror(&err);
    zip_error_fini(&err);
    throw Error(ErrorKind::Format, "not a readable zip archive: " + msg, file_);
  }
  zip_error_fini(&err);
  zip_ = za;
  try {
    zip_int64_t n = zip_get_num_entries(za, 0);
    if (n < 0 || static_cast<std::uint64_t>(n) != cd.size())
      throw Error(ErrorKind::Format, "zip directory entry count is inconsistent", file_);
    entries_.reserve(cd.size());
    for (zip_uint64_t i = 0; i < static_cast<zip_uint64_t>(n); ++i) {
      zip_stat_t st;
      zip_stat_init(&st);
      if (zip_stat_index(za, i, ZIP_FL_ENC_RAW, &st) != 0)
        throw Error(ErrorKind::Format, std::string("cannot stat zip member: ") + zip_strerror(za), file_);
      ZipEntry e;
      e.name = st.name ? st.name : "";
      if (e.name != cd[i].name) throw Error(ErrorKind::Format, "zip directory is inconsistent", file_);
      e.index = i;
      e.size = st.size;
      e.comp_size = st.comp_size;
      if (st.encryption_method != ZIP_EM_NONE)
        throw Error(ErrorKind::Unsupported, "encrypted zip member", file_, e.name);
      // The inflate bound below is relative to the compressed size, so that must be real (found by
      // probe_fuzz_npy: a member claiming 3.6 GB compressed in a 400-byte file).
      if (e.comp_size > size)
        throw Error(ErrorKind::Format,
                    "member claims " + std::to_string(e.comp_size) + " compressed bytes in an archive of " +
                        std::to_string(size),
                    file_, e.name);
      e.stored = st.comp_method == ZIP_CM_STORE;
      if (e.stored) {
        std::uint64_t lh = cd[i].local_offset;
        if (lh > size || size - lh < 30 || le(d + lh, 4) != 0x04034b50)
          throw Error(ErrorKind::Format, "bad local header", file_, e.name);
        std::uint64_t data = lh + 30 + le(d + lh + 26, 2) + le(d + lh + 28, 2);
        if (e.size != e.comp_size || data > size || size - data < e.size)
          throw Error(ErrorKind::Format,
                      "stored member of " + std::to_string(e.size) +
                          " bytes lies outside the archive (truncated file?)",
                      file_, e.name);
        e.data_offset = data;
      }
      entries_.push_back(std::move(e));
    }
  } catch (...) {
    zip_discard(za);
    zip_ = nullptr;
    throw;
  }
}

ZipReader::~ZipReader() {
  if (zip_) zip_discard(static_cast<zip_t*>(zip_));
}

void ZipReader::check_inflate_bound(const ZipEntry& e) const {
  if (e.size > e.comp_size * kMaxInflateRatio + 1024 || e.size > kMaxInflatedBytes)
    throw Error(ErrorKind::Format,
                "member claims to inflate " + std::to_string(e.comp_size) + " bytes to " +
                    std::to_string(e.size) + " (zip bomb?)",
                file_, e.name);
}

namespace {
// A compressed member opened for reading; the caller closes it.
zip_file_t* open_member(zip_t* za, const ZipEntry& e, const std::string& file) {
  zip_file_t* zf = zip_fopen_index(za, e.index, 0);
  if (!zf)
    throw Error(ErrorKind::Unsupported, std::string("cannot open zip member: ") + zip_strerror(za), file,
                e.name);
  return zf;
}
}  // namespace

std::shared_ptr<Storage> ZipReader::read(const ZipEntry& e, std::size_t& offset) const {
  if (e.stored) {
    offset = e.data_offset;
    return buf_;
  }
  check_inflate_bound(e);
  zip_file_t* zf = open_member(static_cast<zip_t*>(zip_), e, file_);
  auto out = make_owned_storage(static_cast<std::size_t>(e.size));
  std::uint64_t got = 0;
  std::string problem;
  while (got < e.size) {
    zip_int64_t n = zip_fread(zf, out->data() + got, e.size - got);
    if (n < 0) {
      problem = std::string("corrupt compressed data: ") + zip_file_strerror(zf);
      break;
    }
    if (n == 0) {
      problem = "member is shorter than its directory entry says";
      break;
    }
    got += static_cast<std::uint64_t>(n);
  }
  if (problem.empty()) {
    // Reading past the declared size either finds the end (libzip verifies the CRC there) or more data.
    char extra;
    zip_int64_t n = zip_fread(zf, &extra, 1);
    if (n < 0)
      problem = std::string("corrupt compressed data: ") + zip_file_strerror(zf);
    else if (n > 0)
      problem = "member inflates to more than its directory entry says";
  }
  zip_fclose(zf);
  if (!problem.empty()) throw Error(ErrorKind::Format, problem, file_, e.name);
  offset = 0;
  return out;
}

std::string ZipReader::read_prefix(const ZipEntry& e, std::size_t max_bytes) const {
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(max_bytes, e.size));
  if (e.stored) return std::string(reinterpret_cast<const char*>(buf_->data() + e.data_offset), want);
  check_inflate_bound(e);
  zip_file_t* zf = open_member(static_cast<zip_t*>(zip_), e, file_);
  std::string out(want, '\0');
  std::size_t got = 0;
  std::string problem;
  while (got < want) {
    const zip_int64_t n = zip_fread(zf, out.data() + got, want - got);
    if (n < 0) {
      problem = std::string("corrupt compressed data: ") + zip_file_strerror(zf);
      break;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  zip_fclose(zf);
  if (!problem.empty()) throw Error(ErrorKind::Format, problem, file_, e.name);
  out.resize(got);
  return out;
}

}  // namespace probe::io
