// torch.save zip files: reading (zip directory + allow-listed unpickler) and a minimal writer.
#include <zlib.h>

#include <unordered_map>

#include "io/TensorIo.h"

namespace probe::io {
namespace {

void put_le(std::string& out, std::uint64_t v, int n) {
  for (int k = 0; k < n; ++k) out += static_cast<char>((v >> (8 * k)) & 0xFF);
}

// Pickle integer with the smallest opcode, as Python's pickler chooses.
void put_int(std::string& p, std::int64_t v) {
  if (v >= 0 && v < 256) {
    p += 'K';
    put_le(p, static_cast<std::uint64_t>(v), 1);
  } else if (v >= 0 && v < 65536) {
    p += 'M';
    put_le(p, static_cast<std::uint64_t>(v), 2);
  } else if (v >= -(std::int64_t{1} << 31) && v < (std::int64_t{1} << 31)) {
    p += 'J';
    put_le(p, static_cast<std::uint64_t>(v), 4);
  } else {
    p += '\x8a';
    p += '\x08';
    put_le(p, static_cast<std::uint64_t>(v), 8);
  }
}

void put_str(std::string& p, std::string_view s) {
  p += 'X';
  put_le(p, s.size(), 4);
  p += s;
}

void put_global(std::string& p, std::string_view module, std::string_view name) {
  p += 'c';
  p += module;
  p += '\n';
  p += name;
  p += '\n';
}

std::string_view storage_class_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "BoolStorage";
    case DType::UInt8:
      return "ByteStorage";
    case DType::Int8:
      return "CharStorage";
    case DType::Int16:
      return "ShortStorage";
    case DType::Int32:
      return "IntStorage";
    case DType::Int64:
      return "LongStorage";
    case DType::Float16:
      return "HalfStorage";
    case DType::BFloat16:
      return "BFloat16Storage";
    case DType::Float32:
      return "FloatStorage";
    case DType::Float64:
      return "DoubleStorage";
    case DType::Complex64:
      return "ComplexFloatStorage";
    case DType::Complex128:
      return "ComplexDoubleStorage";
    default:
      return {};  // uint16/32/64: torch >= 2.3 saves them untyped with _rebuild_tensor_v3
  }
}

}  // namespace

namespace {

// Checks a torch.save archive's layout and hands `use` its pickle and a loader for its storage
// records; `read_data` false checks each record against the directory but reads none.
template <typename Use>
auto with_pt_pickle(const std::shared_ptr<Storage>& buf, const std::string& file, bool read_data, Use&& use) {
  const auto* d = reinterpret_cast<const unsigned char*>(buf->data());
  if (buf->size() >= 2 && d[0] == 0x80 && d[1] <= 5)
    throw Error(ErrorKind::Unsupported, "legacy (non-zip) torch.save format; re-save it with torch >= 1.6",
                file);
  ZipReader zip(buf, file);
  const auto& entries = zip.entries();
  if (entries.empty()) throw Error(ErrorKind::Format, "empty zip archive: no data.pkl", file);
  // The record prefix is whatever the writer chose ({archive}/): take it from the first entry.
  const std::string& first = entries.front().name;
  std::size_t slash = first.find('/');
  if (slash == std::string::npos)
    throw Error(ErrorKind::Format, "zip entries lack the {archive}/ prefix", file);
  const std::string prefix = first.substr(0, slash + 1);
  std::unordered_map<std::string, const ZipEntry*> by_name;
  for (const ZipEntry& e : entries) by_name.emplace(e.name, &e);
  auto find = [&](const std::string& rel) -> const ZipEntry* {
    auto it = by_name.find(prefix + rel);
    return it == by_name.end() ? nullptr : it->second;
  };
  if (const ZipEntry* bo = find("byteorder")) {
    std::size_t off;
    auto b = zip.read(*bo, off);
    std::string_view order(reinterpret_cast<const char*>(b->data()) + off,
                           std::min<std::uint64_t>(bo->size, 16));
    if (order != "little")
      throw Error(ErrorKind::Unsupported, "storages in byte order '" + std::string(order) + "'", file,
                  "byteorder");
  }
  const ZipEntry* pkl = find("data.pkl");
  if (!pkl) throw Error(ErrorKind::Format, "no " + prefix + "data.pkl record (not a torch.save file?)", file);
  // Refused from the zip directory's size, before inflating anything.
  if (pkl->size > kMaxPickleBytes)
    throw Error(ErrorKind::Format,
                "data.pkl inflates to " + std::to_string(pkl->size) + " bytes, above the limit of " +
                    std::to_string(kMaxPickleBytes >> 20) +
                    " MiB (a torch.save pickle of a 7B-parameter state_dict is ~35 KB)",
                file, "data.pkl");
  std::size_t pkl_off;
  auto pkl_buf = zip.read(*pkl, pkl_off);
  std::string_view pickle(reinterpret_cast<const char*>(pkl_buf->data()) + pkl_off, pkl->size);
  StorageLoader loader = [&](const std::string& key, std::uint64_t needed_bytes) {
    const ZipEntry* e = find("data/" + key);
    if (!e) throw Error(ErrorKind::Format, "storage record data/" + key + " is missing", file);
    // torch writes a storage record of exactly the storage's bytes: a compressed record claiming more
    // would only cost memory and time to inflate (a decompression bomb), so it is refused unread.
    if (!e->stored && e->size > needed_bytes)
      throw Error(ErrorKind::Format,
                  "storage record data/" + key + " claims to inflate to " + std::to_string(e->size) +
                      " bytes but its tensor storage needs " + std::to_string(needed_bytes) +
                      "; refusing to inflate it (decompression bomb?)",
                  file, "data/" + key);
    StorageBytes s;
    if (read_data) s.buf = zip.read(*e, s.offset);
    s.size = e->size;
    return s;
  };
  return use(pickle, loader);
}

}  // namespace

std::vector<NamedTensor> parse_pt(const std::shared_ptr<Storage>& buf, const std::string& file) {
  return with_pt_pickle(buf, file, true, [&](std::string_view pickle, const StorageLoader& loader) {
    return unpickle_tensors(pickle, loader, file);
  });
}

std::vector<std::pair<std::string, TensorHeader>> parse_pt_headers(const std::shared_ptr<Storage>& buf,
                                                                   const std::string& file) {
  return with_pt_pickle(buf, file, false, [&](std::string_view pickle, const StorageLoader& loader) {
    return unpickle_tensor_headers(pickle, loader, file);
  });
}

std::string torch_pickle_for(const Tensor& t) {
  const bool v3 = storage_class_name(t.dtype()).empty();
  std::string p = "\x80\x02";
  put_global(p, "torch._utils", v3 ? "_rebuild_tensor_v3" : "_rebuild_tensor_v2");
  p += '(';
  p += '(';
  put_str(p, "storage");
  put_global(p, "torch", v3 ? "UntypedStorage" : storage_class_name(t.dtype()));
  put_str(p, "0");
  put_str(p, "cpu");
  put_int(p, v3 ? static_cast<std::int64_t>(t.nbytes()) : t.numel());
  p += 't';
  p += 'Q';
  put_int(p, 0);
  p += '(';
  for (std::int64_t s : t.shape()) put_int(p, s);
  p += 't';
  p += '(';
  std::int64_t stride = 1;
  std::vector<std::int64_t> strides(t.shape().size());
  for (std::size_t k = t.shape().size(); k-- > 0;) {
    strides[k] = stride;
    stride *= std::max<std::int64_t>(t.shape()[k], 1);
  }
  for (std::int64_t s : strides) put_int(p, s);
  p += 't';
  p += '\x89';
  put_global(p, "collections", "OrderedDict");
  p += ")R";
  if (v3) put_global(p, "torch", name(t.dtype()));
  p += "tR.";
  return p;
}

void save_pt(const std::string& path, const Tensor& tensor) {
  // The archive name is the file name without directory and last extension, as torch.save uses.
  std::string base =
      path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (auto dot = base.find_last_of('.'); dot != std::string::npos && dot > 0) base.resize(dot);
  if (base.empty()) base = "archive";
  const std::string pickle = torch_pickle_for(tensor);
  struct Rec {
    std::string name;
    std::string_view data;
  };
  const std::string_view data(reinterpret_cast<const char*>(tensor.bytes()), tensor.nbytes());
  const Rec recs[] = {{base + "/data.pkl", pickle},
                      {base + "/byteorder", "little"},
                      {base + "/data/0", data},
                      {base + "/version", "3\n"}};
  std::uint64_t total = 0;
  for (const Rec& r : recs) total += r.data.size() + 200;
  if (total >= 0xFFFFFFFFull)
    throw Error(ErrorKind::Unsupported, "save_pt writes archives below 4 GiB only (no ZIP64)", path);

  std::vector<std::string> headers;  // kept alive: `parts` views them
  std::vector<std::string_view> parts;
  std::string central;
  std::uint64_t offset = 0;
  for (const Rec& r : recs) {
    const auto crc =
        static_cast<std::uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(r.data.data()), r.data.size()));
    // Pad with an extra field (id "FB", as torch's writer does) so that data starts 64-byte aligned.
    const std::size_t pad = (64 - (offset + 30 + r.name.size() + 4) % 64) % 64;
    std::string h;
    put_le(h, 0x04034b50, 4);
    put_le(h, 20, 2);
    put_le(h, 0x0800, 2);  // UTF-8 names
    put_le(h, 0, 2);       // stored
    put_le(h, 0, 4);       // time, date
    put_le(h, crc, 4);
    put_le(h, r.data.size(), 4);
    put_le(h, r.data.size(), 4);
    put_le(h, r.name.size(), 2);
    put_le(h, 4 + pad, 2);
    h += r.name;
    put_le(h, 0x4246, 2);
    put_le(h, pad, 2);
    h.append(pad, 'Z');
    std::string c;
    put_le(c, 0x02014b50, 4);
    put_le(c, 20, 2);
    put_le(c, 20, 2);
    put_le(c, 0x0800, 2);
    put_le(c, 0, 2);
    put_le(c, 0, 4);
    put_le(c, crc, 4);
    put_le(c, r.data.size(), 4);
    put_le(c, r.data.size(), 4);
    put_le(c, r.name.size(), 2);
    put_le(c, 0, 2);  // extra
    put_le(c, 0, 2);  // comment
    put_le(c, 0, 2);  // disk
    put_le(c, 0, 2);  // internal attributes
    put_le(c, 0, 4);  // external attributes
    put_le(c, offset, 4);
    c += r.name;
    central += c;
    offset += h.size() + r.data.size();
    headers.push_back(std::move(h));
  }
  std::string eocd;
  put_le(eocd, 0x06054b50, 4);
  put_le(eocd, 0, 4);
  put_le(eocd, std::size(recs), 2);
  put_le(eocd, std::size(recs), 2);
  put_le(eocd, central.size(), 4);
  put_le(eocd, offset, 4);
  put_le(eocd, 0, 2);
  for (std::size_t k = 0; k < std::size(recs); ++k) {
    parts.push_back(headers[k]);
    parts.push_back(recs[k].data);
  }
  parts.push_back(central);
  parts.push_back(eocd);
  write_file_atomically(path, parts);
}

}  // namespace probe::io

namespace probe {
void save_pt(const std::string& path, const Tensor& tensor) { io::save_pt(path, tensor); }
}  // namespace probe
