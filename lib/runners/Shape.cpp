// Views, shape manipulation, joining/splitting, indexing and casts (float64 reference).
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "probe/error.h"
#include "runners/Ops.h"
#include "runners/RunnerKit.h"

namespace probe::runners {

namespace {

[[noreturn]] void invalid(const std::string& m) { throw Error(ErrorKind::InvalidArgument, m); }

Var flatten(const Var& x, std::int64_t start, std::int64_t end) {
  if (x.ndim() == 0) return reshape(x, {1});
  const int s = wrap_dim(start, x.ndim()), e = wrap_dim(end, x.ndim());
  if (s > e) invalid("flatten() has invalid args: start_dim cannot come after end_dim");
  Shape out;
  std::int64_t m = 1;
  for (int i = 0; i < x.ndim(); ++i) {
    const std::int64_t d = x.shape()[static_cast<std::size_t>(i)];
    if (i < s || i > e)
      out.push_back(d);
    else {
      m *= d;
      if (i == e) out.push_back(m);
    }
  }
  return reshape(x, out);
}

Var squeeze_dims(const Var& x, const Value& dims) {
  Shape s;
  std::vector<bool> drop(static_cast<std::size_t>(x.ndim()), dims.is_none());
  if (!dims.is_none())
    for (auto d : dims.as_int_list()) {
      if (x.ndim() == 0) {
        wrap_dim(d, 0);
        continue;
      }
      drop[static_cast<std::size_t>(wrap_dim(d, x.ndim()))] = true;
    }
  for (int i = 0; i < x.ndim(); ++i) {
    const auto iu = static_cast<std::size_t>(i);
    if (!(drop[iu] && x.shape()[iu] == 1)) s.push_back(x.shape()[iu]);
  }
  return reshape(x, s);
}

Var stack(const std::vector<Var>& xs, std::int64_t dim) {
  if (xs.empty()) invalid("stack expects a non-empty TensorList");
  std::vector<Var> u;
  for (const Var& v : xs) {
    if (v.shape() != xs.front().shape())
      invalid(fmt::format("stack expects each tensor to be equal size, but got {} and {}",
                          shape_to_string(xs.front().shape()), shape_to_string(v.shape())));
    u.push_back(ops::unsqueeze(v, dim));
  }
  return cat(u, wrap_dim(dim, xs.front().ndim() + 1));
}

}  // namespace

void register_shape_runners(RunnerRegistry& reg) {
  def(reg, names("reshape", kTorch | kTensor | kMint | kMsOps | kMsTensor),
      "reshape(Tensor input, int... shape) -> Tensor",
      [](Ctx& c) -> Outs { return {reshape(c.t("input"), c.ints("shape"))}; });
  def(reg, names("view", kTensor | kMsTensor, {"Aten.view.default"}),
      "view(Tensor input, Any... size) -> Tensor", [](Ctx& c) -> Outs {
        const Value& s = c["size"];
        // view(dtype) reinterprets bits, which a float64 reference cannot express.
        if (s.list().size() == 1 &&
            (s.list()[0].kind() == Value::Kind::DType || s.list()[0].kind() == Value::Kind::String))
          throw Error(ErrorKind::Unsupported, "Tensor.view(dtype) reinterprets bits and is not supported");
        std::vector<std::int64_t> shape;
        for (const Value& v : s.list())
          if (v.is_list()) {
            for (const Value& w : v.list()) shape.push_back(w.as_int());
          } else {
            shape.push_back(v.as_int());
          }
        return {reshape(c.t("input"), shape)};
      });
  def(reg, names("flatten", kTorch | kTensor | kMint | kMsOps),
      "flatten(Tensor input, int start_dim=0, int end_dim=-1) -> Tensor",
      [](Ctx& c) -> Outs { return {flatten(c.t("input"), c.i("start_dim"), c.i("end_dim"))}; });
  def(reg, names("squeeze", kTorch | kTensor | kInplace | kMint | kMsOps),
      "squeeze(Tensor input, Any dim=None) -> Tensor",
      [](Ctx& c) -> Outs { return {squeeze_dims(c.t("input"), c["dim"])}; });
  def(reg, names("unsqueeze", kTorch | kTensor | kInplace | kMint | kMsOps),
      "unsqueeze(Tensor input, int dim) -> Tensor",
      [](Ctx& c) -> Outs { return {ops::unsqueeze(c.t("input"), c.i("dim"))}; });
  def(reg,
      names("transpose", kTorch | kTensor | kInplace | kMint,
            {"Torch.swapaxes", "Tensor.swapaxes", "Torch.swapdims", "Tensor.swapdims"}),
      "transpose(Tensor input, int dim0, int dim1) -> Tensor",
      [](Ctx& c) -> Outs { return {transpose(c.t("input"), c.i("dim0"), c.i("dim1"))}; });
  def(reg, names("permute", kTorch | kTensor | kMint | kMsOps | kMsTensor),
      "permute(Tensor input, int... dims) -> Tensor",
      [](Ctx& c) -> Outs { return {permute(c.t("input"), c.ints("dims"))}; });
  def(reg, names("t", kTorch | kTensor | kInplace | kMint), "t(Tensor input) -> Tensor", [](Ctx& c) -> Outs {
    Var x = c.t("input");
    if (x.ndim() > 2)
      invalid(fmt::format("t() expects a tensor with <= 2 dimensions, but self is {}D", x.ndim()));
    return {x.ndim() < 2 ? x : transpose(x, 0, 1)};
  });
  def(reg, names("contiguous", kTensor | kMsTensor),
      "contiguous(Tensor input, Any memory_format=None) -> Tensor",
      [](Ctx& c) -> Outs { return {c.t("input")}; });
  def(reg, names("cat", kTorch | kMint | kMsOps, {"Torch.concat", "Torch.concatenate", "ms:Mint.concat"}),
      "cat(Tensor[] tensors, int dim=0, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {cat(c.ts("tensors"), c.i("dim"))}; });
  def(reg, names("stack", kTorch | kMint | kMsOps),
      "stack(Tensor[] tensors, int dim=0, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {stack(c.ts("tensors"), c.i("dim"))}; });
}

}  // namespace probe::runners
