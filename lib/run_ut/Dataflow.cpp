// DECISIONS D16: the dataflow of a tensor dump and the check of the gradient flowing into a linked tensor.
#include "run_ut/Dataflow.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "probe/api_name.h"
#include "probe/error.h"
#include "probe/error_bound.h"
#include "runners/Autograd.h"
#include "standards/ErrorBound.h"

namespace probe::rut {

std::optional<std::string> reshape_node(const std::string& api_name, std::int64_t rank0, std::int64_t rank1) {
  // torch.matmul is one mm only for 2-D @ 2-D; otherwise it reshapes, and the node is the reshape.
  if ((api_name == "matmul" || api_name == "__matmul__" || api_name == "__rmatmul__") &&
      !(rank0 == 2 && rank1 == 2))
    return "at the reshape inside matmul (inputs of " + std::to_string(rank0) + " and " +
           std::to_string(rank1) + " dimensions)";
  // F.linear is addmm/mm on the transposed weight for a 2-D input, a reshape around it otherwise.
  if (api_name == "linear" && rank0 != 2)
    return "at the reshape inside linear (a " + std::to_string(rank0) + "-D input)";
  return std::nullopt;
}

std::optional<std::string> composite_backward_reason(const std::string& api_name, std::int64_t rank0,
                                                     std::int64_t rank1, const std::string& full) {
  static const std::vector<std::string> kComposite = {"cross_entropy",
                                                      "l1_loss",
                                                      "kl_div",
                                                      "margin_ranking_loss",
                                                      "hinge_embedding_loss",
                                                      "cosine_embedding_loss",
                                                      "multilabel_soft_margin_loss",
                                                      "gaussian_nll_loss",
                                                      "poisson_nll_loss",
                                                      "triplet_margin_loss",
                                                      "triplet_margin_with_distance_loss",
                                                      "instance_norm",
                                                      "local_response_norm",
                                                      "multi_head_attention_forward",
                                                      "bilinear",
                                                      "einsum",
                                                      "tensordot",
                                                      "chain_matmul",
                                                      "linalg.multi_dot",
                                                      "normalize",
                                                      "pairwise_distance",
                                                      "cosine_similarity",
                                                      "cdist",
                                                      "softmin"};
  auto taken_inside = [&](const std::string& why) {
    return "the dumped gradient of " + full + " is taken " + why +
           ", not with respect to its inputs; backward not compared";
  };
  if (std::find(kComposite.begin(), kComposite.end(), api_name) != kComposite.end())
    return taken_inside("at the last autograd operation inside " + api_name);
  if (auto where = reshape_node(api_name, rank0, rank1)) return taken_inside(*where);
  return std::nullopt;
}

namespace {

// Euclidean norms of the rows ([rows, cols] row-major, along cols) or of the columns.
std::vector<double> norms(const double* p, std::int64_t rows, std::int64_t cols, bool of_rows) {
  std::vector<double> out(static_cast<std::size_t>(of_rows ? rows : cols), 0.0);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      const double v = p[r * cols + c];
      out[static_cast<std::size_t>(of_rows ? r : c)] += v * v;
    }
  for (double& v : out) v = std::sqrt(v);
  return out;
}

// The input gradient of a GEMM-shaped API computed as one float64 GEMM per batch, without the forward and
// the other operand's gradient that a runner's backward also computes, and its magnitude by D14's
// Cauchy-Schwarz bound (row norms times column norms) instead of a second GEMM. Covers linear (any rank of
// the input) and matmul of an N-D by a 2-D tensor or of two tensors of one batch shape; nullopt otherwise.
std::optional<BenchInputGradient> gemm_input_gradient(const std::string& op, const ApiCall& call,
                                                      const std::vector<Value>& grads_in,
                                                      const std::string& path) {
  const bool linear = op == "linear";
  if (!linear && op != "matmul" && op != "__matmul__") return std::nullopt;
  if (call.args.size() < 2 || !call.args[0].is_tensor() || !call.args[1].is_tensor() || grads_in.empty() ||
      !grads_in[0].is_tensor() || (path != "input.0" && path != "input.1"))
    return std::nullopt;
  const Tensor &a = call.args[0].tensor(), &b = call.args[1].tensor(), &g = grads_in[0].tensor();
  if (a.ndim() < 2 || b.ndim() < 2) return std::nullopt;
  const bool first = path == "input.0";
  // Each GEMM as batches of [m, k] x [k, n] (linear: b is W [n, k]).
  std::int64_t batches = 1, m = 0, k = a.shape().back(), n = 0;
  if (linear || b.ndim() == 2) {
    if (b.ndim() != 2) return std::nullopt;
    m = a.numel() / std::max<std::int64_t>(k, 1);
    n = linear ? b.shape()[0] : b.shape()[1];
    if ((linear ? b.shape()[1] : b.shape()[0]) != k) return std::nullopt;
  } else {
    if (a.ndim() != b.ndim()) return std::nullopt;
    for (int d = 0; d + 2 < a.ndim(); ++d) {
      if (a.shape()[static_cast<std::size_t>(d)] != b.shape()[static_cast<std::size_t>(d)])
        return std::nullopt;
      batches *= a.shape()[static_cast<std::size_t>(d)];
    }
    m = a.shape()[a.shape().size() - 2];
    n = b.shape().back();
    if (b.shape()[b.shape().size() - 2] != k) return std::nullopt;
  }
  if ((linear && !first) || g.numel() != batches * m * n) return std::nullopt;  // linear's dW: the runner
  const std::vector<double> av = a.to_doubles(), bv = b.to_doubles(), gv = g.to_doubles();
  BenchInputGradient out;
  std::vector<double> grad, mag;
  if (first) {
    // dA[m, k] = G[m, n] op(B): linear's W is [n, k] already; matmul's B [k, n] is used transposed.
    grad.assign(static_cast<std::size_t>(batches * m * k), 0.0);
    mag.assign(grad.size(), 0.0);
    for (std::int64_t t = 0; t < batches; ++t) {
      const double* gp = gv.data() + t * m * n;
      const double* bp = bv.data() + (linear || b.ndim() == 2 ? 0 : t * k * n);
      runners::gemm(gp, bp, grad.data() + t * m * k, m, n, k, false, !linear);
      const std::vector<double> gr = norms(gp, m, n, true);
      const std::vector<double> bn = linear ? norms(bp, n, k, false) : norms(bp, k, n, true);
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < k; ++j)
          mag[static_cast<std::size_t>(t * m * k + i * k + j)] =
              gr[static_cast<std::size_t>(i)] * bn[static_cast<std::size_t>(j)];
    }
    out.accumulation = n;
    out.grad = Tensor::from_values<double>(grad, a.shape());
  } else {
    // matmul's dB[k, n] = A^T G, summed over the flattened rows of an N-D A against a 2-D B.
    // An N-D A against a 2-D B was flattened to one batch of m rows above.
    const std::int64_t mm = m, bb = batches;
    grad.assign(static_cast<std::size_t>(bb * k * n), 0.0);
    mag.assign(grad.size(), 0.0);
    for (std::int64_t t = 0; t < bb; ++t) {
      const double* ap = av.data() + t * mm * k;
      const double* gp = gv.data() + t * mm * n;
      runners::gemm(ap, gp, grad.data() + t * k * n, k, mm, n, true, false);
      const std::vector<double> ac = norms(ap, mm, k, false), gc = norms(gp, mm, n, false);
      for (std::int64_t i = 0; i < k; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          mag[static_cast<std::size_t>(t * k * n + i * n + j)] =
              ac[static_cast<std::size_t>(i)] * gc[static_cast<std::size_t>(j)];
    }
    out.accumulation = mm;
    out.grad = Tensor::from_values<double>(grad, b.shape());
  }
  out.magnitude = Tensor::from_values<double>(mag, out.grad.shape());
  return out;
}

}  // namespace

BenchInputGradient bench_input_gradient(const RunnerRegistry& registry, Framework framework,
                                        const std::string& runner_api, const ApiCall& call,
                                        const std::vector<Value>& grads_in, const std::string& path) {
  const detail::BoundFamily* fam = detail::bound_family(runner_api);
  const auto parsed = parse_api_name(runner_api);
  if (fam && parsed)
    if (auto fast = gemm_input_gradient(parsed->name, call, grads_in, path)) {
      fast->own_ulps = fam->own_ulps;
      fast->family = std::string(fam->name);
      return std::move(*fast);
    }
  auto find = [&](const std::vector<InputGradient>& gs) -> const InputGradient* {
    for (const auto& g : gs)
      if (g.path == path) return &g;
    return nullptr;
  };
  const std::vector<InputGradient> bench = registry.run_backward(framework, runner_api, call, grads_in);
  const InputGradient* g = find(bench);
  if (!g) throw Error(ErrorKind::Unsupported, "the bench has no gradient for " + path, "", path, runner_api);
  const detail::BoundFamily* family = detail::bound_family(runner_api);
  if (!family)
    throw Error(ErrorKind::Unsupported, "D14 has no error bound for this API's gradient", "", path,
                runner_api);
  BenchInputGradient out;
  out.grad = g->grad;
  out.own_ulps = family->own_ulps;
  out.family = std::string(family->name);
  if (detail::takes_magnitude(family->magnitude)) {
    const std::vector<InputGradient> mag =
        error_bound_grad_magnitude(registry, framework, runner_api, call, grads_in);
    const InputGradient* m = find(mag);
    if (!m)
      throw Error(ErrorKind::Unsupported, "no magnitude bench for the gradient of " + path, "", path,
                  runner_api);
    out.magnitude = m->grad;
  }
  if (grads_in.empty() || !grads_in[0].is_tensor())
    throw Error(ErrorKind::Unsupported, "no gradient of the first output", "", "backward.input.0",
                runner_api);
  out.accumulation =
      error_bound_grad_accumulation(runner_api, call, grads_in[0].tensor().shape(), out.grad.shape());
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;

std::string stat_key(const Statistic& s) {
  switch (s.kind) {
    case Statistic::Kind::Absent:
      return "-";
    case Statistic::Kind::Null:
      return "n";
    case Statistic::Kind::Bool:
      return s.b ? "t" : "f";
    case Statistic::Kind::Int:
      return std::to_string(s.i);
    case Statistic::Kind::Float:
      return fmt::format("{}", s.d);
  }
  return "-";
}

// Tensors with equal bytes have equal dtype, shape and statistics (msprobe computes them from the data),
// so only tensors with equal keys are hashed and compared.
std::string tensor_key(const TensorInfo& t) {
  std::string k = t.dtype_name + "|";
  for (auto d : t.shape) k += std::to_string(d) + ",";
  return k + "|" + stat_key(t.max) + "|" + stat_key(t.min) + "|" + stat_key(t.mean) + "|" + stat_key(t.norm);
}

// 64-bit hash of a tensor's bytes, eight bytes at a time (a multiply-rotate mix): files are compared by
// it, never byte for byte, and it runs at memory speed.
std::uint64_t bytes_hash(const std::byte* p, std::size_t n) {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  std::uint64_t h = 0x243F6A8885A308D3ull ^ n;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ (w * kMul)) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, p + i, n - i);
  h = (h ^ (tail * kMul)) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 32);
}

// Tensor descriptors of a dumped argument tree with their positional paths ("input.1.0").
void walk(const DumpNode& node, const std::string& path,
          std::vector<std::pair<std::string, const TensorInfo*>>& out, int depth = 0) {
  if (depth > 64) return;
  if (node.is_tensor()) {
    out.emplace_back(path, &node.tensor());
  } else if (node.kind() == DumpNode::Kind::List) {
    const auto& items = node.items();
    for (std::size_t i = 0; i < items.size(); ++i)
      walk(items[i], path + "." + std::to_string(i), out, depth + 1);
  }
}

std::int64_t rank_of(const DumpEntry& e, std::size_t i) {
  const DumpNode* in = e.inputs();
  if (!in || in->kind() != DumpNode::Kind::List || i >= in->items().size() || !in->items()[i].is_tensor())
    return -1;
  return static_cast<std::int64_t>(in->items()[i].tensor().shape.size());
}

Status combine(Status a, Status b) {
  if (a == Status::Skip) return b;
  if (b == Status::Skip) return a;
  return std::max(a, b);
}

}  // namespace

struct Dataflow::Slot {
  std::size_t api = 0;
  std::string path;  // "input.0", "input.1.2", "kwargs.weight", "output.0"
  const TensorInfo* info = nullptr;
  bool output = false;
  std::string key;
  std::optional<std::uint64_t> hash;
};

struct Dataflow::Group {
  std::size_t producer = 0, output = 0;  // forward index, output index
  Shape shape;
  struct Consumer {
    std::size_t api;
    std::string path;
    bool unknown;  // the consumer's dumped gradient is not with respect to its inputs
  };
  std::vector<Consumer> consumers;
  std::string skip;  // non-empty: the tensor cannot be checked, and why
  // Non-empty: a later input of this tensor's dtype and shape that no API in the dump produced (an
  // operation outside the dump made it, and may have consumed this tensor too).
  std::string outside;
};

Dataflow::Dataflow(const Dump& dump, const std::vector<std::pair<std::string, const DumpEntry*>>& forward,
                   const std::vector<std::pair<std::string, const DumpEntry*>>& backward,
                   const RunnerRegistry& registry, Framework framework)
    : dump_(dump), registry_(registry), framework_(framework), forward_(forward) {
  const auto t0 = Clock::now();
  for (const auto& [name, e] : backward) backward_.emplace(name, e);
  const std::size_t n = forward_.size();
  // The APIs whose dumped gradient is not with respect to their inputs.
  std::vector<bool> unknown(n, false);
  std::vector<std::string> names(n);
  for (std::size_t a = 0; a < n; ++a) {
    const auto parsed = parse_api_name(forward_[a].first);
    if (!parsed) continue;
    names[a] = parsed->name;
    unknown[a] = composite_backward_reason(parsed->name, rank_of(*forward_[a].second, 0),
                                           rank_of(*forward_[a].second, 1), forward_[a].first)
                     .has_value();
  }
  // Every tensor slot of every forward entry, in dump order.
  std::vector<Slot> slots;
  std::vector<std::vector<std::size_t>> inputs_of(n);
  for (std::size_t a = 0; a < n; ++a) {
    const DumpEntry& e = *forward_[a].second;
    std::vector<std::pair<std::string, const TensorInfo*>> found;
    if (const DumpNode* in = e.inputs(); in && in->kind() == DumpNode::Kind::List)
      for (std::size_t i = 0; i < in->items().size(); ++i)
        walk(in->items()[i], "input." + std::to_string(i), found);
    if (const DumpNode* kw = e.kwargs(); kw && kw->kind() == DumpNode::Kind::Dict)
      for (const auto& [k, node] : kw->members()) walk(node, "kwargs." + k, found);
    const std::size_t first_output = found.size();
    if (const DumpNode* out = e.outputs(); out && out->kind() == DumpNode::Kind::List)
      for (std::size_t j = 0; j < out->items().size(); ++j)
        if (out->items()[j].is_tensor())
          found.emplace_back("output." + std::to_string(j), &out->items()[j].tensor());
    for (std::size_t s = 0; s < found.size(); ++s) {
      Slot slot;
      slot.api = a;
      slot.path = found[s].first;
      slot.info = found[s].second;
      slot.output = s >= first_output;
      slot.key = tensor_key(*slot.info);
      if (!slot.output) inputs_of[a].push_back(slots.size());
      slots.push_back(std::move(slot));
    }
  }
  // Copies: a move, copy or cast to the same dtype (input.0 and output.0 of one dtype and shape). The
  // gradient passes through them unchanged, so a copy's output is its input here: it takes the input's
  // key and hash, and the consumers of either are the consumers of the first producer of those bytes.
  // A copy whose output differs from its input (its own row reports that, D15) leaves the tensor unchecked.
  std::vector<int> copy(n, 0);  // 1: a copy, 2: a detach (its consumers pass no gradient back)
  std::vector<bool> changed(n, false);
  std::vector<std::pair<std::size_t, std::size_t>> aliases;  // (input.0 slot, output.0 slot)
  for (std::size_t a = 0; a < n; ++a) {
    static const std::vector<std::string> kCopies = {"contiguous", "clone", "to",       "type",   "type_as",
                                                     "float",      "half",  "bfloat16", "double", "cpu",
                                                     "cuda",       "npu",   "detach"};
    if (std::find(kCopies.begin(), kCopies.end(), names[a]) == kCopies.end() || inputs_of[a].empty())
      continue;
    const std::size_t in = inputs_of[a][0];
    if (slots[in].path != "input.0") continue;
    for (std::size_t o = in + 1; o < slots.size() && slots[o].api == a; ++o)
      if (slots[o].output && slots[o].path == "output.0" &&
          slots[o].info->dtype_name == slots[in].info->dtype_name &&
          slots[o].info->shape == slots[in].info->shape) {
        copy[a] = names[a] == "detach" ? 2 : 1;
        changed[a] = slots[o].key != slots[in].key;
        slots[o].key = slots[in].key;
        aliases.emplace_back(in, o);
      }
  }
  // The keys worth hashing: an unknown consumer's input that requires grad and that some earlier output
  // could be.
  std::map<std::string, std::size_t> first_output_api;  // key -> earliest API with such an output
  for (const Slot& s : slots)
    if (s.output) first_output_api.emplace(s.key, s.api);
  std::map<std::string, bool> needed;
  for (const Slot& s : slots) {
    if (s.output || !unknown[s.api] || s.path.rfind("input.", 0) != 0) continue;
    const bool grad = s.info->requires_grad.value_or(s.info->dtype && is_floating(*s.info->dtype));
    auto it = first_output_api.find(s.key);
    if (grad && it != first_output_api.end() && it->second < s.api) needed[s.key] = true;
  }
  // Hash each such file once. A copy's output then takes its input's hash; one whose bytes differ from its
  // input's changed the data.
  for (Slot& s : slots) {
    if (!needed.count(s.key) || !s.info->has_file() || !s.info->dtype) continue;
    try {
      const Tensor t = dump_.load_tensor(*forward_[s.api].second, *s.info);
      s.hash = t.nbytes() ? bytes_hash(t.bytes(), t.nbytes()) : 0;
      ++stats_.tensors_hashed;
      stats_.bytes_hashed += t.nbytes();
    } catch (const std::exception&) {
      // An unreadable file links nothing; the API's own row reports the file.
    }
  }
  for (const auto& [in, o] : aliases) {
    if (slots[in].hash && slots[o].hash && *slots[in].hash != *slots[o].hash) changed[slots[o].api] = true;
    slots[o].hash = slots[in].hash;
  }
  auto same_bytes = [&](const Slot& a, const Slot& b) {
    return a.hash && b.hash && a.key == b.key && *a.hash == *b.hash;
  };
  // Link every hashed input to the producer of its bytes.
  std::map<std::pair<std::string, std::uint64_t>, std::vector<std::size_t>> producers;  // in dump order
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> group_of;                  // (api, output j)
  std::vector<std::pair<std::size_t, std::size_t>> links;      // input slot -> output slot
  std::vector<std::pair<std::size_t, std::string>> ambiguous;  // input slot, why
  std::size_t next = 0;  // slots are in dump order: outputs of earlier APIs are registered first
  for (std::size_t si = 0; si < slots.size(); ++si) {
    const Slot& s = slots[si];
    for (; next < slots.size() && slots[next].api < s.api; ++next)
      if (slots[next].output && slots[next].hash)
        producers[{slots[next].key, *slots[next].hash}].push_back(next);
    if (s.output || !s.hash) continue;
    auto it = producers.find({s.key, *s.hash});
    if (it == producers.end()) continue;
    const std::vector<std::size_t>& cands = it->second;
    // Back over the copies to the producer they copy; then the latest producer wins when it computed its
    // output from a tensor with the same bytes (relu of a positive tensor); any other earlier producer of
    // the same bytes, or a detached copy among them, makes the link ambiguous.
    std::size_t k = cands.size() - 1;
    bool detached = false;
    std::string altered;
    for (std::size_t c = k;; --c) {
      const std::size_t a = slots[cands[c]].api;
      if (!copy[a]) break;
      detached |= copy[a] == 2;
      if (changed[a]) altered = forward_[a].first;
      if (c == 0) break;
      k = c - 1;
    }
    const std::size_t root = cands[k];
    bool from_same = false;
    for (std::size_t in : inputs_of[slots[root].api]) from_same |= same_bytes(slots[in], s);
    bool others = false;
    for (std::size_t c = 0; c < k; ++c) others |= !from_same || slots[cands[c]].api == slots[root].api;
    for (std::size_t c = k + 1; c < cands.size(); ++c) others |= slots[cands[c]].api == slots[root].api;
    if (!altered.empty()) {
      ambiguous.emplace_back(si, forward_[s.api].first + " " + s.path + " has the bytes of the input of " +
                                     altered +
                                     ", a copy whose output differs from them (its own row reports "
                                     "that, D15), so it is linked to none");
      ++stats_.ambiguous;
      continue;
    }
    if (others || detached || copy[slots[root].api] == 2) {
      std::string why = forward_[s.api].first + " " + s.path + " has the bytes of several earlier outputs (";
      for (std::size_t c = 0; c < cands.size(); ++c)
        why += (c ? ", " : "") + forward_[slots[cands[c]].api].first + " " + slots[cands[c]].path;
      ambiguous.emplace_back(
          si, why + (detached ? ", a detached copy among them" : "") + "), so it is linked to none");
      ++stats_.ambiguous;
      continue;
    }
    links.emplace_back(si, root);
    ++stats_.links;
  }
  // DECISIONS D16: inputs that require grad and that no earlier output of the dump can be (by dtype, shape
  // and statistics, so without reading a file): operations outside the dump made them.
  std::vector<std::size_t> orphans;
  for (std::size_t si = 0; si < slots.size(); ++si) {
    const Slot& s = slots[si];
    if (s.output || !s.info->dtype || !is_floating(*s.info->dtype)) continue;
    if (!s.info->requires_grad.value_or(true)) continue;
    auto it = first_output_api.find(s.key);
    if (it == first_output_api.end() || it->second >= s.api) orphans.push_back(si);
  }
  // One group per linked tensor an unknown consumer takes.
  for (const auto& [in, out] : links) {
    const Slot& s = slots[in];
    if (!unknown[s.api] || s.path.rfind("input.", 0) != 0) continue;
    const bool grad = s.info->requires_grad.value_or(true);
    if (!grad) continue;
    const std::size_t j = std::stoul(slots[out].path.substr(7));
    auto [git, fresh] = group_of.emplace(std::pair{slots[out].api, j}, groups_.size());
    if (fresh) {
      Group g;
      g.producer = slots[out].api;
      g.output = j;
      g.shape = slots[out].info->shape;
      groups_.push_back(std::move(g));
    }
  }
  for (const auto& [in, out] : links) {
    const Slot& s = slots[in];
    const std::size_t j = std::stoul(slots[out].path.substr(7));
    auto git = group_of.find({slots[out].api, j});
    if (git == group_of.end()) continue;
    Group& g = groups_[git->second];
    if (g.outside.empty())
      for (std::size_t o : orphans)
        if (slots[o].api > g.producer && slots[o].info->dtype_name == slots[out].info->dtype_name &&
            slots[o].info->shape == g.shape) {
          g.outside = forward_[slots[o].api].first + " " + slots[o].path;
          break;
        }
    if (copy[s.api] == 1) continue;          // passes the gradient of its output, whose consumers are counted
    if (names[s.api] == "detach") continue;  // passes no gradient back
    if (s.path.rfind("kwargs.", 0) == 0) {
      g.skip = forward_[s.api].first + " takes it as the keyword argument " + s.path.substr(7) +
               ", whose gradient the dump does not map";
      continue;
    }
    g.consumers.push_back({s.api, s.path, unknown[s.api]});
  }
  // An ambiguous input may be a consumer of any of its candidates: their sums are then unknown.
  for (const auto& [in, why] : ambiguous) {
    const Slot& s = slots[in];
    auto it = producers.find({s.key, *s.hash});
    for (std::size_t c : it->second) {
      const std::size_t j = std::stoul(slots[c].path.substr(7));
      auto git = group_of.find({slots[c].api, j});
      if (git != group_of.end() && groups_[git->second].skip.empty()) groups_[git->second].skip = why;
    }
    if (unknown[s.api]) notes_[forward_[s.api].first].push_back(why);
  }
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    std::vector<std::string> seen;
    for (const auto& c : groups_[gi].consumers) {
      const std::string& name = forward_[c.api].first;
      if (!c.unknown || std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
      seen.push_back(name);
      reports_[name].push_back(gi);
    }
  }
  stats_.checked_tensors = groups_.size();
  stats_.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
}

Dataflow::~Dataflow() = default;

std::optional<DataflowVerdict> Dataflow::verdict(const std::string& full,
                                                 const DataflowAccess& access) const {
  auto rit = reports_.find(full);
  auto nit = notes_.find(full);
  if (rit == reports_.end() && nit == notes_.end()) return std::nullopt;
  DataflowVerdict out;
  std::vector<std::string> parts;
  if (rit != reports_.end())
    for (std::size_t gi : rit->second) {
      std::shared_future<DataflowVerdict> f;
      bool mine = false;
      std::promise<DataflowVerdict> promise;
      {
        std::lock_guard lock(mutex_);
        auto [it, fresh] = done_.emplace(gi, std::shared_future<DataflowVerdict>());
        if (fresh) {
          it->second = promise.get_future().share();
          mine = true;
        }
        f = it->second;
      }
      if (mine) {
        const auto t0 = Clock::now();
        DataflowVerdict v;
        try {
          v = check(groups_[gi], access);
        } catch (const Error& e) {
          v = {Status::Skip, "SKIP: " + e.message()};
        } catch (const std::exception& e) {
          v = {Status::Skip, std::string("SKIP: ") + e.what()};
        }
        check_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
        promise.set_value(std::move(v));
      }
      const DataflowVerdict& v = f.get();
      out.status = combine(out.status, v.status);
      parts.push_back(v.message);
    }
  if (nit != notes_.end())
    for (const auto& why : nit->second) parts.push_back("dataflow (D16): " + why);
  for (std::size_t i = 0; i < parts.size(); ++i) out.message += (i ? "; " : "") + parts[i];
  return out;
}

DataflowVerdict Dataflow::check(const Group& g, const DataflowAccess& access) const {
  const std::string& producer = forward_[g.producer].first;
  const std::string tensor = producer + " output." + std::to_string(g.output);
  const std::string head = "dataflow (D16): the gradient of " + tensor;
  auto skip = [&](const std::string& why) {
    return DataflowVerdict{Status::Skip, head + " is not checked: " + why};
  };
  if (!g.skip.empty()) return skip(g.skip);
  auto bit = backward_.find(producer);
  if (bit == backward_.end()) return skip(producer + " has no dumped backward entry");
  const std::vector<Value> gin = access.dumped_grads_in(producer, *bit->second);
  if (g.output >= gin.size() || !gin[g.output].is_tensor())
    return skip(producer + "'s dumped backward input." + std::to_string(g.output) + " is not a tensor");
  const Tensor& device = gin[g.output].tensor();
  if (device.shape() != g.shape)
    return skip(producer + "'s dumped backward input." + std::to_string(g.output) + " has shape " +
                shape_to_string(device.shape()) + ", the tensor " + shape_to_string(g.shape));
  const auto rounding = detail::rounding_of(device.dtype());
  if (!rounding) return skip("its gradient is not floating");
  const double u = rounding->first, tiny = rounding->second;
  const bool f64 = device.dtype() == DType::Float64;
  const double u_acc = f64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  const double share = f64 ? 2 : 1;
  const double u_low = device.dtype() == DType::Float32 ? std::ldexp(1.0, -11) : u;
  const std::size_t numel = static_cast<std::size_t>(device.numel());
  if (numel == 0) return skip("it has no elements");
  std::vector<double> sum(numel, 0.0), absum(numel, 0.0), bound(numel, 0.0), band(numel, 0.0);
  std::vector<std::string> benched, dumped;
  for (const auto& c : g.consumers) {
    const std::string& name = forward_[c.api].first;
    const DumpEntry& fwd = *forward_[c.api].second;
    auto cb = backward_.find(name);
    if (cb == backward_.end())
      return skip("its consumer " + name + " (" + c.path + ") has no dumped backward entry");
    if (c.unknown) {
      const std::vector<Value> grads_in = access.dumped_grads_in(name, *cb->second);
      if (grads_in.empty()) return skip("its consumer " + name + " has no dumped backward input");
      BenchInputGradient b;
      try {
        b = bench_input_gradient(registry_, framework_, name, access.dumped_call(name, fwd), grads_in,
                                 c.path);
      } catch (const Error& e) {
        return skip("the bench gradient of its consumer " + name + " (" + c.path + "): " + e.message());
      }
      if (b.grad.shape() != g.shape) return skip("the bench gradient of " + name + " has another shape");
      const std::vector<double> v = b.grad.to_doubles();
      const std::vector<double> m = b.magnitude ? b.magnitude->to_doubles() : std::vector<double>();
      const double acc = share * (b.own_ulps * u_acc + detail::accumulation_bound(b.accumulation, u_acc));
      const double acc_low = b.own_ulps * u_acc + 4 * u_low;
      const bool has_band = b.accumulation > 1 && !f64;
      for (std::size_t i = 0; i < numel; ++i) {
        const double mi = m.empty() ? std::fabs(v[i]) : std::fabs(m[i]);
        sum[i] += v[i];
        absum[i] += std::fabs(v[i]);
        bound[i] += u * std::fabs(v[i]) + acc * mi;
        band[i] += u * std::fabs(v[i]) + (has_band ? std::max(acc, acc_low) : acc) * mi;
      }
      benched.push_back(name + " " + c.path + " (" + b.family + ", K " + std::to_string(b.accumulation) +
                        ")");
    } else {
      std::string why;
      const std::optional<Tensor> d = access.dumped_input_grad(name, fwd, *cb->second, c.path, why);
      if (!d)
        return skip("the gradient its consumer " + name + " passes to " + c.path + " is unknown: " + why);
      if (d->shape() != g.shape)
        return skip("the dumped gradient of " + name + " " + c.path + " has another shape");
      const std::vector<double> v = d->to_doubles();
      for (std::size_t i = 0; i < numel; ++i) {
        sum[i] += v[i];
        absum[i] += std::fabs(v[i]);
      }
      dumped.push_back(name + " " + c.path);
    }
  }
  // The engine adds the consumers' gradients in the tensor's dtype: n - 1 roundings of partial sums,
  // each at most u times the sum of the absolute contributions.
  const double nm1 = static_cast<double>(g.consumers.size() - 1);
  const double gamma = nm1 * u < 1 ? nm1 * u / (1 - nm1 * u) : std::numeric_limits<double>::infinity();
  constexpr double kSlack = 1.0 + 1.0 / 1024;
  const std::vector<double> dv = device.to_doubles();
  std::size_t beyond = 0, beyond_band = 0;
  double worst_ratio = -1;
  std::size_t worst = 0;
  for (std::size_t i = 0; i < numel; ++i) {
    const double d = dv[i], b = sum[i];
    double ratio = 0;
    bool in_band = true;
    if (!std::isfinite(d) || !std::isfinite(b)) {
      const bool same = (std::isnan(d) && std::isnan(b)) || d == b;
      ratio = same ? 0 : std::numeric_limits<double>::infinity();
      in_band = same;
    } else {
      const double err = std::fabs(d - b);
      const double lim = kSlack * (bound[i] + gamma * absum[i]) + tiny;
      const double lim_band = kSlack * (band[i] + gamma * absum[i]) + tiny;
      ratio = err / lim;
      in_band = err <= lim_band;
    }
    if (ratio > 1) {
      ++beyond;
      if (!in_band) ++beyond_band;
    }
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  DataflowVerdict v;
  v.status = beyond == 0 ? Status::Pass : beyond_band == 0 ? Status::Warning : Status::Error;
  // DECISIONS D16: the sum holds only the consumers the dump records. When an operation outside the dump
  // may have consumed the tensor, a difference beyond the band is that operation's gradient as much as a
  // fault: a Warning naming the input that shows it.
  const bool maybe_outside = v.status == Status::Error && !g.outside.empty();
  if (maybe_outside) v.status = Status::Warning;
  const double lim_w = kSlack * (bound[worst] + gamma * absum[worst]) + tiny;
  std::string consumers;
  if (!benched.empty()) {
    consumers += "float64 bench of ";
    for (std::size_t k = 0; k < benched.size(); ++k) consumers += (k ? ", " : "") + benched[k];
  }
  if (!dumped.empty()) {
    consumers += std::string(benched.empty() ? "" : "; ") + "dumped device gradient of ";
    for (std::size_t k = 0; k < dumped.size(); ++k) consumers += (k ? ", " : "") + dumped[k];
  }
  const std::string verdict =
      v.status == Status::Pass ? "within the bound"
      : maybe_outside ? "beyond the bound, but the dump may not hold all its consumers: " + g.outside +
                            " has its dtype and shape and no API in the dump produced it (an "
                            "operation outside the dump did, and may have taken this tensor too)"
      : v.status == Status::Warning ? "beyond the bound, but within it for an accumulation in "
                                      "reduced precision of the unknown gradients, or a "
                                      "fault of that size"
                                    : "beyond the bound";
  v.message = fmt::format(
      "{} ({}'s dumped backward input.{}) against the sum of the gradients of its {} consumers ({}): {}; {} "
      "of "
      "{} elements beyond, the worst at {}: device {}, sum {}, error {:.3g}, bound {:.3g}",
      head, producer, g.output, g.consumers.size(), consumers, verdict, beyond, numel,
      detail::index_text(static_cast<std::int64_t>(worst), g.shape), dv[worst], sum[worst],
      std::fabs(dv[worst] - sum[worst]), lim_w);
  if (benched.size() > 1 && v.status != Status::Pass)
    v.message += "; the gradient at fault is one of the unknown ones: " + [&] {
      std::string s;
      for (std::size_t k = 0; k < benched.size(); ++k)
        s += (k ? ", " : "") + benched[k].substr(0, benched[k].find(' '));
      return s;
    }();
  return v;
}

}  // namespace probe::rut
