// probe::DumpWriter: msprobe's dump layout (dump-and-compare §1) written from C++.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <mutex>
#include <unordered_map>

#include "dump_writer/PyJson.h"
#include "dump_writer/RecordJson.h"
#include "io/TensorIo.h"
#include "probe/dump_writer.h"
#include "probe/error.h"
#include "probe/tensor_file.h"

namespace fs = std::filesystem;

namespace probe {
namespace {

using dump_writer::json_float;
using dump_writer::json_quote;
using dump_writer::JsonBlock;

// msprobe refuses to write a tensor file whose path leaves this alphabet or whose name is too long
// (§1.5.2); probe refuses the record instead of writing a file msprobe would not have.
bool valid_file_name(std::string_view name) {
  if (name.empty() || name.size() > 255) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
  return true;
}

// An API key "Prefix.name[.overload]" or a module path: non-empty dot-separated segments of file-name
// characters (the key becomes part of every tensor file name).
void check_name(std::string_view what, std::string_view name, bool needs_dot) {
  bool ok = !name.empty() && valid_file_name(name) && name.front() != '.' && name.back() != '.' &&
            name.find("..") == std::string_view::npos;
  if (needs_dot && name.find('.') == std::string_view::npos) ok = false;
  if (!ok)
    throw Error(ErrorKind::InvalidArgument,
                std::string(what) + " must be dot-separated segments of [A-Za-z0-9_-]" +
                    (needs_dot ? " with a prefix (\"Functional.relu\")" : ""),
                {}, std::string(what), std::string(name));
}

struct PendingFile {
  std::string name;
  Tensor tensor;
};

// Encodes one record's values; collects the tensor files to write.
class Encoder {
 public:
  Encoder(const DumpWriterOptions& o, std::string key) : o_(o), key_(std::move(key)) {}

  std::vector<PendingFile> files;
  /// Set: tensors are named by their index here instead of getting a file (online pre-check frames).
  std::vector<Tensor>* blobs = nullptr;
  const std::vector<std::string>* requires_grad = nullptr;  // paths written "requires_grad": true

  void value(std::string& out, int depth, const Value& v, const std::string& file_stem,
             std::string_view kwarg = {}) {
    const bool ms = o_.framework == Framework::MindSpore;
    auto leaf = [&](std::string_view type, const std::string& token) {
      JsonBlock b(out, depth, true);
      b.member("type", json_quote(type));
      b.member("value", token);
      b.close();
    };
    switch (v.kind()) {
      case Value::Kind::None:
        out += "null";
        return;
      case Value::Kind::Bool:
        return leaf("bool", v.as_bool() ? "true" : "false");
      case Value::Kind::Int:
        return leaf("int", std::to_string(v.as_int()));
      case Value::Kind::Float:
        return leaf("float", json_float(v.as_double()));
      case Value::Kind::String:
        return leaf("str", json_quote(v.as_string()));
      case Value::Kind::Tensor:
        return tensor(out, depth, v.tensor(), file_stem);
      case Value::Kind::List: {
        JsonBlock b(out, depth, false);
        const auto& items = v.list();
        for (std::size_t i = 0; i < items.size(); ++i) {
          b.item();
          value(out, b.child_depth(), items[i], file_stem + "." + std::to_string(i));
        }
        b.close();
        return;
      }
      case Value::Kind::DType: {
        // msprobe describes a dtype only as a kwarg named "dtype"; positional dtypes have no analyzer
        // in PyTorch and become {} (§1.4.6), MindSpore describes them as mindspore.dtype.
        if (ms) return leaf("mindspore.dtype", json_quote(mindspore_name(v.as_dtype())));
        if (kwarg == "dtype") return leaf("torch.dtype", json_quote(torch_name(v.as_dtype())));
        out += "{}";
        return;
      }
      case Value::Kind::Slice: {
        const Slice& s = v.as_slice();
        JsonBlock b(out, depth, true);
        b.member("type", "\"slice\"");
        b.key("value");
        JsonBlock parts(out, b.child_depth(), false);
        for (const auto& part : {s.start, s.stop, s.step}) {
          parts.item();
          out += part ? std::to_string(*part) : "null";
        }
        parts.close();
        b.close();
        return;
      }
      case Value::Kind::Ellipsis:
        return leaf("ellipsis", "\"...\"");
      case Value::Kind::Opaque: {
        const auto& o = std::get<OpaqueValue>(v.storage());
        if (o.type == "torch.memory_format") {
          JsonBlock b(out, depth, true);
          b.member("type", json_quote(o.type));
          b.member("format", json_quote(o.text));
          b.close();
          return;
        }
        return leaf(o.type, json_quote(o.text));
      }
    }
  }

  void tensor(std::string& out, int depth, const Tensor& t, const std::string& file_stem) {
    const bool ms = o_.framework == Framework::MindSpore;
    const DumpStatistics s = dump_statistics(t, o_.framework);
    JsonBlock b(out, depth, true);
    b.member("type", ms ? "\"mindspore.Tensor\"" : "\"torch.Tensor\"");
    b.member("dtype", json_quote(ms ? mindspore_name(t.dtype()) : torch_name(t.dtype())));
    b.key("shape");
    JsonBlock shape(out, b.child_depth(), false);
    for (std::int64_t d : t.shape()) {
      shape.item();
      out += std::to_string(d);
    }
    shape.close();
    b.member("Max", s.max);
    b.member("Min", s.min);
    b.member("Mean", s.mean);
    b.member("Norm", s.norm);
    if (!ms)
      b.member("requires_grad", requires_grad && std::find(requires_grad->begin(), requires_grad->end(),
                                                           file_stem) != requires_grad->end()
                                    ? "true"
                                    : "false");
    // Empty tensors are never saved by msprobe (null data pointer), even in tensor mode.
    if (blobs && t.numel() > 0) {
      b.member("data_name", json_quote(std::to_string(blobs->size())));
      blobs->push_back(t);
    } else if (o_.task == DumpTask::Tensor && t.numel() > 0) {
      std::string name = key_ + "." + file_stem + (ms ? ".npy" : ".pt");
      if (!valid_file_name(name))
        throw Error(ErrorKind::InvalidArgument,
                    "tensor file name is not [A-Za-z0-9_.-]{1,255}, which msprobe's dump requires: " + name,
                    {}, file_stem, key_);
      b.member("data_name", json_quote(name));
      files.push_back({std::move(name), t});
    }
    if (o_.md5) b.member("md5", json_quote(dump_crc32(t, o_.framework)));
    b.close();
  }

  // A list section ("input_args", "output", backward "input"): item i gets file stem "{category}.{i}".
  void list_section(JsonBlock& body, std::string& out, std::string_view name, const std::vector<Value>& items,
                    const std::string& category) {
    body.key(name);
    JsonBlock b(out, body.child_depth(), false);
    for (std::size_t i = 0; i < items.size(); ++i) {
      b.item();
      value(out, b.child_depth(), items[i], category + "." + std::to_string(i));
    }
    b.close();
  }

  void kwargs_section(JsonBlock& body, std::string& out,
                      const std::vector<std::pair<std::string, Value>>& kw) {
    body.key("input_kwargs");
    JsonBlock b(out, body.child_depth(), true);
    for (const auto& [k, v] : kw) {
      b.key(k);
      value(out, b.child_depth(), v, "kwargs." + k, k);
    }
    b.close();
  }

 private:
  const DumpWriterOptions& o_;
  std::string key_;
};

struct Record {
  std::string key;
  std::string text;  // "key": {...} at data-member depth
};

constexpr int kRecordDepth = 2;  // dump.json: top object (0) > "data" object (1) > records

}  // namespace

struct DumpWriter::Impl {
  DumpWriterOptions o;
  mutable std::mutex mu;
  int step = 0;
  bool closed = false;
  std::string dir;
  std::vector<Record> records;
  std::unordered_map<std::string, std::int64_t> counters;  // per API / module / grad-hook prefix
  std::vector<std::pair<std::string, std::vector<std::string>>> stacks;  // key → frames, record order
  std::vector<std::pair<std::string, std::optional<std::string>>> construct;
  std::size_t unflushed = 0;

  std::string module_prefix() const { return o.framework == Framework::MindSpore ? "Cell" : "Module"; }

  void open_step() {
    std::string rank = o.rank ? "rank" + std::to_string(*o.rank) : "rank";
    dir = (fs::path(o.dump_path) / ("step" + std::to_string(step)) / rank).string();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
      throw Error(ErrorKind::Io, "cannot create the dump directory: " + ec.message(), dir);
    // msprobe creates its directories 0750 (§1.1).
    ::chmod(dir.c_str(), 0750);
    ::chmod(fs::path(dir).parent_path().c_str(), 0750);
    if (o.task == DumpTask::Tensor) {
      fs::create_directories(fs::path(dir) / "dump_tensor_data", ec);
      if (ec) throw Error(ErrorKind::Io, "cannot create dump_tensor_data: " + ec.message(), dir);
      ::chmod((fs::path(dir) / "dump_tensor_data").c_str(), 0750);
    }
    records.clear();
    counters.clear();
    stacks.clear();
    construct.clear();
    unflushed = 0;
    write_files();  // the skeleton, as msprobe writes at start
  }

  std::int64_t next_index(const std::string& prefix) { return counters[prefix]++; }

  bool keeps_apis() const { return o.level != DumpLevel::L0; }
  bool keeps_modules() const { return o.level != DumpLevel::L1; }

  void add(std::string key, std::string text, std::vector<PendingFile> files, const DumpRecordContext& ctx,
           bool construct_node, bool forward) {
    if (closed) throw Error(ErrorKind::InvalidArgument, "the dump writer is closed", dir, {}, key);
    const fs::path tensor_dir = fs::path(dir) / "dump_tensor_data";
    for (const PendingFile& f : files) {
      const std::string path = (tensor_dir / f.name).string();
      try {
        if (o.framework == Framework::MindSpore)
          save_npy(path, f.tensor);
        else
          save_pt(path, f.tensor);
      } catch (const Error& e) {
        throw e.with_context(path, {}, key);
      }
      ::chmod(path.c_str(), 0640);
    }
    if (forward && !ctx.stack.empty()) stacks.emplace_back(key, ctx.stack);
    if (construct_node) construct.emplace_back(key, ctx.parent);
    records.push_back({std::move(key), std::move(text)});
    if (o.flush_every && ++unflushed >= o.flush_every) write_files();
  }

  std::string dump_json() const {
    std::string s;
    JsonBlock top(s, 0, true);
    top.member("task", o.task == DumpTask::Tensor ? "\"tensor\"" : "\"statistics\"");
    top.member("level", o.level == DumpLevel::L0   ? "\"L0\""
                        : o.level == DumpLevel::L1 ? "\"L1\""
                                                   : "\"mix\"");
    top.member("framework", o.framework == Framework::MindSpore ? "\"mindspore\"" : "\"pytorch\"");
    top.member("dump_data_dir",
               o.task == DumpTask::Tensor
                   ? json_quote(fs::absolute(fs::path(dir) / "dump_tensor_data").lexically_normal().string())
                   : "null");
    top.key("data");
    JsonBlock data(s, 1, true);
    for (const Record& r : records) {
      data.item();
      s += r.text;
    }
    data.close();
    top.close();
    return s;
  }

  std::string stack_json() const {
    // Records with identical stacks share one group (the current format, §2.1), in first-seen order.
    std::vector<std::pair<std::vector<std::string>, const std::vector<std::string>*>> groups;
    std::map<std::vector<std::string>, std::size_t> index;
    for (const auto& [key, frames] : stacks) {
      auto [it, fresh] = index.try_emplace(frames, groups.size());
      if (fresh) groups.push_back({{}, &frames});
      groups[it->second].first.push_back(key);
    }
    std::string s;
    JsonBlock top(s, 0, true);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      top.key(std::to_string(g));
      JsonBlock pair(s, 1, false);
      for (const std::vector<std::string>* list :
           {static_cast<const std::vector<std::string>*>(&groups[g].first), groups[g].second}) {
        pair.item();
        JsonBlock l(s, 2, false);
        for (const auto& line : *list) {
          l.item();
          s += json_quote(line);
        }
        l.close();
      }
      pair.close();
    }
    top.close();
    return s;
  }

  std::string construct_json() const {
    std::string s;
    JsonBlock top(s, 0, true);
    for (const auto& [key, parent] : construct) top.member(key, parent ? json_quote(*parent) : "null");
    top.close();
    return s;
  }

  void write_one(const std::string& name, const std::string& text) const {
    const std::string path = (fs::path(dir) / name).string();
    io::write_file_atomically(path, {text});
    ::chmod(path.c_str(), 0640);
  }

  void write_files() {
    write_one("dump.json", dump_json());
    if (o.side_files) {
      write_one("stack.json", stack_json());
      write_one("construct.json", construct_json());
    }
    unflushed = 0;
  }
};

DumpWriter::DumpWriter(DumpWriterOptions options) : impl_(std::make_unique<Impl>()) {
  if (options.dump_path.empty())
    throw Error(ErrorKind::InvalidArgument, "dump_path is empty", {}, "DumpWriterOptions.dump_path");
  if (options.framework != Framework::PyTorch && options.framework != Framework::MindSpore)
    throw Error(ErrorKind::InvalidArgument, "the framework must be PyTorch or MindSpore", {},
                "DumpWriterOptions.framework");
  if (options.step < 0 || (options.rank && *options.rank < 0))
    throw Error(ErrorKind::InvalidArgument, "step and rank must be >= 0", {}, "DumpWriterOptions");
  impl_->o = std::move(options);
  impl_->step = impl_->o.step;
  impl_->open_step();
}

DumpWriter::~DumpWriter() {
  try {
    close();
  } catch (...) {  // a destructor must not throw; close() reports the same error to callers who ask
  }
}

std::string dump_writer::forward_record_json(std::string_view key, const ApiCall& call,
                                             const std::vector<Value>& outputs, Framework framework,
                                             std::vector<Tensor>& blobs) {
  std::string_view api = key;
  if (api.ends_with(".forward")) api.remove_suffix(8);
  check_name("api", api, true);
  DumpWriterOptions o;
  o.framework = framework;
  o.task = DumpTask::Tensor;
  Encoder enc(o, std::string(key));
  enc.blobs = &blobs;
  std::string text = json_quote(key) + ": ";
  JsonBlock body(text, kRecordDepth, true);
  enc.list_section(body, text, "input_args", call.args, "input");
  enc.kwargs_section(body, text, call.kwargs);
  enc.list_section(body, text, "output", outputs, "output");
  body.close();
  return text;
}

std::string DumpWriter::api_forward(std::string_view api, const ApiCall& call,
                                    const std::vector<Value>& outputs, const DumpRecordContext& context) {
  check_name("api", api, true);
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  std::string key = std::string(api) + "." + std::to_string(m.next_index(std::string(api))) + ".forward";
  if (!m.keeps_apis()) return key;
  Encoder enc(m.o, key);
  enc.requires_grad = &context.requires_grad;
  std::string text = json_quote(key) + ": ";
  JsonBlock body(text, kRecordDepth, true);
  enc.list_section(body, text, "input_args", call.args, "input");
  enc.kwargs_section(body, text, call.kwargs);
  if (context.is_recompute && m.o.framework == Framework::PyTorch)
    body.member("is_recompute", *context.is_recompute ? "true" : "false");
  enc.list_section(body, text, "output", outputs, "output");
  body.close();
  m.add(key, std::move(text), std::move(enc.files), context, m.o.level == DumpLevel::Mix, true);
  return key;
}

std::string DumpWriter::backward(std::string_view forward_key, const std::vector<Value>& grad_in,
                                 const std::vector<Value>& grad_out, const DumpRecordContext& context) {
  // API: "X.k.forward" → "X.k.backward"; module: "Module.p.C.forward.k" → "Module.p.C.backward.k".
  std::string key(forward_key);
  bool is_module = false;
  if (key.size() > 8 && key.ends_with(".forward")) {
    key.replace(key.size() - 7, 7, "backward");
  } else if (auto pos = key.rfind(".forward.");
             pos != std::string::npos && key.find_first_not_of("0123456789", pos + 9) == std::string::npos &&
             pos + 9 < key.size()) {
    key.replace(pos + 1, 7, "backward");
    is_module = true;
  } else {
    throw Error(ErrorKind::InvalidArgument,
                "not a forward record key (\"X.0.forward\" or \"Module.p.C.forward.0\")", {}, "forward_key",
                std::string(forward_key));
  }
  check_name("forward_key", key, true);
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  if (is_module ? !m.keeps_modules() : !m.keeps_apis()) return key;
  Encoder enc(m.o, key);
  enc.requires_grad = &context.requires_grad;
  std::string text = json_quote(key) + ": ";
  JsonBlock body(text, kRecordDepth, true);
  enc.list_section(body, text, "input", grad_in, "input");
  enc.list_section(body, text, "output", grad_out, "output");
  body.close();
  // construct.json parents backward nodes to backward nodes (§2.2).
  DumpRecordContext ctx = context;
  if (ctx.parent) {
    if (auto pos = ctx.parent->rfind(".forward."); pos != std::string::npos)
      ctx.parent->replace(pos + 1, 7, "backward");
  }
  const bool node = is_module ? true : m.o.level == DumpLevel::Mix;
  m.add(key, std::move(text), std::move(enc.files), ctx, node, false);
  return key;
}

std::string DumpWriter::module_forward(std::string_view path, std::string_view cls, const ApiCall& call,
                                       const std::vector<Value>& outputs,
                                       const std::vector<std::pair<std::string, Tensor>>& parameters,
                                       const DumpRecordContext& context) {
  check_name("module path", path, false);
  check_name("module class", cls, false);
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  const std::string prefix = m.module_prefix() + "." + std::string(path) + "." + std::string(cls);
  std::string key = prefix + ".forward." + std::to_string(m.next_index(prefix + ".forward"));
  if (!m.keeps_modules()) return key;
  Encoder enc(m.o, key);
  enc.requires_grad = &context.requires_grad;
  std::string text = json_quote(key) + ": ";
  JsonBlock body(text, kRecordDepth, true);
  enc.list_section(body, text, "input_args", call.args, "input");
  enc.kwargs_section(body, text, call.kwargs);
  enc.list_section(body, text, "output", outputs, "output");
  body.key("parameters");
  JsonBlock params(text, body.child_depth(), true);
  for (const auto& [name, t] : parameters) {
    check_name("parameter name", name, false);
    params.key(name);
    enc.tensor(text, params.child_depth(), t, "parameters." + name);
  }
  params.close();
  if (context.is_recompute && m.o.framework == Framework::PyTorch)
    body.member("is_recompute", *context.is_recompute ? "true" : "false");
  body.close();
  m.add(key, std::move(text), std::move(enc.files), context, true, true);
  return key;
}

std::string DumpWriter::parameters_grad(std::string_view path, std::string_view cls,
                                        const std::vector<std::pair<std::string, Tensor>>& grads) {
  check_name("module path", path, false);
  check_name("module class", cls, false);
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  const std::string prefix = m.module_prefix() + "." + std::string(path) + "." + std::string(cls);
  std::string key = prefix + ".parameters_grad." + std::to_string(m.next_index(prefix + ".parameters_grad"));
  if (!m.keeps_modules()) return key;
  Encoder enc(m.o, key);
  std::string text = json_quote(key) + ": ";
  JsonBlock body(text, kRecordDepth, true);
  for (const auto& [name, t] : grads) {
    check_name("parameter name", name, false);
    body.key(name);
    JsonBlock one(text, body.child_depth(), false);  // each value is a 1-element list (§1.4.2)
    one.item();
    enc.tensor(text, one.child_depth(), t, name);
    one.close();
  }
  body.close();
  m.add(key, std::move(text), std::move(enc.files), {}, false, false);
  return key;
}

void DumpWriter::flush() {
  std::lock_guard lock(impl_->mu);
  if (!impl_->closed) impl_->write_files();
}

void DumpWriter::next_step() {
  std::lock_guard lock(impl_->mu);
  if (impl_->closed) throw Error(ErrorKind::InvalidArgument, "the dump writer is closed", impl_->dir);
  impl_->write_files();
  ++impl_->step;
  impl_->open_step();
}

void DumpWriter::close() {
  std::lock_guard lock(impl_->mu);
  if (impl_->closed) return;
  impl_->closed = true;
  impl_->write_files();
}

std::string DumpWriter::rank_dir() const {
  std::lock_guard lock(impl_->mu);
  return impl_->dir;
}

std::string DumpWriter::dump_json_path() const { return (fs::path(rank_dir()) / "dump.json").string(); }

std::size_t DumpWriter::record_count() const {
  std::lock_guard lock(impl_->mu);
  return impl_->records.size();
}

}  // namespace probe
