// config.json's training-side keys of online pre-check (the `tensor` section), read for `probe replay`.
#include <rapidjson/document.h>

#include "probe/error.h"
#include "probe/online_client.h"
#include "support/FileOps.h"
#include "support/JsonDocument.h"

namespace probe::online {

OnlineClientConfig load_online_client_config(const std::string& path) {
  const std::string text = probe::detail::read_whole_file(path, "cannot read config.json");
  const rapidjson::Document doc = probe::detail::parse_json_document(text, path);
  const rapidjson::Value& root = doc;
  if (!root.IsObject()) throw Error(ErrorKind::Format, "config.json must be a JSON object", path);
  OnlineClientConfig c;
  if (!root.HasMember("tensor")) return c;
  const rapidjson::Value& s = root["tensor"];
  if (!s.IsObject()) throw Error(ErrorKind::Format, "must be an object", path, "tensor");
  auto field = [&](const char* key) -> const rapidjson::Value* {
    return s.HasMember(key) && !s[key].IsNull() ? &s[key] : nullptr;
  };
  auto text_of = [&](const char* key, std::string& out) {
    if (const auto* v = field(key)) {
      if (!v->IsString())
        throw Error(ErrorKind::Format, "must be a string", path, std::string("tensor.") + key);
      out = v->GetString();
    }
  };
  if (const auto* v = field("online_run_ut")) {
    if (!v->IsBool()) throw Error(ErrorKind::Format, "must be true or false", path, "tensor.online_run_ut");
    c.online_run_ut = v->GetBool();
  }
  text_of("host", c.host);
  text_of("nfs_path", c.nfs_path);
  text_of("tls_path", c.tls_path);
  if (const auto* v = field("port")) {
    if (!v->IsInt() || v->GetInt() < -1 || v->GetInt() > 65535)
      throw Error(ErrorKind::Format, "must be an integer port in 0..65535 (-1: not set)", path,
                  "tensor.port");
    if (v->GetInt() >= 0) c.port = v->GetInt();
  }
  return c;
}

}  // namespace probe::online
