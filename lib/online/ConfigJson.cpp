// config.json's online pre-check keys: the server's `run_ut` section (probe run_ut --online) and the
// training side's `tensor` section (probe replay), read by one section reader so that both name the file
// and the field the same way.
#include <rapidjson/document.h>

#include <optional>

#include "probe/error.h"
#include "probe/online_client.h"
#include "probe/online_server.h"
#include "support/FileOps.h"
#include "support/JsonDocument.h"

namespace probe::online {
namespace {

// One object of config.json: typed keys, a null or missing key is unset, a key of another type is a format
// error naming "<section>.<key>".
class Section {
 public:
  Section(const rapidjson::Document& doc, const std::string& path, const char* name)
      : path_(path), name_(name) {
    const rapidjson::Value& root = doc;
    if (!root.IsObject()) throw Error(ErrorKind::Format, "config.json must be a JSON object", path);
    if (!root.HasMember(name)) return;
    s_ = &root[name];
    if (!s_->IsObject()) throw Error(ErrorKind::Format, "must be an object", path, name);
  }
  bool present() const { return s_ != nullptr; }
  const rapidjson::Value* field(const char* key) const {
    return s_ && s_->HasMember(key) && !(*s_)[key].IsNull() ? &(*s_)[key] : nullptr;
  }
  [[noreturn]] void fail(const char* key, const std::string& what) const {
    throw Error(ErrorKind::Format, what, path_, name_ + "." + key);
  }
  void text(const char* key, std::string& out) const {
    if (const auto* v = field(key)) {
      if (!v->IsString()) fail(key, "must be a string");
      out = v->GetString();
    }
  }
  void flag(const char* key, bool& out) const {
    if (const auto* v = field(key)) {
      if (!v->IsBool()) fail(key, "must be true or false");
      out = v->GetBool();
    }
  }
  // msprobe writes -1 for "not set".
  void port(std::optional<int>& out) const {
    if (const auto* v = field("port")) {
      if (!v->IsInt() || v->GetInt() < -1 || v->GetInt() > 65535)
        fail("port", "must be an integer port in 0..65535 (-1: not set)");
      if (v->GetInt() >= 0) out = v->GetInt();
    }
  }
  std::optional<std::uint64_t> positive(const char* key) const {
    const auto* v = field(key);
    if (!v) return std::nullopt;
    if (!v->IsUint64() || v->GetUint64() == 0) fail(key, "must be an integer >= 1");
    return v->GetUint64();
  }

 private:
  const std::string& path_;
  std::string name_;
  const rapidjson::Value* s_ = nullptr;
};

rapidjson::Document read_config(const std::string& path) {
  const std::string text = probe::detail::read_whole_file(path, "cannot read config.json");
  return probe::detail::parse_json_document(text, path);
}

}  // namespace

OnlineConfig load_online_config(const std::string& path) {
  const rapidjson::Document doc = read_config(path);
  const Section s(doc, path, "run_ut");
  OnlineConfig c;
  if (!s.present()) return c;
  s.flag("is_online", c.is_online);
  s.text("host", c.host);
  s.text("nfs_path", c.nfs_path);
  s.text("tls_path", c.tls_path);
  s.port(c.port);
  if (auto n = s.positive("max_connections")) c.max_connections = static_cast<std::size_t>(*n);
  c.max_connection_bytes = s.positive("max_connection_bytes");
  c.max_buffered_bytes = s.positive("max_buffered_bytes");
  c.max_outstanding_bytes = s.positive("max_outstanding_bytes");
  if (const auto* v = s.field("rank_list")) {
    if (!v->IsArray()) s.fail("rank_list", "must be a list of ranks");
    c.rank_list.clear();
    for (const auto& r : v->GetArray()) {
      if (!r.IsUint64()) s.fail("rank_list", "ranks must be integers >= 0");
      c.rank_list.push_back(r.GetUint64());
    }
  }
  return c;
}

OnlineClientConfig load_online_client_config(const std::string& path) {
  const rapidjson::Document doc = read_config(path);
  const Section s(doc, path, "tensor");
  OnlineClientConfig c;
  s.flag("online_run_ut", c.online_run_ut);
  s.text("host", c.host);
  s.text("nfs_path", c.nfs_path);
  s.text("tls_path", c.tls_path);
  s.port(c.port);
  return c;
}

}  // namespace probe::online
