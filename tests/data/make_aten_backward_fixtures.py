#!/usr/bin/python3
"""Runner fixtures for the aten ops that a LibTorch training step runs and Python's functional API hides:
the derivative ops autograd calls in backward (gelu_backward, native_layer_norm_backward,
_softmax_backward_data, _log_softmax_backward_data, nll_loss_backward) and the aten losses with integer
reductions (cross_entropy_loss, nll_loss_nd, nll_loss, nll_loss_forward), plus native_layer_norm.
tests/data/runners/aten_backward.json, same format as make_runner_fixtures.py (see there).

    /usr/bin/python3 tests/data/make_aten_backward_fixtures.py

Every expected value is torch.ops.aten.<op> on float64 copies of the inputs. The saved tensors a backward
op takes (softmax output, layer-norm mean and rstd, nll total_weight) are computed here by the forward op
in the inputs' dtype, as autograd saves them.
"""
import torch

from make_runner_fixtures import C, T, I, write

A = torch.ops.aten
GEN = torch.Generator().manual_seed(30)


def rand(shape, dtype, low=-2.0, high=2.0):
    return (torch.rand(shape, generator=GEN, dtype=torch.float64) * (high - low) + low).to(dtype)


def given(t):
    """A fixed tensor as an input spec."""
    return T(str(t.dtype).replace("torch.", ""), tuple(t.shape), values=t.to(torch.float64).reshape(-1).tolist())


# softmax backward subtracts O(1) terms (p (g - <g, p>)), as does the layer-norm one (g - mean(g) - x^ mean(g x^)):
# an element that cancels keeps an absolute rounding error of ~1e-16 of the terms, rounded differently by torch's
# fused kernels.
CANCEL = dict(rtol=1e-12, atol=1e-14, tol_reason="softmax/layer-norm backward cancels O(1) terms: absolute "
                                                 "rounding ~1e-16 of the summed terms, summed in another order")


def gelu_cases():
    c = []
    for dt in (torch.float32, torch.float64):
        name = str(dt).replace("torch.", "")
        for ap in ("none", "tanh"):
            c.append(C("Aten.gelu_backward.default", f"{name}_{ap}", [given(rand((3, 4), dt)), given(rand((3, 4), dt, -4, 4))],
                       {"approximate": ap}, grad=False))
    c.append(C("Aten.gelu_backward.default", "default_approximate", [given(rand((5,), torch.float32)),
                                                                     given(rand((5,), torch.float32, -3, 3))], grad=False))
    return c


def softmax_cases():
    c = []
    for log in (False, True):
        api = "Aten._log_softmax_backward_data.default" if log else "Aten._softmax_backward_data.default"
        fwd = A._log_softmax if log else A._softmax
        for dt, shape, dim in ((torch.float32, (2, 3, 5), -1), (torch.float64, (4, 3), 0), (torch.float32, (2, 4, 3), 1)):
            x = rand(shape, dt, -3, 3)
            out = fwd(x, dim, False)
            c.append(C(api, f"{str(dt)[6:]}_dim{dim}", [given(rand(shape, dt)), given(out), dim, dt], grad=False, **CANCEL))
    return c


def layer_norm_cases():
    c = []
    for dt, shape, ns, affine, mask in ((torch.float32, (2, 3, 4), [4], True, [True, True, True]),
                                        (torch.float64, (3, 2, 5), [2, 5], True, [True, True, True]),
                                        (torch.float32, (4, 6), [6], False, [True, False, False]),
                                        (torch.float32, (2, 6), [6], True, [False, True, False])):
        x = rand(shape, dt)
        w = rand(ns, dt, 0.5, 1.5) if affine else None
        b = rand(ns, dt) if affine else None
        _, mean, rstd = A.native_layer_norm(x, ns, w, b, 1e-5)
        args = [given(rand(shape, dt)), given(x), ns, given(mean), given(rstd),
                given(w) if affine else None, given(b) if affine else None, mask]
        c.append(C("Aten.native_layer_norm_backward.default", f"{str(dt)[6:]}_{len(ns)}d_{'affine' if affine else 'plain'}_"
                   + "".join("1" if m else "0" for m in mask), args, grad=False, **CANCEL))
    c.append(C("Aten.native_layer_norm.default", "float32_affine", [T("float32", (2, 3, 4)), [4], T("float32", (4,)),
                                                                     T("float32", (4,)), 1e-5], **CANCEL))
    c.append(C("Aten.native_layer_norm.default", "float64_plain", [T("float64", (3, 2, 5)), [2, 5], None, None, 1e-6],
               **CANCEL))
    return c


def nll_cases():
    c = []
    tgt = [1, -100, 4, 0]
    w = T("float32", (5,), low=0.2, high=2.0)
    for red in (0, 1, 2):
        c.append(C("Aten.nll_loss_forward.default", f"float32_r{red}", [T("float32", (4, 5)), I(tgt), None, red, -100]))
        c.append(C("Aten.nll_loss_forward.default", f"weight_r{red}", [T("float64", (4, 5)), I(tgt), w, red, -100],
                   grad=False))
    c.append(C("Aten.nll_loss_forward.default", "one_dim", [T("float32", (5,)), I(3), w, 1, -100], grad=False))
    c.append(C("Aten.nll_loss_forward.default", "all_ignored", [T("float32", (2, 5)), I([2, 2]), None, 1, 2], grad=False))
    c.append(C("Aten.nll_loss_forward.default", "ignore_index_3", [T("float64", (4, 5)), I([3, 1, 3, 2]), None, 1, 3]))

    for dt, red, weighted in ((torch.float32, 1, False), (torch.float64, 2, True), (torch.float32, 0, True),
                              (torch.float32, 1, True)):
        x = rand((4, 5), dt)
        wt = rand((5,), dt, 0.2, 2.0) if weighted else None
        target = torch.tensor(tgt)
        _, total = A.nll_loss_forward(x, target, wt, red, -100)
        g = rand((4,) if red == 0 else (), dt)
        c.append(C("Aten.nll_loss_backward.default", f"{str(dt)[6:]}_r{red}_{'weight' if weighted else 'plain'}",
                   [given(g), given(x), I(tgt), given(wt) if weighted else None, red, -100, given(total)], grad=False))

    c.append(C("Aten.nll_loss_nd.default", "three_dims", [T("float32", (2, 5, 3)), I([[0, 4, -100], [2, 2, 1]])]))
    c.append(C("Aten.nll_loss_nd.default", "sum", [T("float64", (3, 5)), I([4, 0, 1])], {"reduction": 2}))
    c.append(C("Aten.nll_loss.default", "default_mean", [T("float32", (3, 5)), I([4, -100, 1])]))
    c.append(C("Aten.nll_loss.default", "none_weight", [T("float32", (3, 5)), I([4, 0, 1]), w, 0], grad=False))
    c.append(C("Aten.cross_entropy_loss.default", "default_mean", [T("float32", (4, 5)), I([1, 3, -100, 0])]))
    c.append(C("Aten.cross_entropy_loss.default", "smoothing_sum", [T("float64", (4, 5)), I([1, 3, 2, 0])],
               {"reduction": 2, "label_smoothing": 0.1}))
    c.append(C("Aten.cross_entropy_loss.default", "weight_none", [T("float32", (3, 5)), I([1, 3, 2]), w, 0],
               grad=False))
    return c


if __name__ == "__main__":
    write("aten_backward", gelu_cases() + softmax_cases() + layer_norm_cases() + nll_cases())
