#!/usr/bin/python3
"""Runner fixtures for the neural-network runners (conv, pooling, padding, interpolation, embedding,
norms, losses, attention, NPU fused ops): tests/data/runners/nn.json, same format as
make_runner_fixtures.py (see there).

    /usr/bin/python3 tests/data/make_nn_runner_fixtures.py

The Debian torch (1.13) lacks F.scaled_dot_product_attention and F.rms_norm, and torch_npu is not
available: those APIs are evaluated by the documented reference formulas below (torch ops in float64),
written from the PyTorch / torch_npu documentation.
"""
import math

import torch
import torch.nn.functional as F

import make_runner_fixtures as mrf
from make_runner_fixtures import C, T, I, write


def f32(*shape, **kw):
    return T("float32", shape, **kw)


def _detached(kwargs, *names):
    return {k: (v.detach().clone() if k in names and isinstance(v, torch.Tensor) else v) for k, v in kwargs.items()}


def sdpa_ref(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """The reference implementation given in the PyTorch documentation of scaled_dot_product_attention."""
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    attn_bias = torch.zeros(L, S, dtype=query.dtype)
    if is_causal:
        temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
        attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn_bias = attn_bias.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            attn_bias = attn_mask + attn_bias
    attn_weight = query @ key.transpose(-2, -1) * scale_factor
    attn_weight = attn_weight + attn_bias
    attn_weight = torch.softmax(attn_weight, dim=-1)
    return attn_weight @ value


_CALL_DTYPE = {}


def rms_norm_ref(input, normalized_shape, weight=None, eps=None):
    """eps=None means the machine epsilon of the call's compute type (float32 for half types), i.e. of the
    dtype the device sees, not of the float64 copy: the generator calls each API with the original dtypes
    first (device dtypes), then with float64 copies."""
    dims = tuple(range(-len(normalized_shape), 0))
    if input.dtype != torch.float64:
        _CALL_DTYPE["rms_norm"] = input.dtype
    if eps is None:
        dt = input.dtype if input.dtype != torch.float64 else _CALL_DTYPE.pop("rms_norm", torch.float64)
        eps = torch.finfo(torch.float32 if dt in (torch.float16, torch.bfloat16) else dt).eps
    y = input * torch.rsqrt(input.pow(2).mean(dims, keepdim=True) + eps)
    return y * weight if weight is not None else y


def _keep32(t, like):
    """NPU side outputs in float32; the float64 bench run keeps float64."""
    return t if like.dtype == torch.float64 else t.to(torch.float32)


def npu_rms_norm_ref(input, gamma, epsilon=1e-6):
    dims = tuple(range(-gamma.dim(), 0))
    rstd = torch.rsqrt(input.pow(2).mean(dims, keepdim=True) + epsilon)
    return (input * rstd * gamma).to(input.dtype), _keep32(rstd, input)


def npu_swiglu_ref(input, dim=-1):
    a, b = torch.chunk(input, 2, dim=dim)
    return F.silu(a) * b


def npu_rotary_mul_ref(input, r1, r2, rotary_mode="half"):
    if rotary_mode == "half":
        x1, x2 = torch.chunk(input, 2, -1)
        rot = torch.cat((-x2, x1), dim=-1)
    else:
        rot = torch.stack((-input[..., 1::2], input[..., 0::2]), dim=-1).reshape(input.shape)
    return r1 * input + r2 * rot


def npu_fusion_attention_ref(query, key, value, head_num, input_layout, pse=None, padding_mask=None,
                             atten_mask=None, scale=1.0, keep_prob=1.0, pre_tockens=2147483647,
                             next_tockens=2147483647, inner_precise=0, prefix=None, actual_seq_qlen=None,
                             actual_seq_kvlen=None, sparse_mode=0, gen_mask_parallel=True, sync=False):
    """torch_npu's documented semantics: softmax(mask(scale * (q k^T + pse))) v with masked scores
    lowered by 40000, GQA by repeating key/value heads, sparse_mode 0-4 masks."""
    def to_bnsd(x):
        if input_layout == "BNSD":
            return x
        if input_layout == "BSND":
            return x.permute(0, 2, 1, 3)
        d = query.shape[2] // head_num
        if input_layout == "BSH":
            return x.reshape(x.shape[0], x.shape[1], -1, d).permute(0, 2, 1, 3)
        return x.reshape(x.shape[0], x.shape[1], -1, d).permute(1, 2, 0, 3)  # SBH
    q, k, v = to_bnsd(query), to_bnsd(key), to_bnsd(value)
    b, n1, s1, d = q.shape
    n2, s2 = k.shape[1], k.shape[2]
    if n2 != n1:
        k = k.repeat_interleave(n1 // n2, dim=1)
        v = v.repeat_interleave(n1 // n2, dim=1)
    qk = q @ k.transpose(-2, -1)
    if pse is not None:
        qk = qk + pse
    qk = qk * scale
    i = torch.arange(s1).unsqueeze(1)
    j = torch.arange(s2).unsqueeze(0)
    if atten_mask is not None:
        mask = atten_mask.bool()
    elif sparse_mode in (0, 4):
        mask = (j - i > next_tockens) | (i - j > pre_tockens)
    elif sparse_mode == 1:
        mask = None
    elif sparse_mode == 2:
        mask = j - i >= 1
    else:
        mask = j - i >= s2 - s1 + 1
    if mask is not None:
        qk = qk + mask.to(qk.dtype) * -40000.0
    out = torch.softmax(qk, -1) @ v
    if input_layout == "BSND":
        out = out.permute(0, 2, 1, 3)
    elif input_layout == "BSH":
        out = out.permute(0, 2, 1, 3).reshape(b, s1, n1 * d)
    elif input_layout == "SBH":
        out = out.permute(2, 0, 1, 3).reshape(s1, b, n1 * d)
    sc = qk.detach()
    mx = sc.amax(-1, keepdim=True)
    sm = (sc - mx).exp().sum(-1, keepdim=True)
    rep = lambda t: _keep32(t.expand(b, n1, s1, 8).contiguous(), query)
    return out.to(query.dtype), rep(mx), rep(sm), None, None, None, None


REFS = {
    "Functional.scaled_dot_product_attention": sdpa_ref,
    "Functional.rms_norm": rms_norm_ref,
    "NPU.npu_rms_norm": npu_rms_norm_ref,
    "NPU.npu_swiglu": npu_swiglu_ref,
    "NPU.npu_rotary_mul": npu_rotary_mul_ref,
    "NPU.npu_fusion_attention": npu_fusion_attention_ref,
    # class weights and running statistics carry no gradient in torch (and batch_norm updates the latter in place)
    "Functional.nll_loss": lambda *a, **k: F.nll_loss(*a, **_detached(k, "weight")),
    "Functional.cross_entropy": lambda *a, **k: F.cross_entropy(*a, **_detached(k, "weight")),
    "Functional.batch_norm": lambda x, rm, rv, *a, **k: F.batch_norm(
        x, None if rm is None else rm.detach().clone(), None if rv is None else rv.detach().clone(), *a, **k),
}
_resolve = mrf.resolve
mrf.resolve = lambda api: REFS[api] if api in REFS else _resolve(api)

# Backward of softmax (p * (g - <g, p>)) and of normalisations (g - mean(g) - x_hat * mean(g x_hat)) subtracts
# O(1) terms: an element that cancels to ~1e-6 keeps an absolute rounding error of ~1e-16 * O(1), which torch's
# fused kernels and probe's composite round differently. Relative 1e-12 plus absolute 1e-14 covers exactly that.
CANCEL_TOL = dict(atol=1e-14, tol_reason="softmax/normalisation backward cancels O(1) terms: absolute rounding "
                                         "~1e-16 of the summed terms, summed in a different order than torch")


def tol(cases):
    for c in cases:
        if c.atol is None:
            c.rtol, c.atol, c.tol_reason = 1e-12, CANCEL_TOL["atol"], CANCEL_TOL["tol_reason"]
    return cases


def conv_cases():
    c = []
    c += [C("Functional.conv2d", "bias", [f32(2, 3, 5, 5), f32(4, 3, 3, 3), f32(4)]),
          C("Functional.conv2d", "stride_padding", [f32(2, 3, 6, 5), f32(4, 3, 3, 3)], {"stride": 2, "padding": 1}),
          C("Functional.conv2d", "dilation_groups_asym", [f32(1, 4, 6, 7), f32(6, 2, 3, 2), f32(6)],
            {"stride": [1, 2], "padding": [1, 2], "dilation": [2, 1], "groups": 2}),
          C("Functional.conv2d", "same_even_kernel", [f32(1, 2, 5, 6), f32(3, 2, 2, 4)],
            {"padding": "same", "dilation": [1, 2]}),
          C("Functional.conv2d", "valid", [f32(1, 2, 5, 6), f32(3, 2, 3, 3)], {"padding": "valid"}),
          C("Functional.conv2d", "unbatched", [f32(3, 5, 5), f32(2, 3, 3, 3), f32(2)]),
          C("Functional.conv2d", "empty_batch", [f32(0, 3, 5, 5), f32(2, 3, 3, 3), f32(2)]),
          C("Functional.conv2d", "noncontig", [f32(2, 3, 4, 4, noncontig=True), f32(2, 3, 3, 3)]),
          C("Functional.conv2d", "nan_inf", [T("float32", (1, 1, 4, 4), values=[0.5] * 5 + [float("nan")] + [1.0] * 9
                                                + [float("inf")]), f32(2, 1, 2, 2)]),
          C("Functional.conv2d", "f16", [T("float16", (1, 2, 4, 4)), T("float16", (3, 2, 3, 3))]),
          C("Functional.conv2d", "pointwise", [f32(2, 8, 4, 4), f32(5, 8, 1, 1), f32(5)]),
          C("Functional.conv2d", "depthwise", [f32(2, 4, 5, 5), f32(4, 1, 3, 3)], {"groups": 4, "padding": 1}),
          C("Functional.conv2d", "bf16", [T("bfloat16", (1, 2, 4, 4)), T("bfloat16", (3, 2, 3, 3))]),
          C("Torch.conv2d", "positional", [f32(1, 2, 5, 5), f32(2, 2, 3, 3), None, 2, 1]),
          C("Functional.conv1d", "stride_pad", [f32(2, 3, 10), f32(4, 3, 3), f32(4)], {"stride": 2, "padding": 1}),
          C("Functional.conv1d", "same_dilation_groups", [f32(1, 4, 9), f32(6, 2, 4)],
            {"padding": "same", "dilation": 2, "groups": 2}),
          C("Functional.conv1d", "unbatched", [f32(3, 7), f32(2, 3, 3)]),
          C("Functional.conv_transpose2d", "stride_outpad", [f32(2, 4, 3, 3), f32(4, 3, 3, 3), f32(3)],
            {"stride": 2, "padding": 1, "output_padding": 1}),
          C("Functional.conv_transpose2d", "groups_dilation", [f32(1, 4, 4, 3), f32(4, 2, 2, 3)],
            {"stride": [1, 2], "groups": 2, "dilation": [2, 1]}),
          C("Functional.conv_transpose2d", "unbatched", [f32(2, 3, 3), f32(2, 3, 2, 2)]),
          C("Functional.conv_transpose1d", "basic", [f32(2, 3, 5), f32(3, 2, 3)], {"stride": 2})]
    return c


def pool_cases():
    nan_img = [float(v) for v in range(16)]
    nan_img[5] = float("nan")
    c = [C("Functional.max_pool2d", "k3s2p1", [f32(2, 3, 7, 7)], {"kernel_size": 3, "stride": 2, "padding": 1}),
         C("Functional.max_pool2d", "indices", [f32(1, 2, 5, 6)], {"kernel_size": 2, "return_indices": True}),
         C("Functional.max_pool2d", "ceil_dilation", [f32(1, 2, 7, 8)],
           {"kernel_size": [2, 3], "stride": [2, 2], "dilation": [2, 1], "ceil_mode": True}),
         C("Functional.max_pool2d", "nan_unbatched", [T("float32", (1, 4, 4), values=nan_img)], {"kernel_size": 2}),
         C("Functional.max_pool2d", "ties", [T("float32", (1, 1, 2, 4), values=[1, 1, 2, 2, 1, 1, 2, 2])],
           {"kernel_size": 2}),
         C("Torch.max_pool2d", "positional", [f32(1, 2, 6, 6), [3, 3], [2, 2], [1, 1]]),
         C("Functional.max_pool1d", "basic", [f32(2, 3, 9)], {"kernel_size": 3, "stride": 2}),
         C("Functional.avg_pool2d", "include_pad", [f32(2, 3, 7, 7)], {"kernel_size": 3, "stride": 2, "padding": 1}),
         C("Functional.avg_pool2d", "exclude_pad_ceil", [f32(1, 2, 7, 6)],
           {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
         C("Functional.avg_pool2d", "ceil_include_pad", [f32(1, 2, 6, 6)],
           {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
         C("Functional.avg_pool2d", "divisor_override", [f32(1, 2, 4, 4)], {"kernel_size": 2, "divisor_override": 3}),
         C("Functional.avg_pool2d", "empty_batch", [f32(0, 2, 4, 4)], {"kernel_size": 2}),
         C("Functional.avg_pool1d", "basic", [f32(2, 3, 9)], {"kernel_size": 4, "stride": 3, "padding": 2}),
         C("Functional.adaptive_avg_pool2d", "uneven", [f32(2, 3, 7, 9)], {"output_size": [3, 4]}),
         C("Functional.adaptive_avg_pool2d", "global", [f32(2, 3, 5, 5)], {"output_size": 1}),
         C("Functional.adaptive_avg_pool2d", "none_dim", [f32(1, 2, 6, 5)], {"output_size": [None, 2]}),
         C("Functional.adaptive_avg_pool2d", "upsample", [f32(1, 1, 2, 3)], {"output_size": [5, 4]}),
         C("Functional.adaptive_avg_pool1d", "basic", [f32(2, 2, 10)], {"output_size": 4}),
         C("Functional.pad", "constant_value", [f32(2, 3, 4)], {"pad": [1, 2, 0, 1], "value": 0.5}),
         C("Functional.pad", "constant_crop", [f32(2, 3, 4)], {"pad": [-1, 2, 1, -1]}),
         C("Functional.pad", "constant_int", [T("int64", (2, 3), low=-5, high=5)], {"pad": [1, 1]}),
         C("Functional.pad", "bool", [T("bool", (2, 3))], {"pad": [1, 0]}),
         C("Functional.pad", "reflect_2d", [f32(1, 2, 4, 5)], {"pad": [2, 1, 3, 1], "mode": "reflect"}),
         C("Functional.pad", "replicate_1d", [f32(2, 3, 4)], {"pad": [3, 2], "mode": "replicate"}),
         C("Functional.pad", "replicate_2d", [f32(1, 2, 3, 3)], {"pad": [1, 2, 2, 0], "mode": "replicate"}),
         C("Functional.pad", "circular_2d", [f32(1, 2, 3, 4)], {"pad": [1, 2, 2, 1], "mode": "circular"}),
         C("Functional.interpolate", "nearest_size", [f32(1, 2, 3, 4)], {"size": [5, 7]}),
         C("Functional.interpolate", "nearest_scale2", [f32(1, 2, 3, 4)], {"scale_factor": 2}),
         C("Functional.interpolate", "nearest_scale_frac", [f32(1, 2, 5, 4)], {"scale_factor": [1.5, 0.75]}),
         C("Functional.interpolate", "bilinear", [f32(2, 2, 3, 4)], {"size": [5, 6], "mode": "bilinear"}),
         C("Functional.interpolate", "bilinear_align", [f32(1, 2, 3, 4)],
           {"size": [5, 7], "mode": "bilinear", "align_corners": True}),
         C("Functional.interpolate", "bilinear_down_scale", [f32(1, 2, 6, 7)],
           {"scale_factor": 0.6, "mode": "bilinear", "align_corners": False}),
         C("Functional.interpolate", "bilinear_recompute", [f32(1, 1, 4, 5)],
           {"scale_factor": 1.7, "mode": "bilinear", "recompute_scale_factor": True}),
         C("Functional.interpolate", "linear_1d", [f32(2, 3, 5)], {"size": 8, "mode": "linear"}),
         C("Functional.interpolate", "nearest_1d", [f32(2, 3, 5)], {"size": 3}),
         C("Functional.embedding", "basic", [I([[0, 3, 9], [3, 3, 1]]), f32(10, 4)]),
         C("Functional.embedding", "padding_idx", [I([[0, 2, 4], [2, 1, 2]]), f32(5, 3)], {"padding_idx": 2}),
         C("Functional.embedding", "neg_padding_idx_int32", [I([1, 4, 0], dtype="int32"), f32(5, 3)],
           {"padding_idx": -1}),
         C("Functional.embedding", "max_norm", [I([0, 2, 2]), f32(4, 3, low=-3, high=3)], {"max_norm": 1.0}),
         C("Functional.embedding", "scale_grad_by_freq", [I([1, 1, 3, 1]), f32(4, 2)], {"scale_grad_by_freq": True}),
         C("Functional.embedding", "empty", [I([], dtype="int64"), f32(4, 2)])]
    return c


def norm_cases():
    return [
        C("Functional.layer_norm", "affine", [f32(2, 3, 4), [4], f32(4), f32(4)]),
        C("Functional.layer_norm", "two_dims_no_affine", [f32(2, 3, 4), [3, 4]], {"eps": 1e-3}),
        C("Functional.layer_norm", "bf16", [T("bfloat16", (2, 5)), [5], T("bfloat16", (5,)), T("bfloat16", (5,))]),
        C("Functional.layer_norm", "f16", [T("float16", (2, 4)), [4]]),
        C("Functional.layer_norm", "nan_row", [T("float32", (2, 3), values=[1.0, float("nan"), 2.0, 0.5, -1.0, 3.0]),
                                               [3]]),
        C("Functional.layer_norm", "empty_batch", [f32(0, 4), [4], f32(4), f32(4)]),
        C("Functional.layer_norm", "noncontig", [f32(4, 3, noncontig=True), [3]]),
        C("Functional.rms_norm", "weight", [f32(2, 3, 4), [4], f32(4)], {"eps": 1e-6}),
        C("Functional.rms_norm", "default_eps", [f32(2, 6), [6]]),
        C("NPU.npu_rms_norm", "default", [f32(2, 3, 8), f32(8)]),
        C("NPU.npu_rms_norm", "bf16_eps", [T("bfloat16", (2, 8)), T("bfloat16", (8,))], {"epsilon": 1e-5}),
        C("NPU.npu_rms_norm", "gamma_2d", [f32(2, 3, 4), f32(3, 4)]),
        C("Functional.batch_norm", "eval", [f32(4, 3, 5), f32(3), f32(3, low=0.5, high=2), f32(3), f32(3)]),
        C("Functional.batch_norm", "train", [f32(4, 3, 2, 2), f32(3), f32(3, low=0.5, high=2), f32(3), f32(3)],
          {"training": True, "momentum": 0.2}),
        C("Functional.batch_norm", "train_no_stats", [f32(5, 2), None, None], {"training": True, "eps": 1e-3}),
        C("Functional.group_norm", "affine", [f32(2, 6, 4, 3), 3, f32(6), f32(6)]),
        C("Functional.group_norm", "one_group", [f32(2, 4, 5), 1], {"eps": 1e-3}),
        C("Functional.group_norm", "instance_like", [f32(2, 3, 4), 3, f32(3)]),
    ]


def loss_cases():
    tgt = I([1, 0, 4, 2])
    tgt_ign = I([1, -100, 4, 2])
    return [
        C("Functional.cross_entropy", "indices", [f32(4, 5), tgt]),
        C("Functional.cross_entropy", "weight_ignore", [f32(4, 5), I([1, 3, 4, 3])], {"weight": f32(5, low=0.1, high=2),
                                                                                   "ignore_index": 3}),
        C("Functional.cross_entropy", "label_smoothing", [f32(4, 5), tgt_ign], {"label_smoothing": 0.1}),
        C("Functional.cross_entropy", "ls_weight_sum", [f32(4, 5), tgt_ign],
          {"label_smoothing": 0.2, "weight": f32(5, low=0.1, high=2), "reduction": "sum"}),
        C("Functional.cross_entropy", "ls_weight_mean", [f32(4, 5), tgt_ign],
          {"label_smoothing": 0.2, "weight": f32(5, low=0.1, high=2)}),
        C("Functional.cross_entropy", "none", [f32(4, 5), tgt_ign], {"reduction": "none"}),
        C("Functional.cross_entropy", "probs", [f32(3, 4), T("float32", (3, 4), low=0, high=1)]),
        C("Functional.cross_entropy", "probs_ls_weight", [f32(3, 4), T("float32", (3, 4), low=0, high=1)],
          {"label_smoothing": 0.3, "weight": f32(4, low=0.5, high=1.5)}),
        C("Functional.cross_entropy", "spatial", [f32(2, 4, 3, 3), I([[[0, 1, 2], [3, 3, 0], [1, 1, 2]],
                                                                     [[2, 0, 1], [0, 3, 3], [2, 2, 1]]])]),
        C("Functional.cross_entropy", "unbatched", [f32(5), I(3)]),
        C("Functional.cross_entropy", "legacy_size_average", [f32(4, 5), tgt], {"size_average": False}),
        C("Functional.cross_entropy", "bf16", [T("bfloat16", (3, 4)), I([0, 3, 1])]),
        C("Functional.nll_loss", "basic", [f32(4, 5, low=-5, high=0), tgt]),
        C("Functional.nll_loss", "weight_ignore_none", [f32(4, 5, low=-5, high=0), tgt_ign],
          {"weight": f32(5, low=0.1, high=2), "reduction": "none"}),
        C("Functional.nll_loss", "all_ignored", [f32(2, 3), I([-100, -100])]),
        C("Functional.mse_loss", "mean", [f32(3, 4), f32(3, 4)]),
        C("Functional.mse_loss", "sum_bf16", [T("bfloat16", (5,)), T("bfloat16", (5,))], {"reduction": "sum"}),
        C("Functional.mse_loss", "none_noncontig", [f32(3, 2, noncontig=True), f32(3, 2)], {"reduction": "none"}),
        C("Functional.mse_loss", "f16", [T("float16", (4,)), T("float16", (4,))]),
        C("Functional.l1_loss", "scalar", [f32(), f32()]),
        C("Functional.mse_loss", "empty", [f32(0, 3), f32(0, 3)]),
        C("Functional.l1_loss", "mean_with_ties", [T("float32", (4,), values=[1.0, 2.0, -1.0, 0.5]),
                                                   T("float32", (4,), values=[1.0, 1.0, 0.0, 0.5])]),
        C("Functional.l1_loss", "sum", [f32(2, 3), f32(2, 3)], {"reduction": "sum"}),
    ]


def attention_cases():
    causal_bool = T("bool", (4, 6))
    return [
        C("Functional.scaled_dot_product_attention", "basic", [f32(2, 2, 4, 8), f32(2, 2, 6, 8), f32(2, 2, 6, 5)]),
        C("Functional.scaled_dot_product_attention", "causal_scale", [f32(1, 2, 5, 4), f32(1, 2, 5, 4), f32(1, 2, 5, 4)],
          {"is_causal": True, "scale": 0.3}),
        C("Functional.scaled_dot_product_attention", "bool_mask",
          [f32(1, 2, 4, 4), f32(1, 2, 6, 4), f32(1, 2, 6, 3)],
          {"attn_mask": T("bool", (4, 6), values=[1, 1, 0, 1, 0, 1] * 4)}),
        C("Functional.scaled_dot_product_attention", "float_mask_3d", [f32(3, 4, 8), f32(3, 5, 8), f32(3, 5, 8)],
          {"attn_mask": f32(3, 4, 5)}),
        C("Functional.scaled_dot_product_attention", "fully_masked_row_nan", [f32(1, 2, 3), f32(1, 2, 3), f32(1, 2, 3)],
          {"attn_mask": T("bool", (2, 2), values=[1, 0, 0, 0])}, grad=False),
        C("Functional.scaled_dot_product_attention", "bf16", [T("bfloat16", (1, 2, 3, 4))] * 3),
        C("NPU.npu_fusion_attention", "bnsd_scale", [f32(1, 2, 4, 8), f32(1, 2, 4, 8), f32(1, 2, 4, 8), 2, "BNSD"],
          {"scale": 0.35}),
        C("NPU.npu_fusion_attention", "bsnd_gqa_causal",
          [f32(2, 5, 4, 4), f32(2, 5, 2, 4), f32(2, 5, 2, 4), 4, "BSND"], {"scale": 0.5, "sparse_mode": 2}),
        C("NPU.npu_fusion_attention", "sbh_mask_pse", [f32(4, 1, 8), f32(6, 1, 8), f32(6, 1, 8), 2, "SBH"],
          {"atten_mask": causal_bool, "pse": f32(1, 2, 4, 6), "scale": 0.25}),
        C("NPU.npu_fusion_attention", "bsh_band", [f32(1, 6, 8), f32(1, 6, 8), f32(1, 6, 8), 2, "BSH"],
          {"pre_tockens": 2, "next_tockens": 1, "sparse_mode": 4}),
        C("NPU.npu_fusion_attention", "bnsd_sparse3_rect", [f32(1, 1, 3, 4), f32(1, 1, 5, 4), f32(1, 1, 5, 4), 1,
                                                            "BNSD"], {"sparse_mode": 3}),
        C("NPU.npu_fusion_attention", "bf16_default_scale", [T("bfloat16", (1, 2, 3, 4))] * 3 + [2, "BNSD"]),
        C("NPU.npu_swiglu", "last_dim", [f32(2, 3, 8, low=-4, high=4)]),
        C("NPU.npu_swiglu", "dim0_bf16", [T("bfloat16", (4, 3))], {"dim": 0}),
        C("NPU.npu_rotary_mul", "half", [f32(1, 2, 3, 8), f32(1, 1, 3, 8), f32(1, 1, 3, 8)]),
        C("NPU.npu_rotary_mul", "interleave_bcast", [f32(2, 3, 2, 4), f32(1, 3, 1, 4), f32(1, 3, 1, 4)],
          {"rotary_mode": "interleave"}),
        C("NPU.npu_rotary_mul", "bf16", [T("bfloat16", (1, 2, 2, 4)), T("bfloat16", (1, 1, 2, 4)),
                                         T("bfloat16", (1, 1, 2, 4))]),
    ]


if __name__ == "__main__":
    write("nn", conv_cases() + pool_cases() + tol(norm_cases()) + loss_cases() + tol(attention_cases()))
