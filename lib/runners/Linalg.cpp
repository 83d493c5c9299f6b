// Matrix products through Eigen GEMM (float64; float32 in device emulation).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "probe/error.h"
#include "runners/Ops.h"
#include "runners/RunnerKit.h"

namespace probe::runners {

namespace {

[[noreturn]] void invalid(const std::string& m) { throw Error(ErrorKind::InvalidArgument, m); }

void need_dims(const Var& v, int n, const char* fn, const char* arg) {
  if (v.ndim() != n) invalid(fmt::format("{}: {} must be a {}D tensor, got {}D", fn, arg, n, v.ndim()));
}

// beta * input + alpha * product (torch skips input entirely when beta == 0, so NaNs there do not propagate).
Var axpby(const Var& input, const Var& prod, double beta, double alpha) {
  Var p = alpha == 1 ? prod : ops::mul(prod, wrapped_scalar(alpha, DType::Float64));
  if (beta == 0) return p;
  Var i = beta == 1 ? input : ops::mul(input, wrapped_scalar(beta, DType::Float64));
  Var r = ops::add(p, i);
  if (r.shape() != prod.shape()) invalid("the input of addmm/baddbmm must broadcast to the product's shape");
  return r;
}

// einsum for explicit or implicit output, no repeated labels within one operand, no ellipsis: a sequence of
// permute / broadcast multiply / sum, which covers the common attention and projection patterns.
Var einsum(const std::string& eq_in, const std::vector<Var>& xs) {
  std::string eq;
  for (char ch : eq_in)
    if (ch != ' ') eq += ch;
  if (eq.find("...") != std::string::npos)
    throw Error(ErrorKind::Unsupported, "einsum with '...' is not supported");
  const auto arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow), rhs;
  std::vector<std::string> ins;
  for (std::size_t s = 0;;) {
    const auto comma = lhs.find(',', s);
    ins.push_back(lhs.substr(s, comma == std::string::npos ? std::string::npos : comma - s));
    if (comma == std::string::npos) break;
    s = comma + 1;
  }
  if (ins.size() != xs.size())
    invalid("einsum(): more operands were provided than specified in the equation");
  std::map<char, std::int64_t> size;
  std::map<char, int> count;
  for (std::size_t k = 0; k < ins.size(); ++k) {
    if (static_cast<int>(ins[k].size()) != xs[k].ndim())
      invalid(
          fmt::format("einsum(): the number of subscripts in the equation ({}) does not match the number of "
                      "dimensions ({}) for operand {}",
                      ins[k].size(), xs[k].ndim(), k));
    for (std::size_t j = 0; j < ins[k].size(); ++j) {
      const char ch = ins[k][j];
      if (std::count(ins[k].begin(), ins[k].end(), ch) > 1)
        throw Error(ErrorKind::Unsupported,
                    "einsum with a repeated subscript in one operand (diagonal) is not supported");
      const std::int64_t d = xs[k].shape()[j];
      if (size.count(ch) && size[ch] != d && size[ch] != 1 && d != 1)
        invalid(fmt::format("einsum(): operands do not broadcast for subscript {}", ch));
      size[ch] = std::max(size.count(ch) ? size[ch] : 1, d);
      ++count[ch];
    }
  }
  if (arrow != std::string::npos) {
    rhs = eq.substr(arrow + 2);
  } else {
    for (auto& [ch, n] : count)
      if (n == 1) rhs += ch;  // implicit output: labels seen once, alphabetical
  }
  // All labels: output first, then the summed ones.
  std::string all = rhs;
  for (auto& [ch, n] : count)
    if (rhs.find(ch) == std::string::npos) all += ch;
  Var acc;
  DType dt = xs.front().dtype();
  for (std::size_t k = 0; k < xs.size(); ++k) {
    // permute operand k to the order of `all`, with size-1 dims for missing labels
    std::vector<std::int64_t> perm;
    std::string present;
    for (char ch : all)
      if (auto p = ins[k].find(ch); p != std::string::npos) {
        perm.push_back(static_cast<std::int64_t>(p));
        present += ch;
      }
    Var v = permute(xs[k], perm);
    Shape s;
    for (char ch : all) s.push_back(present.find(ch) != std::string::npos ? size[ch] : 1);
    for (std::size_t j = 0, p = 0; j < all.size(); ++j)
      if (present.find(all[j]) != std::string::npos) s[j] = v.shape()[p++];
    v = reshape(v, s);
    acc = k == 0 ? v : ops::mul(acc, v);
    if (xs[k].dtype() != dt) invalid("einsum(): operands must have the same dtype");
  }
  std::vector<int> sum_dims;
  for (std::size_t j = rhs.size(); j < all.size(); ++j) sum_dims.push_back(static_cast<int>(j));
  Shape full_shape;
  for (char ch : all) full_shape.push_back(size[ch]);
  acc = expand(acc, full_shape);
  if (!sum_dims.empty()) acc = runners::sum(acc, sum_dims, false, dt);
  return acc;
}

}  // namespace

void register_linalg_runners(RunnerRegistry& reg) {
  def(reg, names("matmul", kTorch | kTensor | kMint | kMsOps, {"Tensor.__matmul__", "Tensor.__rmatmul__"}),
      "matmul(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {ops::matmul(c.t("input"), c.t("other"))}; });
  def(reg, names("mm", kTorch | kTensor | kMint | kAten),
      "mm(Tensor input, Tensor mat2, *, Tensor? out=None) -> Tensor", [](Ctx& c) -> Outs {
        Var a = c.t("input"), b = c.t("mat2");
        need_dims(a, 2, "mm", "self");
        need_dims(b, 2, "mm", "mat2");
        return {ops::matmul(a, b)};
      });
  def(reg, names("bmm", kTorch | kTensor | kMint | kAten),
      "bmm(Tensor input, Tensor mat2, *, Tensor? out=None) -> Tensor", [](Ctx& c) -> Outs {
        Var a = c.t("input"), b = c.t("mat2");
        need_dims(a, 3, "bmm", "batch1");
        need_dims(b, 3, "bmm", "batch2");
        if (a.shape()[0] != b.shape()[0]) invalid("bmm: batch1 and batch2 must have the same batch size");
        return {ops::matmul(a, b)};
      });
  def(reg, names("mv", kTorch | kTensor), "mv(Tensor input, Tensor vec) -> Tensor", [](Ctx& c) -> Outs {
    Var a = c.t("input"), b = c.t("vec");
    need_dims(a, 2, "mv", "input");
    need_dims(b, 1, "mv", "vec");
    return {ops::matmul(a, b)};
  });
  def(reg, names("dot", kTorch | kTensor), "dot(Tensor input, Tensor other) -> Tensor", [](Ctx& c) -> Outs {
    Var a = c.t("input"), b = c.t("other");
    need_dims(a, 1, "dot", "input");
    need_dims(b, 1, "dot", "other");
    return {ops::matmul(a, b)};
  });
  def(reg, names("addmm", kTorch | kTensor | kInplace | kMint | kAten),
      "addmm(Tensor input, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor? out=None) -> "
      "Tensor",
      [](Ctx& c) -> Outs {
        Var a = c.t("mat1"), b = c.t("mat2");
        need_dims(a, 2, "addmm", "mat1");
        need_dims(b, 2, "addmm", "mat2");
        return {axpby(c.t("input"), ops::matmul(a, b), c.f("beta"), c.f("alpha"))};
      });
  def(reg, names("baddbmm", kTorch | kTensor | kInplace | kMint | kAten),
      "baddbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, Tensor? "
      "out=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var a = c.t("batch1"), b = c.t("batch2");
        need_dims(a, 3, "baddbmm", "batch1");
        need_dims(b, 3, "baddbmm", "batch2");
        return {axpby(c.t("input"), ops::matmul(a, b), c.f("beta"), c.f("alpha"))};
      });
  def(reg, names("linear", kFunctional | kMintFunctional, {"Torch._C._nn.linear", "NPU.npu_linear"}),
      "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input"), w = c.t("weight");
        Var y = ops::matmul(x, w.ndim() == 2 ? transpose(w, 0, 1) : w);
        if (auto b = c.opt_t("bias")) y = ops::add(y, *b);
        return {y};
      });
  def(reg, names("einsum", kTorch | kMint | kMsOps), "einsum(str equation, Tensor... operands) -> Tensor",
      [](Ctx& c) -> Outs { return {einsum(c.s("equation"), c.ts("operands"))}; });
}

}  // namespace probe::runners
