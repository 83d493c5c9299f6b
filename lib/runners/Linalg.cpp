// Matrix products through Eigen GEMM (float64; float32 in device emulation).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "probe/error.h"
#include "runners/Ops.h"
#include "runners/RunnerKit.h"

namespace probe::runners {

namespace {

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

// einsum for explicit or implicit output, no repeated labels within one operand: a sequence of permute /
// broadcast multiply / sum, which covers the common attention and projection patterns. '...' becomes fresh
// labels (control characters, never valid subscripts) right-aligned across operands, so its dims broadcast
// like torch's; in implicit mode they lead the output.
Var einsum(const std::string& eq_in, const std::vector<Var>& xs) {
  std::string eq;
  for (char ch : eq_in)
    if (ch != ' ') eq += ch;
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
  std::size_t ell = 0;
  std::vector<std::size_t> ell_k(ins.size(), 0);
  for (std::size_t k = 0; k < ins.size(); ++k) {
    const auto p = ins[k].find("...");
    if (p == std::string::npos) continue;
    if (ins[k].find("...", p + 3) != std::string::npos || ins[k].find('.', p + 3) != std::string::npos)
      invalid("einsum(): found '.' for operand " + std::to_string(k) + " that is not part of any ellipsis");
    const auto named = static_cast<std::int64_t>(ins[k].size()) - 3;
    if (xs[k].ndim() < named)
      invalid(
          fmt::format("einsum(): the number of subscripts in the equation ({}) is more than the number of "
                      "dimensions ({}) for operand {}",
                      named, xs[k].ndim(), k));
    ell_k[k] = static_cast<std::size_t>(xs[k].ndim() - named);
    ell = std::max(ell, ell_k[k]);
  }
  std::string ell_labels;
  for (std::size_t j = 0; j < ell; ++j) ell_labels += static_cast<char>(1 + j);
  for (std::size_t k = 0; k < ins.size(); ++k)
    if (const auto p = ins[k].find("..."); p != std::string::npos)
      ins[k].replace(p, 3, ell_labels.substr(ell - ell_k[k]));
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
    if (const auto p = rhs.find("..."); p != std::string::npos) rhs.replace(p, 3, ell_labels);
  } else {
    rhs = ell_labels;
    for (auto& [ch, n] : count)
      if (n == 1 && ell_labels.find(ch) == std::string::npos) rhs += ch;  // labels seen once, alphabetical
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
  def(reg,
      names("matmul", kTorch | kTensor | kMint | kMsOps,
            {"Tensor.__matmul__", "Tensor.__rmatmul__", "Torch.linalg.matmul"}),
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
  // ---- more of the matmul family ----------------------------------------------------------------
  auto outer = [](const Var& a, const Var& b) {
    need_dims(a, 1, "outer", "input");
    need_dims(b, 1, "outer", "vec2");
    return ops::mul(reshape(a, {a.numel(), 1}), reshape(b, {1, b.numel()}));
  };
  def(reg, names("outer", kTorch | kTensor, {"Torch.ger", "Tensor.ger"}),
      "outer(Tensor input, Tensor vec2) -> Tensor",
      [outer](Ctx& c) -> Outs { return {outer(c.t("input"), c.t("vec2"))}; });
  def(reg, names("vdot", kTorch | kTensor), "vdot(Tensor input, Tensor other) -> Tensor", [](Ctx& c) -> Outs {
    Var a = c.t("input"), b = c.t("other");
    need_dims(a, 1, "vdot", "input");
    need_dims(b, 1, "vdot", "other");
    return {ops::matmul(a, b)};
  });
  def(reg, names("inner", kTorch | kTensor), "inner(Tensor input, Tensor other) -> Tensor",
      [](Ctx& c) -> Outs {
        Var a = c.t("input"), b = c.t("other");
        if (a.ndim() == 0 || b.ndim() == 0) return {ops::mul(a, b)};
        const std::int64_t k = a.shape().back();
        if (b.shape().back() != k)
          invalid(fmt::format(
              "inner() the last dimension must match on both input tensors but got shapes {} and {}",
              shape_to_string(a.shape()), shape_to_string(b.shape())));
        Shape out(a.shape().begin(), a.shape().end() - 1);
        out.insert(out.end(), b.shape().begin(), b.shape().end() - 1);
        Var r = ops::matmul(reshape(a, {a.numel() / std::max<std::int64_t>(k, 1), k}),
                            transpose(reshape(b, {b.numel() / std::max<std::int64_t>(k, 1), k}), 0, 1));
        return {reshape(r, out)};
      });
  def(reg, names("addmv", kTorch | kTensor | kInplace, {"Torch.addmv_"}),
      "addmv(Tensor input, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, Tensor? out=None) -> "
      "Tensor",
      [](Ctx& c) -> Outs {
        Var a = c.t("mat"), v = c.t("vec");
        need_dims(a, 2, "addmv", "mat");
        need_dims(v, 1, "addmv", "vec");
        return {axpby(c.t("input"), ops::matmul(a, v), c.f("beta"), c.f("alpha"))};
      });
  def(reg, names("addr", kTorch | kTensor | kInplace),
      "addr(Tensor input, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1, Tensor? out=None) -> "
      "Tensor",
      [outer](Ctx& c) -> Outs {
        return {axpby(c.t("input"), outer(c.t("vec1"), c.t("vec2")), c.f("beta"), c.f("alpha"))};
      });
  def(reg, names("addbmm", kTorch | kTensor | kInplace),
      "addbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, Tensor? "
      "out=None) -> "
      "Tensor",
      [](Ctx& c) -> Outs {
        Var a = c.t("batch1"), b = c.t("batch2");
        need_dims(a, 3, "addbmm", "batch1");
        need_dims(b, 3, "addbmm", "batch2");
        if (a.shape()[0] != b.shape()[0])
          invalid("addbmm: batch1 and batch2 must have the same number of batches");
        return {axpby(c.t("input"), ops::sum(ops::matmul(a, b), {0}), c.f("beta"), c.f("alpha"))};
      });
  // chain_matmul(*matrices) and linalg.multi_dot(list): left to right (the association changes rounding
  // only).
  auto chain = [](const std::vector<Var>& ms, bool multi_dot) {
    if (ms.empty()) invalid("multi_dot(): expected at least 2 tensors but got 0");
    if (ms.size() == 1) {
      if (multi_dot) invalid("multi_dot(): expected at least 2 tensors but got 1");
      return ms[0];
    }
    for (std::size_t k = 0; k < ms.size(); ++k) {
      const bool end = multi_dot && (k == 0 || k + 1 == ms.size());
      if (ms[k].ndim() != 2 && !(end && ms[k].ndim() == 1))
        invalid(fmt::format("{}(): tensor {} must be 2D but got {}D",
                            multi_dot ? "multi_dot" : "chain_matmul", k, ms[k].ndim()));
    }
    Var r = ms[0];
    for (std::size_t k = 1; k < ms.size(); ++k) r = ops::matmul(r, ms[k]);
    return r;
  };
  def(reg, {"Torch.chain_matmul"}, "chain_matmul(Tensor... matrices) -> Tensor",
      [chain](Ctx& c) -> Outs { return {chain(c.ts("matrices"), false)}; });
  def(reg, {"Torch.linalg.multi_dot"}, "multi_dot(Tensor[] tensors, *, Tensor? out=None) -> Tensor",
      [chain](Ctx& c) -> Outs { return {chain(c.ts("tensors"), true)}; });
  def(reg, names("tensordot", kTorch),
      "tensordot(Tensor a, Tensor b, Any dims=2, Tensor? out=None) -> Tensor", [](Ctx& c) -> Outs {
        Var a = c.t("a"), b = c.t("b");
        std::vector<std::int64_t> da, db;
        const Value& dv = c["dims"];
        if (dv.is_list() && dv.list().size() == 2 && !dv.list()[0].is_none()) {
          auto ints_of = [](const Value& v) {
            std::vector<std::int64_t> r;
            if (v.is_list())
              for (const Value& e : v.list()) r.push_back(static_cast<std::int64_t>(e.as_double()));
            else
              r.push_back(static_cast<std::int64_t>(v.as_double()));
            return r;
          };
          da = ints_of(dv.list()[0]);
          db = ints_of(dv.list()[1]);
        } else {
          const auto n = static_cast<std::int64_t>(dv.as_double());
          if (n < 0 || n > a.ndim() || n > b.ndim())
            invalid("tensordot expects dims >= 0 and <= the operands' ranks");
          for (std::int64_t k = 0; k < n; ++k) {
            da.push_back(a.ndim() - n + k);
            db.push_back(k);
          }
        }
        if (da.size() != db.size()) invalid("both dimension lists should have same length");
        std::vector<bool> ca(static_cast<std::size_t>(a.ndim()), false),
            cb(static_cast<std::size_t>(b.ndim()), false);
        std::int64_t k = 1;
        for (std::size_t j = 0; j < da.size(); ++j) {
          const int x = wrap_dim(da[j], a.ndim()), y = wrap_dim(db[j], b.ndim());
          if (a.shape()[static_cast<std::size_t>(x)] != b.shape()[static_cast<std::size_t>(y)])
            invalid(fmt::format(
                "contracted dimensions need to match, but first has size {} in dim {} and second has "
                "size {} in dim {}",
                a.shape()[static_cast<std::size_t>(x)], x, b.shape()[static_cast<std::size_t>(y)], y));
          ca[static_cast<std::size_t>(x)] = cb[static_cast<std::size_t>(y)] = true;
          da[j] = x;
          db[j] = y;
          k *= a.shape()[static_cast<std::size_t>(x)];
        }
        std::vector<std::int64_t> pa, pb;
        Shape out;
        std::int64_t m = 1, n = 1;
        for (int d = 0; d < a.ndim(); ++d)
          if (!ca[static_cast<std::size_t>(d)]) {
            pa.push_back(d);
            out.push_back(a.shape()[static_cast<std::size_t>(d)]);
            m *= a.shape()[static_cast<std::size_t>(d)];
          }
        pa.insert(pa.end(), da.begin(), da.end());
        pb.insert(pb.end(), db.begin(), db.end());
        for (int d = 0; d < b.ndim(); ++d)
          if (!cb[static_cast<std::size_t>(d)]) {
            pb.push_back(d);
            out.push_back(b.shape()[static_cast<std::size_t>(d)]);
            n *= b.shape()[static_cast<std::size_t>(d)];
          }
        Var r = ops::matmul(reshape(permute(a, pa), {m, k}), reshape(permute(b, pb), {k, n}));
        return {reshape(r, out)};
      });
}

}  // namespace probe::runners
