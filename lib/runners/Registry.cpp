#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "probe/api_name.h"
#include "probe/error.h"
#include "probe/runner.h"
#include "runners/Builtins.h"

namespace probe {

namespace {
// MindTorch dumps name PyTorch APIs; an unknown framework is treated as PyTorch (the common case).
Framework table_of(Framework f) {
  return f == Framework::MindSpore ? Framework::MindSpore : Framework::PyTorch;
}
}  // namespace

namespace {

// Set while with_builtins() registers probe's own runners, whose keys define the known APIs.
thread_local bool t_registering_builtins = false;

// Edit distance counting a swap of neighbours as one edit (optimal string alignment), for the closest
// known key of a misspelt one ("gleu" is one edit from "gelu").
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

void require_known_key(Framework fw, std::string_view api_key);

}  // namespace

struct RunnerRegistry::Impl {
  struct Entry {
    std::shared_ptr<const Runner> runner;
    std::shared_ptr<const Schema> schema;
    bool user = true;  // added by the caller, not by with_builtins(): its failures are not probe's bugs
  };
  std::map<std::tuple<Framework, RunnerRole, std::string>, Entry, std::less<>> entries;

  // Exact key first. An `Aten.<op>.<overload>` without a runner of its own falls back to `Torch.<op>`,
  // then `Tensor.<op>` (aten overloads take the same positional arguments as the Python API; `.out`
  // overloads are excluded because their extra argument is the output buffer).
  const Entry* lookup(Framework fw, RunnerRole role, const std::string& key) const {
    auto it = entries.find(std::make_tuple(table_of(fw), role, key));
    if (it != entries.end()) return &it->second;
    if (table_of(fw) != Framework::PyTorch || key.rfind("Aten.", 0) != 0) return nullptr;
    const std::optional<ApiName> api = parse_api_name(key);
    if (!api) return nullptr;
    const std::string op(api->op());
    if (api->name.size() > op.size() && api->name.compare(op.size() + 1, 3, "out") == 0) return nullptr;
    for (const char* prefix : {"Torch.", "Tensor."}) {
      it = entries.find(std::make_tuple(Framework::PyTorch, role, prefix + op));
      if (it != entries.end()) return &it->second;
    }
    return nullptr;
  }
  // lookup() for running: an API without runner is Unsupported, never a silent pass.
  const Entry& require(Framework fw, RunnerRole role, const std::string& key, std::string_view api) const {
    if (const Entry* e = lookup(fw, role, key)) return *e;
    throw Error(ErrorKind::Unsupported,
                fmt::format("{} has no {} runner ({})", key, role == RunnerRole::Bench ? "bench" : "device",
                            to_string(fw)),
                "", "", std::string(api));
  }
};

RunnerRegistry::RunnerRegistry() : impl_(std::make_shared<Impl>()) {}

namespace {

// ApiKey::Known: a key that no built-in runner has, by key (Aten overloads through their operator) or by
// msprobe's list name under any prefix, is a typo until the caller says it is new.
void require_known_key(Framework fw, std::string_view api_key) {
  const RunnerRegistry builtins = RunnerRegistry::with_builtins();
  if (builtins.find(fw, api_key, RunnerRole::Bench) || builtins.find(fw, api_key, RunnerRole::Device)) return;
  const std::string list_name = api_list_name(api_key);
  std::string closest;
  std::size_t best = std::string::npos;
  for (const std::string& k : builtins.keys(fw)) {
    if (api_list_name(k) == list_name) return;
    const std::size_t d = edit_distance(api_key, k);
    if (d < best) {
      best = d;
      closest = k;
    }
  }
  throw Error(ErrorKind::InvalidArgument,
              fmt::format("no API {} is known to probe (no built-in runner of {} names it){}; register a "
                          "genuinely new API with RunnerRegistry::ApiKey::New",
                          api_key, to_string(fw), closest.empty() ? "" : "; did you mean " + closest + "?"),
              "", "api_key", std::string(api_key));
}

}  // namespace

RunnerRegistry RunnerRegistry::with_builtins() {
  static const RunnerRegistry builtins = [] {
    RunnerRegistry r;
    t_registering_builtins = true;  // the built-in list is what "known" means
    runners::register_builtin_runners(r);
    t_registering_builtins = false;
    for (auto& [key, entry] : r.impl_->entries) entry.user = false;
    return r;
  }();
  return builtins;
}

void RunnerRegistry::add(Framework fw, std::string_view api_key, Runner runner, RunnerRole role, ApiKey key) {
  if (!runner.forward)
    throw Error(ErrorKind::InvalidArgument, fmt::format("runner for {} has no forward function", api_key));
  auto schema = std::make_shared<const Schema>(parse_schema(runner.schema));
  if (key == ApiKey::Known && !t_registering_builtins) require_known_key(fw, api_key);
  // Copies of a registry share their table until one of them changes it.
  if (impl_.use_count() > 1) impl_ = std::make_shared<Impl>(*impl_);
  impl_->entries[{table_of(fw), role, std::string(api_key)}] = {
      std::make_shared<const Runner>(std::move(runner)), schema};
}

namespace {
std::string key_of(std::string_view api) {
  if (auto n = parse_api_name(api)) return n->key();
  return std::string(api);
}
}  // namespace

const Runner* RunnerRegistry::find(Framework fw, std::string_view api, RunnerRole role) const {
  const Impl::Entry* e = impl_->lookup(fw, role, key_of(api));
  return e ? e->runner.get() : nullptr;
}

std::vector<std::string> RunnerRegistry::keys(Framework fw, RunnerRole role) const {
  std::vector<std::string> out;
  for (const auto& [k, e] : impl_->entries)
    if (std::get<0>(k) == table_of(fw) && std::get<1>(k) == role) out.push_back(std::get<2>(k));
  return out;
}

namespace {
std::string runner_label(RunnerRole role, std::string_view key) {
  return fmt::format("the {} runner registered for {}", role == RunnerRole::Bench ? "bench" : "device", key);
}

// probe::Error passes with the API added; anything else thrown by a caller's runner is that runner's
// failure (ErrorKind::Runner), by a built-in one a bug in probe (Internal).
[[noreturn]] void rethrow_with_api(std::string_view api, bool user, RunnerRole role, std::string_view key) {
  try {
    throw;
  } catch (const Error& e) {
    throw e.with_context("", "", api);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    if (user)
      throw Error(ErrorKind::Runner, runner_label(role, key) + " threw: " + e.what(), "", "",
                  std::string(api));
    throw Error(ErrorKind::Internal, e.what(), "", "", std::string(api));
  } catch (...) {
    if (!user) throw;
    throw Error(ErrorKind::Runner, runner_label(role, key) + " threw a non-standard exception", "", "",
                std::string(api));
  }
}

void count_tensors(const Value& v, std::vector<const Tensor*>& out) {
  if (v.is_tensor()) out.push_back(&v.tensor());
  if (v.is_list())
    for (const auto& item : v.list()) count_tensors(item, out);
}

// The ApiResult contract (runner.h) checked for runners the caller added, so that a malformed result is
// reported against its runner instead of surfacing later as a confusing comparison.
void validate_user_result(const ApiResult& r, RunnerRole role, std::string_view key, std::string_view api) {
  auto bad = [&](const std::string& what) {
    throw Error(ErrorKind::Runner, runner_label(role, key) + " returned " + what, "", "", std::string(api));
  };
  if (r.outputs.empty()) bad("no outputs");
  std::vector<const Tensor*> tensors;
  for (const auto& v : r.outputs) count_tensors(v, tensors);
  if (r.device_dtypes.size() != tensors.size())
    bad(fmt::format("{} tensors but {} device_dtypes (one per tensor, depth-first)", tensors.size(),
                    r.device_dtypes.size()));
  if (role == RunnerRole::Bench)
    for (std::size_t i = 0; i < tensors.size(); ++i)
      if (is_floating(tensors[i]->dtype()) && tensors[i]->dtype() != DType::Float64)
        bad(fmt::format("a {} tensor as output tensor {}; bench runners return floating data as float64",
                        name(tensors[i]->dtype()), i));
}
}  // namespace

ApiResult RunnerRegistry::run_forward(Framework fw, std::string_view api, const ApiCall& call,
                                      RunnerRole role) const {
  const std::string key = key_of(api);
  const Impl::Entry* it = &impl_->require(fw, role, key, api);
  ApiResult result;
  try {
    BoundArgs a = bind(it->schema, call);
    result = it->runner->forward(a);
  } catch (...) {
    rethrow_with_api(api, it->user, role, key);
  }
  if (it->user) validate_user_result(result, role, key, api);
  return result;
}

namespace {
// A runner's gradients (one Value per schema parameter) as InputGradients named by dump path, in the
// order the call lists its tensors: positional first, then keyword arguments.
std::vector<InputGradient> order_gradients(const BoundArgs& a, const ApiCall& call,
                                           std::vector<Value> grads) {
  struct Item {
    bool kw;
    std::size_t pos;
    InputGradient g;
  };
  std::vector<Item> items;
  auto kw_pos = [&](const std::string& name) {
    for (std::size_t i = 0; i < call.kwargs.size(); ++i)
      if (call.kwargs[i].first == name) return i;
    return call.kwargs.size();
  };
  for (std::size_t i = 0; i < a.size() && i < grads.size(); ++i) {
    const std::string& origin = a.origin(i);
    if (origin.empty()) continue;
    const bool kw = origin.rfind("kwargs.", 0) == 0;
    const std::size_t pos = kw ? kw_pos(origin.substr(7)) : std::stoul(origin.substr(6));
    const Value& in = a.at(i);
    if (grads[i].is_tensor() && in.is_tensor()) {
      items.push_back({kw, pos, {origin, grads[i].tensor(), in.tensor().dtype()}});
    } else if (grads[i].is_list() && in.is_list()) {
      // `Tensor... xs` passed as separate positional arguments: element j is input.<pos + j>.
      const bool spread = a.schema().params[i].varargs && !kw && !call.args[pos].is_list();
      for (std::size_t j = 0; j < grads[i].list().size() && j < in.list().size(); ++j)
        if (grads[i].list()[j].is_tensor() && in.list()[j].is_tensor())
          items.push_back({kw,
                           spread ? pos + j : pos,
                           {spread ? "input." + std::to_string(pos + j) : origin + "." + std::to_string(j),
                            grads[i].list()[j].tensor(), in.list()[j].tensor().dtype()}});
    }
  }
  std::stable_sort(items.begin(), items.end(), [](const Item& x, const Item& y) {
    return std::tie(x.kw, x.pos) < std::tie(y.kw, y.pos);
  });
  std::vector<InputGradient> out;
  for (auto& it2 : items) out.push_back(std::move(it2.g));
  return out;
}

[[noreturn]] void not_differentiable(const std::string& key, std::string_view api) {
  throw Error(ErrorKind::Unsupported, fmt::format("{} is not differentiable in probe", key), "", "",
              std::string(api));
}
}  // namespace

std::vector<InputGradient> RunnerRegistry::run_backward(Framework fw, std::string_view api,
                                                        const ApiCall& call,
                                                        const std::vector<Value>& grad_outputs,
                                                        RunnerRole role) const {
  const std::string key = key_of(api);
  const Impl::Entry* it = &impl_->require(fw, role, key, api);
  if (!it->runner->backward && role == RunnerRole::Device && it->user) {
    // DECISIONS D22: a caller's device runner without a backward (a forward-only operator library) borrows
    // the built-in device backward of its API, so the backward is still checked (runner.h).
    static const RunnerRegistry builtins = with_builtins();
    if (const Impl::Entry* b = builtins.impl_->lookup(fw, role, key); b && b->runner->backward) it = b;
  }
  if (!it->runner->backward) not_differentiable(key, api);
  try {
    BoundArgs a = bind(it->schema, call);
    return order_gradients(a, call, it->runner->backward(a, grad_outputs));
  } catch (...) {
    rethrow_with_api(api, it->user, role, key);
  }
}

std::vector<InputGradient> TapedCall::backward(const std::vector<Value>& grad_outputs) const {
  return backward_(grad_outputs);
}

TapedCall RunnerRegistry::run_forward_taped(Framework fw, std::string_view api, const ApiCall& call,
                                            RunnerRole role) const {
  const std::string key = key_of(api);
  const Impl::Entry* it = &impl_->require(fw, role, key, api);
  const std::shared_ptr<const Runner> runner = it->runner;
  TapedCall out;
  if (!runner->taped_forward || !runner->backward) {  // forward now, and the whole backward later
    out.result_ = run_forward(fw, api, call, role);
    out.backward_ = [reg = *this, fw, api = std::string(api), call, role](const std::vector<Value>& g) {
      return reg.run_backward(fw, api, call, g, role);
    };
    return out;
  }
  try {
    auto args = std::make_shared<const BoundArgs>(bind(it->schema, call));
    Runner::Taped taped = runner->taped_forward(*args);
    out.result_ = std::move(taped.result);
    out.backward_ = [api = std::string(api), call, args, runner, user = it->user, role, key,
                     vjp = std::move(taped.backward)](const std::vector<Value>& g) {
      try {
        return order_gradients(*args, call, vjp(g));
      } catch (...) {
        rethrow_with_api(api, user, role, key);
      }
    };
  } catch (...) {
    rethrow_with_api(api, it->user, role, key);
  }
  if (it->user) validate_user_result(out.result_, role, key, api);
  return out;
}

std::string runners_markdown(const RunnerRegistry& reg) {
  std::string out = "| framework | API | schema | forward | backward | device |\n|---|---|---|---|---|---|\n";
  for (Framework fw : {Framework::PyTorch, Framework::MindSpore}) {
    for (const std::string& key : reg.keys(fw)) {
      const Runner* r = reg.find(fw, key);
      std::string schema = r->schema;
      for (std::size_t p = schema.find('|'); p != std::string::npos; p = schema.find('|', p + 2))
        schema.replace(p, 1, "\\|");
      out += fmt::format("| {} | `{}` | `{}` | yes | {} | {} |\n", to_string(fw), key, schema,
                         r->backward ? "yes" : "no",
                         reg.find(fw, key, RunnerRole::Device) ? "emulated" : "none");
    }
  }
  return out;
}

}  // namespace probe
