// A dump's forward API records as precheck frames (probe/precheck_frame.h, DumpRecords). The entry JSON is
// copied from dump.json event by event (numbers as their text, so every statistic survives exactly) rather
// than re-serialised from the parsed model, which does not keep every leaf's original spelling.
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <fstream>
#include <sstream>
#include <unordered_map>

#include "probe/error.h"
#include "probe/precheck_frame.h"
#include "support/FileOps.h"

namespace probe::online {
namespace {

struct Record {
  std::string key;
  std::string json;                     // the entry's value with blob indices as data_name
  std::vector<std::string> data_names;  // original data_name of blob 0, 1, ...
};

constexpr unsigned kFlags = rapidjson::kParseValidateEncodingFlag | rapidjson::kParseNumbersAsStringsFlag |
                            rapidjson::kParseNanAndInfFlag;

// Copies every value of the top-level "data" object into its own JSON text.
class Splitter : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Splitter> {
 public:
  std::vector<Record> records;
  std::string task, level, framework;

  bool Null() {
    return scalar([&](auto& w) { return w.Null(); });
  }
  bool Bool(bool b) {
    return scalar([&](auto& w) { return w.Bool(b); });
  }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    return scalar([&](auto& w) { return w.RawValue(s, n, rapidjson::kNumberType); });
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (!capturing_) {
      if (depth_ == 1 && top_key_ == "task") task.assign(s, n);
      if (depth_ == 1 && top_key_ == "level") level.assign(s, n);
      if (depth_ == 1 && top_key_ == "framework") framework.assign(s, n);
      return true;
    }
    if (data_name_next_ && n > 0) {
      data_name_next_ = false;
      const std::string index = std::to_string(current_.data_names.size());
      current_.data_names.emplace_back(s, n);
      return writer_.String(index.c_str(), static_cast<rapidjson::SizeType>(index.size()));
    }
    data_name_next_ = false;
    return writer_.String(s, n);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (capturing_) {
      data_name_next_ = std::string_view(s, n) == "data_name";
      return writer_.Key(s, n);
    }
    if (depth_ == 1) top_key_.assign(s, n);
    if (depth_ == 2 && top_key_ == "data") {
      current_ = Record{};
      current_.key.assign(s, n);
      begin_capture_ = true;
    }
    return true;
  }
  bool StartObject() {
    return open([&] { return writer_.StartObject(); });
  }
  bool StartArray() {
    return open([&] { return writer_.StartArray(); });
  }
  bool EndObject(rapidjson::SizeType n) {
    return close([&] { return writer_.EndObject(n); });
  }
  bool EndArray(rapidjson::SizeType n) {
    return close([&] { return writer_.EndArray(n); });
  }

 private:
  template <class F>
  bool scalar(F f) {
    if (begin_capture_) {  // an entry that is not an object: kept as it is, Dump::open judged it
      begin_capture_ = false;
      return true;
    }
    data_name_next_ = false;
    return capturing_ ? f(writer_) : true;
  }
  template <class F>
  bool open(F f) {
    ++depth_;
    if (begin_capture_) {
      begin_capture_ = false;
      capturing_ = true;
      capture_depth_ = depth_;
      buffer_.Clear();
      writer_.Reset(buffer_);
    }
    data_name_next_ = false;
    return capturing_ ? f() : true;
  }
  template <class F>
  bool close(F f) {
    bool ok = capturing_ ? f() : true;
    if (capturing_ && depth_ == capture_depth_) {
      capturing_ = false;
      current_.json.assign(buffer_.GetString(), buffer_.GetSize());
      records.push_back(std::move(current_));
    }
    --depth_;
    return ok;
  }

  int depth_ = 0, capture_depth_ = 0;
  std::string top_key_;
  bool capturing_ = false, begin_capture_ = false, data_name_next_ = false;
  Record current_;
  rapidjson::StringBuffer buffer_;
  rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>, rapidjson::CrtAllocator,
                    rapidjson::kWriteNanAndInfFlag>
      writer_;
};

void append_json_string(std::string& out, const std::string& s) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  out.append(b.GetString(), b.GetSize());
}

}  // namespace

struct DumpRecords::Impl {
  Dump dump;
  std::string header_prefix;  // {"task": ..., "data": {
  std::vector<Record> records;
  std::vector<const DumpEntry*> entries;
};

DumpRecords::DumpRecords(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DumpRecords::~DumpRecords() = default;
DumpRecords::DumpRecords(DumpRecords&&) noexcept = default;
DumpRecords& DumpRecords::operator=(DumpRecords&&) noexcept = default;

DumpRecords DumpRecords::open(const std::string& dump_json) {
  auto impl = std::make_unique<Impl>();
  impl->dump = Dump::open(dump_json);  // every structural check, with its error messages
  const std::string text = detail::read_whole_file(dump_json, "cannot read dump.json");
  Splitter splitter;
  rapidjson::Reader reader;
  rapidjson::StringStream stream(text.c_str());
  if (!reader.Parse<kFlags>(stream, splitter))
    throw Error(ErrorKind::Format,
                std::string("JSON error at byte ") + std::to_string(reader.GetErrorOffset()) + ": " +
                    rapidjson::GetParseError_En(reader.GetParseErrorCode()),
                dump_json);
  std::string& h = impl->header_prefix;
  h = "{\"task\":";
  append_json_string(h, splitter.task);
  h += ",\"level\":";
  append_json_string(h, splitter.level);
  if (!splitter.framework.empty()) {
    h += ",\"framework\":";
    append_json_string(h, splitter.framework);
  }
  h += ",\"dump_data_dir\":\"frame\",\"data\":{";
  for (Record& r : splitter.records) {
    if (classify_run_ut_key(r.key).kind != RunUtKey::Kind::Forward) continue;
    const DumpEntry* entry = impl->dump.find(r.key);
    if (!entry) continue;  // a key repeated in dump.json: the model keeps the first
    impl->entries.push_back(entry);
    impl->records.push_back(std::move(r));
  }
  return DumpRecords(std::move(impl));
}

std::size_t DumpRecords::size() const { return impl_->records.size(); }

const std::string& DumpRecords::key(std::size_t i) const { return impl_->records.at(i).key; }

std::vector<std::byte> DumpRecords::frame(std::size_t i, const FrameLimits& limits,
                                          std::string_view run_id) const {
  const Record& r = impl_->records.at(i);
  const DumpEntry& entry = *impl_->entries.at(i);
  std::unordered_map<std::string, const TensorInfo*> by_name;
  for (const TensorInfo* info : entry.tensors())
    if (info->has_file()) by_name.emplace(info->data_name, info);
  std::vector<Tensor> blobs;
  blobs.reserve(r.data_names.size());
  for (const std::string& name : r.data_names) {
    auto it = by_name.find(name);
    if (it == by_name.end())
      throw Error(ErrorKind::Format, "data_name \"" + name + "\" is not a tensor descriptor's",
                  impl_->dump.path(), "data_name", entry.key);
    const TensorInfo& info = *it->second;
    Tensor t = impl_->dump.load_tensor(entry, info);
    if (t.shape() != info.shape)
      throw Error(ErrorKind::Format,
                  "tensor file has shape " + shape_to_string(t.shape()) + " but dump.json says " +
                      shape_to_string(info.shape),
                  info.data_name, info.field, entry.key);
    // bfloat16 tensors saved as .npy come back as float32: send the dumped dtype.
    if (info.dtype && t.dtype() != *info.dtype) t = t.to(*info.dtype);
    blobs.push_back(std::move(t));
  }
  std::string header = impl_->header_prefix;
  if (!run_id.empty()) {
    if (!valid_run_id(run_id))
      throw Error(ErrorKind::InvalidArgument,
                  "run_id is not 1 to " + std::to_string(kMaxRunIdBytes) + " characters of [A-Za-z0-9._:-]",
                  impl_->dump.path(), "run_id");
    header.insert(1, "\"run_id\":\"" + std::string(run_id) + "\",");  // no escaping: valid_run_id's alphabet
  }
  append_json_string(header, r.key);
  header += ':';
  header += r.json;
  header += "}}";
  return encode_frame(header, blobs, limits);
}

}  // namespace probe::online
