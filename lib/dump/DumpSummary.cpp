// Summaries of dumps (probe info): counts by prefix, direction and dtype, and tensor-file checks.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "probe/construct.h"
#include "probe/dump.h"
#include "probe/dump_summary.h"
#include "probe/error.h"
#include "probe/stack.h"
#include "probe/tensor_file.h"

namespace probe {

namespace {

void add_problem(DumpSummary& s, DumpProblemKind kind, const DumpEntry& e, const std::string& field,
                 std::string detail) {
  ++s.problem_counts[std::string(to_string(kind))];
  s.problems.push_back({kind, e.key, field, std::move(detail)});
}

void check_file(const Dump& dump, const DumpEntry& e, const TensorInfo& t, DumpSummary& s) {
  std::string path;
  try {
    path = dump.tensor_path(e, t);
  } catch (const Error& err) {
    add_problem(s, err.kind() == ErrorKind::Security ? DumpProblemKind::Rejected : DumpProblemKind::Missing,
                e, t.field, err.message());
    return;
  }
  try {
    // Headers only: a summary must not cost the time and memory of reading (or inflating) tensor data.
    const TensorHeader header = read_tensor_header(path);
    if (header.shape != t.shape) {
      add_problem(s, DumpProblemKind::ShapeMismatch, e, t.field,
                  path + ": the file holds " + shape_to_string(header.shape) + ", dump.json says " +
                      shape_to_string(t.shape));
      return;
    }
    if (!t.file_dtype_fits(header.dtype)) {
      add_problem(
          s, DumpProblemKind::DtypeMismatch, e, t.field,
          path + ": the file holds " + std::string(name(header.dtype)) + ", dump.json says " + t.dtype_name);
      return;
    }
    ++s.files_ok;
  } catch (const Error& err) {
    add_problem(s, DumpProblemKind::Unreadable, e, t.field, err.what());
  }
}

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void write_string(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void write_counts(JsonWriter& w, const std::map<std::string, std::size_t>& m) {
  w.StartObject();
  for (const auto& [k, n] : m) {
    write_string(w, k);
    w.Uint64(n);
  }
  w.EndObject();
}

void field(JsonWriter& w, const char* k, std::string_view v) {
  w.Key(k);
  write_string(w, v);
}
void field(JsonWriter& w, const char* k, std::uint64_t v) {
  w.Key(k);
  w.Uint64(v);
}
void field(JsonWriter& w, const char* k, std::int64_t v) {
  w.Key(k);
  w.Int64(v);
}
void field(JsonWriter& w, const char* k, bool v) {
  w.Key(k);
  w.Bool(v);
}
void field(JsonWriter& w, const char* k, const std::map<std::string, std::size_t>& counts) {
  w.Key(k);
  write_counts(w, counts);
}

void write_rank(JsonWriter& w, const DumpSummary& s) {
  auto key = [&](const char* k) { w.Key(k); };
  w.StartObject();
  field(w, "dump_json", s.where.dump_json);
  field(w, "mode", s.where.mode);
  field(w, "step", s.where.step);
  field(w, "rank", s.where.rank);
  field(w, "framework", s.framework);
  field(w, "task", s.task);
  field(w, "level", s.level);
  field(w, "records", s.records);
  field(w, "by_direction", s.by_direction);
  field(w, "by_prefix", s.by_prefix);
  field(w, "tensors", s.tensors);
  field(w, "by_dtype", s.by_dtype);
  field(w, "tensor_bytes", s.tensor_bytes);
  field(w, "unsupported_dtype_tensors", s.unsupported_dtype);
  field(w, "files_referenced", s.files_referenced);
  field(w, "files_checked", s.files_checked);
  field(w, "files_ok", s.files_ok);
  field(w, "file_problems", s.problem_counts);
  key("problems");
  w.StartArray();
  for (const DumpProblem& p : s.problems) {
    w.StartObject();
    field(w, "kind", to_string(p.kind));
    field(w, "record", p.record);
    field(w, "field", p.field);
    field(w, "detail", p.detail);
    w.EndObject();
  }
  w.EndArray();
  key("stack_records");
  if (s.has_stack)
    w.Uint64(s.stack_records);
  else
    w.Null();
  key("construct_nodes");
  if (s.has_construct)
    w.Uint64(s.construct_nodes);
  else
    w.Null();
  w.EndObject();
}

}  // namespace

std::string_view to_string(DumpProblemKind kind) noexcept {
  switch (kind) {
    case DumpProblemKind::Missing:
      return "missing";
    case DumpProblemKind::Unreadable:
      return "unreadable";
    case DumpProblemKind::ShapeMismatch:
      return "shape mismatch";
    case DumpProblemKind::Rejected:
      return "rejected";
    case DumpProblemKind::NoFile:
      return "no file";
    case DumpProblemKind::BadShape:
      return "bad shape";
    case DumpProblemKind::DtypeMismatch:
      return "dtype mismatch";
  }
  return "unknown";
}

DumpSummary summarise_dump(const RankDump& where, bool check_files) {
  DumpSummary s;
  s.where = where;
  s.files_checked = check_files;
  const Dump dump = Dump::open(where.dump_json);
  s.framework = std::string(to_string(dump.framework()));
  if (!dump.framework_field().empty() && dump.framework() == Framework::Unknown)
    s.framework = dump.framework_field();
  s.task = dump.task();
  s.level = dump.level();
  s.records = dump.entries().size();
  for (const DumpEntry& e : dump.entries()) {
    ++s.by_prefix[e.name.prefix];
    ++s.by_direction[std::string(to_string(e.name.direction))];
    for (const TensorInfo* t : e.tensors()) {
      ++s.tensors;
      ++s.by_dtype[t->dtype_name];
      bool shape_ok = true;
      try {
        if (auto bytes = t->nbytes())
          s.tensor_bytes += *bytes;
        else
          ++s.unsupported_dtype;
      } catch (const Error& err) {
        // One absurd shape is that record's problem, as in run_ut; the rest of the summary stands.
        add_problem(s, DumpProblemKind::BadShape, e, t->field,
                    err.message() + " (dtype " + t->dtype_name + ")");
        shape_ok = false;
      }
      if (t->has_file()) {
        ++s.files_referenced;
        if (check_files) check_file(dump, e, *t, s);
      } else if (s.task == "tensor" && shape_ok && probe::numel(t->shape) != 0) {
        // Empty tensors get no file; run_ut SKIPs the API: a tensor dump is never generated from statistics.
        add_problem(s, DumpProblemKind::NoFile, e, t->field, "tensor dump without data_name for this tensor");
      }
    }
  }
  if (!where.stack_json.empty()) {
    s.has_stack = true;
    try {
      const StackInfo st = StackInfo::open(where.stack_json);
      s.stack_records = st.key_count();
      s.stack_groups = st.groups().size();
    } catch (const Error& e) {
      s.stack_error = e.what();
    }
  }
  if (!where.construct_json.empty()) {
    s.has_construct = true;
    try {
      s.construct_nodes = ConstructInfo::open(where.construct_json).nodes().size();
    } catch (const Error& e) {
      s.construct_error = e.what();
    }
  }
  return s;
}

std::string dump_summaries_json(const std::string& path, const std::vector<DumpSummary>& ranks) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("path");
  write_string(w, path);
  w.Key("ranks");
  w.StartArray();
  for (const DumpSummary& s : ranks) write_rank(w, s);
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace probe
