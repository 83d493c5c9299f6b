#include "run_ut/BenchCost.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace probe::rut {

namespace {

// The call's tensors in argument order (positional first, then keywords), nested lists skipped.
std::vector<const Tensor*> tensors_of(const ApiCall& call) {
  std::vector<const Tensor*> out;
  for (const Value& v : call.args)
    if (v.is_tensor()) out.push_back(&v.tensor());
  for (const auto& [name, v] : call.kwargs)
    if (v.is_tensor()) out.push_back(&v.tensor());
  return out;
}

double dim(const Tensor& t, int from_end) {
  const auto& s = t.shape();
  const auto n = static_cast<int>(s.size());
  return from_end <= n ? static_cast<double>(s[static_cast<std::size_t>(n - from_end)]) : 1.0;
}

double batch(const Tensor& t) {  // product of the dimensions before the last two
  double b = 1;
  for (std::size_t i = 0; i + 2 < t.shape().size(); ++i) b *= static_cast<double>(t.shape()[i]);
  return b;
}

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The argument at position `pos` or passed as keyword `name`, or nullptr.
const Value* arg(const ApiCall& call, std::size_t pos, std::string_view name) {
  if (pos < call.args.size()) return &call.args[pos];
  for (const auto& [key, v] : call.kwargs)
    if (key == name) return &v;
  return nullptr;
}

// A number or a list of numbers as doubles, or nullopt when it is something else (then the runner's
// own argument checks decide).
std::optional<std::vector<double>> numbers(const Value* v) {
  if (!v) return std::nullopt;
  if (v->is_number()) return std::vector<double>{v->as_double()};
  if (!v->is_list()) return std::nullopt;
  std::vector<double> out;
  for (const Value& item : v->list()) {
    if (!item.is_number()) return std::nullopt;
    out.push_back(item.as_double());
  }
  return out;
}

// An `int... size` parameter starting at `pos`: a list there, loose ints from there on, or the keyword.
std::optional<std::vector<double>> varargs(const ApiCall& call, std::size_t pos, std::string_view name) {
  if (pos < call.args.size() && !call.args[pos].is_list()) {
    std::vector<double> out;
    for (std::size_t i = pos; i < call.args.size(); ++i) {
      if (!call.args[i].is_number()) return std::nullopt;
      out.push_back(call.args[i].as_double());
    }
    return out;
  }
  return numbers(arg(call, pos, name));
}

double product(const std::vector<double>& v) {
  double p = 1;
  for (double x : v) p *= std::max(x, 0.0);
  return p;
}

const Tensor* tensor_arg(const ApiCall& call, std::size_t pos, std::string_view name) {
  const Value* v = arg(call, pos, name);
  return v && v->is_tensor() ? &v->tensor() : nullptr;
}

double numel_of(const Tensor& t) { return static_cast<double>(t.numel()); }

// expand / broadcast_to: the sizes aligned with the input's trailing dims, -1 keeping the input's size.
double expanded_numel(const Tensor& x, const std::vector<double>& sizes) {
  const auto& s = x.shape();
  double p = 1;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::size_t lead = sizes.size() - s.size();
    double d = sizes[i];
    if (d == -1 && sizes.size() >= s.size() && i >= lead) d = static_cast<double>(s[i - lead]);
    p *= std::max(d, 0.0);
  }
  return p;
}

// interpolate: N * C * the output's spatial sizes, from `size` or floor(input size * scale_factor); the
// linear modes' sparse map holds 4 taps per output element (the runner's own check counts them too).
std::optional<double> interpolated_numel(const ApiCall& call, bool with_work) {
  const Tensor* x = tensor_arg(call, 0, "input");
  if (!x || x->shape().size() < 3) return std::nullopt;
  const auto& s = x->shape();
  const std::size_t spatial = s.size() - 2;
  const Value* mode = arg(call, 3, "mode");
  const bool linear = mode && mode->kind() == Value::Kind::String &&
                      (mode->as_string() == "linear" || mode->as_string() == "bilinear");
  double p = static_cast<double>(s[0]) * static_cast<double>(s[1]) * (linear && with_work ? 4.0 : 1.0);
  const Value* size = arg(call, 1, "size");
  const Value* scale = arg(call, 2, "scale_factor");
  if (size && !size->is_none()) {
    const auto v = numbers(size);
    if (!v || v->empty()) return std::nullopt;
    for (std::size_t i = 0; i < spatial; ++i)
      p *= std::max((*v)[v->size() == 1 ? 0 : std::min(i, v->size() - 1)], 0.0);
    return p;
  }
  const auto f = numbers(scale);
  if (!f || f->empty()) return std::nullopt;
  for (std::size_t i = 0; i < spatial; ++i)
    p *= std::max(std::floor(static_cast<double>(s[2 + i]) * (*f)[std::min(i, f->size() - 1)]), 0.0);
  return p;
}

// arange(end) / arange(start, end, step = 1): ceil((end - start) / step) elements.
std::optional<double> arange_length(const ApiCall& call) {
  auto num = [](const Value* v) -> std::optional<double> {
    if (v && v->is_number()) return v->as_double();
    return std::nullopt;
  };
  // torch's keyword names, or the positional names of the runner's schema
  auto pick = [&](std::size_t pos, std::string_view name, std::string_view schema_name) {
    const Value* v = arg(call, pos, name);
    return num(v ? v : arg(call, pos, schema_name));
  };
  const std::optional<double> a = pick(0, "start", "a"), b = pick(1, "end", "b"), step = pick(2, "step", "c");
  if (!a && !b) return std::nullopt;
  double start = 0, end = 0;
  if (a && b) {
    start = *a;
    end = *b;
  } else {
    end = a ? *a : *b;
  }
  const double d = step.value_or(1.0);
  if (d == 0 || !std::isfinite(d)) return std::nullopt;
  const double n = std::ceil((end - start) / d);
  return std::isnan(n) ? std::nullopt : std::optional<double>(std::max(n, 0.0));
}

// one_hot: numel(input) * num_classes, num_classes = max(input) + 1 when it is -1 (as the runner does).
std::optional<double> one_hot_numel(const ApiCall& call) {
  const Tensor* x = tensor_arg(call, 0, "input");
  if (!x) return std::nullopt;
  const auto k = numbers(arg(call, 1, "num_classes"));
  double classes = k && k->size() == 1 ? (*k)[0] : -1;
  if (classes == -1) {
    double top = -1;
    for (std::int64_t i = 0; i < x->numel(); ++i) top = std::max(top, x->at(i));
    classes = top + 1;
  }
  return numel_of(*x) * std::max(classes, 0.0);
}

// pad: the input's size with (left, right) pairs added from the last dim backwards.
std::optional<double> padded_numel(const ApiCall& call) {
  const Tensor* x = tensor_arg(call, 0, "input");
  const auto pads = numbers(arg(call, 1, "pad"));
  if (!x || !pads) return std::nullopt;
  const auto& s = x->shape();
  double p = 1;
  for (std::size_t i = 0; i < s.size(); ++i) {
    double d = static_cast<double>(s[s.size() - 1 - i]);
    if (2 * i + 1 < pads->size()) d += (*pads)[2 * i] + (*pads)[2 * i + 1];
    p *= std::max(d, 0.0);
  }
  return p;
}

// repeat_interleave(input, repeats, dim): each of len(repeats) slices of numel(input) / len(repeats)
// elements repeated repeats[i] times.
std::optional<double> repeat_interleave_numel(const ApiCall& call) {
  const Tensor* x = tensor_arg(call, 0, "input");
  const Value* r = arg(call, 1, "repeats");
  if (!x || !r) return std::nullopt;
  if (r->is_number()) return numel_of(*x) * std::max(r->as_double(), 0.0);
  if (!r->is_tensor() || r->tensor().numel() == 0) return std::nullopt;
  const Tensor& rt = r->tensor();
  double sum = 0;
  for (std::int64_t i = 0; i < rt.numel(); ++i) sum += std::max(rt.at(i), 0.0);
  return numel_of(*x) / numel_of(rt) * sum;
}

// broadcast_tensors: every tensor becomes the broadcast shape.
double broadcast_numel(const std::vector<const Tensor*>& t) {
  std::size_t rank = 0;
  for (const Tensor* x : t) rank = std::max(rank, x->shape().size());
  double p = 1;
  for (std::size_t i = 0; i < rank; ++i) {
    double d = 1;
    for (const Tensor* x : t) d = std::max(d, dim(*x, static_cast<int>(i + 1)));
    p *= d;
  }
  return p * static_cast<double>(t.size());
}

}  // namespace

namespace {

double numel_of_shape(const Shape& s) {
  double p = 1;
  for (auto d : s) p *= static_cast<double>(d);
  return p;
}

double dim_of(const Shape& s, int from_end) {
  const auto n = static_cast<int>(s.size());
  return from_end <= n ? static_cast<double>(s[static_cast<std::size_t>(n - from_end)]) : 1.0;
}

double batch_of(const Shape& s) {
  double b = 1;
  for (std::size_t i = 0; i + 2 < s.size(); ++i) b *= static_cast<double>(s[i]);
  return b;
}

// a @ b with numpy/torch broadcasting: 2 * batch * M * N * K, the batch taken as the larger side's
// (an upper bound when both sides broadcast).
double matmul_flops_of(const Shape& a, const Shape& b) {
  const double k = dim_of(a, 1);
  const double m = a.size() >= 2 ? dim_of(a, 2) : 1.0;
  const double n = b.size() >= 2 ? dim_of(b, 1) : 1.0;
  return 2.0 * std::max(batch_of(a), batch_of(b)) * m * n * k;
}

// The FLOP estimate from the shapes of the call's top-level tensors in argument order: all it needs, so a
// dumped entry's descriptors give the same estimate as the loaded tensors.
std::optional<double> flops_of_shapes(std::string_view api, const std::vector<const Shape*>& t) {
  if (one_of(api, {"matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "mv", "dot", "inner"})) {
    if (t.size() < 2) return std::nullopt;
    return api == "__rmatmul__" ? matmul_flops_of(*t[1], *t[0]) : matmul_flops_of(*t[0], *t[1]);
  }
  if (one_of(api, {"addmm", "addbmm", "baddbmm", "addmv"})) {  // (input, mat1, mat2)
    if (t.size() < 3) return std::nullopt;
    return matmul_flops_of(*t[1], *t[2]);
  }
  if (api == "linear") {  // input [..., K], weight [N, K]
    if (t.size() < 2) return std::nullopt;
    return 2.0 * numel_of_shape(*t[0]) * dim_of(*t[1], 2);
  }
  if (one_of(api,
             {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"})) {
    // input [N, C, *spatial], weight [C_out, C_in/groups, *kernel] (transposed: [C_in, C_out/groups, ...]):
    // each weight element meets each input position once at stride 1, an upper bound for any stride.
    // An unbatched input has no N: [C, *spatial].
    if (t.size() < 2 || t[0]->size() < 2) return std::nullopt;
    const std::size_t channel_axis = t[0]->size() == t[1]->size() ? 1 : 0;
    const auto channels = static_cast<double>((*t[0])[channel_axis]);
    if (channels == 0) return 0.0;
    return 2.0 * numel_of_shape(*t[0]) / channels * numel_of_shape(*t[1]);
  }
  if (api == "scaled_dot_product_attention") {  // q [..., L, E], k [..., S, E]: QK^T and PV
    if (t.size() < 3) return std::nullopt;
    return 4.0 * numel_of_shape(*t[0]) * dim_of(*t[1], 2);
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> estimated_bench_flops(std::string_view api, const ApiCall& call) {
  std::vector<const Shape*> shapes;
  for (const Tensor* t : tensors_of(call)) shapes.push_back(&t->shape());
  return flops_of_shapes(api, shapes);
}

std::optional<double> estimated_bench_flops(std::string_view api, const DumpEntry& entry) {
  std::vector<const Shape*> shapes;
  if (const DumpNode* in = entry.inputs(); in && in->kind() == DumpNode::Kind::List)
    for (const DumpNode& n : in->items())
      if (n.is_tensor()) shapes.push_back(&n.tensor().shape);
  if (const DumpNode* kw = entry.kwargs(); kw && kw->kind() == DumpNode::Kind::Dict)
    for (const auto& [key, n] : kw->members())
      if (n.is_tensor()) shapes.push_back(&n.tensor().shape);
  return flops_of_shapes(api, shapes);
}

double check_weight(std::string_view api, const DumpEntry& forward, const DumpEntry* backward) {
  double bytes = 0;
  for (const DumpEntry* e : {&forward, backward})
    if (e)
      for (const TensorInfo* t : e->tensors()) bytes += static_cast<double>(t->nbytes().value_or(0));
  // A dumped byte is read, converted to float64 and compared (about 0.3 GB/s per core end to end); a float64
  // GEMM FLOP costs about an eighth of that (a few GFLOP/s per core). Only the order of weights matters.
  return bytes + estimated_bench_flops(api, forward).value_or(0.0) / 8.0;
}

std::optional<double> estimated_result_elements(std::string_view api, const ApiCall& call, bool with_work) {
  const auto t = tensors_of(call);
  if (one_of(api, {"repeat", "tile"})) {  // numel(input) * prod(repeats): missing leading dims count as 1
    const Tensor* x = tensor_arg(call, 0, "input");
    const auto r = varargs(call, 1, api == "tile" ? "dims" : "repeats");
    if (!x || !r) return std::nullopt;
    return numel_of(*x) * product(*r);
  }
  if (one_of(api, {"expand", "broadcast_to"})) {
    const Tensor* x = tensor_arg(call, 0, "input");
    const auto sizes = varargs(call, 1, "size");
    if (!x || !sizes) return std::nullopt;
    return expanded_numel(*x, *sizes);
  }
  if (one_of(api, {"new_full", "new_zeros", "new_ones", "new_empty"})) {
    const auto sizes = varargs(call, 1, "size");
    return sizes ? std::optional<double>(product(*sizes)) : std::nullopt;
  }
  if (one_of(api, {"full", "zeros", "ones", "empty"})) {
    const auto sizes = api == "full" ? numbers(arg(call, 0, "size")) : varargs(call, 0, "size");
    return sizes ? std::optional<double>(product(*sizes)) : std::nullopt;
  }
  if (api == "arange") return arange_length(call);
  if (api == "linspace") {
    const auto n = numbers(arg(call, 2, "steps"));
    return n && n->size() == 1 ? std::optional<double>(std::max((*n)[0], 0.0)) : std::nullopt;
  }
  if (api == "eye") {
    const auto n = numbers(arg(call, 0, "n"));
    const auto m = numbers(arg(call, 1, "m"));
    if (!n || n->size() != 1) return std::nullopt;
    const double cols = m && m->size() == 1 ? (*m)[0] : (*n)[0];
    return std::max((*n)[0], 0.0) * std::max(cols, 0.0);
  }
  if (one_of(api, {"interpolate", "upsample"})) return interpolated_numel(call, with_work);
  if (api == "one_hot") return one_hot_numel(call);
  if (api == "pad") return padded_numel(call);
  if (api == "repeat_interleave") return repeat_interleave_numel(call);
  if (one_of(api, {"outer", "ger", "kron"})) {
    if (t.size() < 2) return std::nullopt;
    return numel_of(*t[0]) * numel_of(*t[1]);
  }
  if (api == "cdist") {  // x1 [B, P, M], x2 [B, R, M]: the broadcast difference [B, P, R, M] is formed
    if (t.size() < 2 || t[0]->shape().size() < 2 || t[1]->shape().size() < 2) return std::nullopt;
    return std::max(batch(*t[0]), batch(*t[1])) * dim(*t[0], 2) * dim(*t[1], 2) *
           (with_work ? std::max(dim(*t[0], 1), 1.0) : 1.0);
  }
  if (api == "diag") {  // a vector of n becomes an (n + |k|)^2 matrix
    const Tensor* x = tensor_arg(call, 0, "input");
    if (!x || x->shape().size() != 1) return std::nullopt;
    const auto k = numbers(arg(call, 1, "diagonal"));
    const double n = numel_of(*x) + (k && k->size() == 1 ? std::abs((*k)[0]) : 0.0);
    return n * n;
  }
  if (api == "embedding") {  // input indices x weight [V, D]: numel(input) * D
    if (t.size() < 2) return std::nullopt;
    return numel_of(*t[0]) * dim(*t[1], 1);
  }
  if (api == "broadcast_tensors") return t.empty() ? std::nullopt : std::optional<double>(broadcast_numel(t));
  // GEMMs: batch * M * N outputs, which [M, 1] @ [1, N] makes quadratic in the inputs.
  if (one_of(api, {"matmul", "__matmul__", "__rmatmul__", "mm", "bmm"})) {
    if (t.size() < 2) return std::nullopt;
    const Tensor& a = api == "__rmatmul__" ? *t[1] : *t[0];
    const Tensor& b = api == "__rmatmul__" ? *t[0] : *t[1];
    return std::max(batch(a), batch(b)) * (a.shape().size() >= 2 ? dim(a, 2) : 1.0) *
           (b.shape().size() >= 2 ? dim(b, 1) : 1.0);
  }
  if (one_of(api, {"addmm", "addbmm", "baddbmm"})) {  // (input, mat1, mat2)
    if (t.size() < 3) return std::nullopt;
    return std::max(batch(*t[1]), batch(*t[2])) * dim(*t[1], 2) * dim(*t[2], 1);
  }
  if (api == "linear") {  // input [..., K], weight [N, K]
    if (t.size() < 2 || dim(*t[0], 1) == 0) return std::nullopt;
    return numel_of(*t[0]) / dim(*t[0], 1) * dim(*t[1], 2);
  }
  return std::nullopt;
}

}  // namespace probe::rut
