#!/usr/bin/python3
"""Writes MindSpore-NPU vs PyTorch-bench dump pairs under tests/data/dump_mapping/ for `compare -lm` and `-am`.

Run with Debian's interpreter (it has torch and numpy):  /usr/bin/python3 tests/data/make_dump_mapping_fixtures.py

The dumps have the shape of msprobe's own layer-mapping fixture (shared/spec/dump-and-compare.md §7: a PanGu /
Megatron model, level mix, statistics task): dump.json in msprobe's key and field order, construct.json with each
entry's parent, stack.json with the Python stacks msprobe records (NPU side in the current grouped format, bench
side in the legacy {key: frames} format). Statistics are taken by torch from real tensors; the NPU tensors are
the bench tensors plus a small perturbation, and one (flash attention's output) is broken on purpose.
expected.json holds the row pairs that §3.4.5 / §3.4.3 give, worked out by hand from the model structure below
(comments say why each pair is what it is), and the numpy statistics of the broken row.
"""
import json
import os
import shutil

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "dump_mapping")

MS_DT = {torch.float32: "Float32", torch.bfloat16: "BFloat16", torch.int32: "Int32", torch.int64: "Int64",
         torch.bool: "Bool"}


def stats(t):
    if t.dtype == torch.bool:
        return bool(t.any()), bool(t.all()), None, None
    f = t.float()
    return f.max().item(), f.min().item(), f.mean().item(), torch.norm(f).item()


class Side:
    def __init__(self, framework, rank_dir):
        self.fw, self.dir = framework, rank_dir
        self.data, self.construct, self.stack = {}, {}, {}

    def tensor(self, t):
        mx, mn, mean, norm = stats(t)
        if self.fw == "pytorch":
            return {"type": "torch.Tensor", "dtype": str(t.dtype), "shape": list(t.shape), "Max": mx, "Min": mn,
                    "Mean": mean, "Norm": norm, "requires_grad": t.is_floating_point()}
        return {"type": "mindspore.Tensor", "dtype": MS_DT[t.dtype], "shape": list(t.shape), "Max": mx,
                "Min": mn, "Mean": mean, "Norm": norm}

    def value(self, v):
        return {"type": type(v).__name__, "value": v}

    def add(self, key, parent, args=(), kwargs=None, outs=(), frames=None, body=None):
        conv = lambda v: (self.tensor(v) if isinstance(v, torch.Tensor) else None if v is None
                          else self.value(v))
        if body is None:
            body = {"input_args": [conv(a) for a in args], "input_kwargs": {k: conv(v) for k, v in (kwargs or {}).items()},
                    "output": [conv(o) for o in outs]}
        self.data[key] = body
        self.construct[key] = parent
        if frames is not None:
            self.stack[key] = frames

    def write(self, grouped_stack):
        os.makedirs(self.dir, exist_ok=True)
        doc = {"task": "statistics", "level": "mix", "framework": self.fw, "dump_data_dir": None, "data": self.data}
        with open(os.path.join(self.dir, "dump.json"), "w") as f:
            json.dump(doc, f, indent=1)
        with open(os.path.join(self.dir, "construct.json"), "w") as f:
            json.dump(self.construct, f, indent=1)
        stack = self.stack
        if grouped_stack:  # current msprobe: identical stacks share one group
            groups = []
            for k, frames in self.stack.items():
                for g in groups:
                    if g[1] == frames:
                        g[0].append(k)
                        break
                else:
                    groups.append([[k], frames])
            stack = {str(i): g for i, g in enumerate(groups)}
        with open(os.path.join(self.dir, "stack.json"), "w") as f:
            json.dump(stack, f, indent=1)


def frame(path, line, func, code):
    return f"File {path}, line {line}, in {func}, \n {code}"


MS_HOOK = [frame("/pkgs/site-packages/mindspore/nn/cell.py", 505, "_run_construct", "output = self._run_forward_hook(inputs, output)"),
           frame("/pkgs/site-packages/mindspore/nn/cell.py", 733, "__call__", "return self._run_construct(*args, **kwargs)"),
           frame("/pkgs/msprobe/mindspore/dump/hook_cell/wrap_api.py", 98, "api_function",
                 "return ApiTemplate(api_name, api_dict, prefix, hook)(*args, **kwargs)")]
PT_HOOK = [frame("/pkgs/msprobe/pytorch/hook_module/wrap_tensor.py", 61, "tensor_op_template",
                 "return TensorOPTemplate(op_name, hook)(*args, **kwargs)")]
MS_MAIN = [frame("/net/PanGu_ms/pretrain_gpt.py", 113, "get_batch", "attention_mask, position_ids = get_ltor_masks(")]
PT_MAIN = [frame("/net/PanGu/pretrain_gpt.py", 174, "get_batch", "attention_mask, position_ids = get_ltor_masks(")]
MS_IN_CELL = [frame("/net/PanGu_ms/pangu/model/transformer.py", 619, "construct", "query = apply_rotary(query)")]
PT_IN_MODULE = [frame("/net/PanGu/pangu/model/transformer.py", 540, "forward", "query = apply_rotary(query)")]


def model(randn):
    """Tensors of one training step, shared by both sides (NPU = bench + small error)."""
    t = {}
    t["mask_a"] = torch.randint(0, 5, (2, 6), generator=randn.g).float()
    t["mask_b"] = torch.randint(0, 5, (2, 6), generator=randn.g).float()
    t["tokens"] = torch.randint(0, 100, (1, 8), generator=randn.g)
    t["emb"] = randn(1, 8, 4)
    t["or_a"] = torch.rand(1, 8, generator=randn.g) > 0.5
    t["or_b"] = torch.rand(1, 8, generator=randn.g) > 0.5
    for layer in (0, 1):
        t[f"h{layer}"] = randn(1, 8, 4)
        t[f"w{layer}"] = 1 + 0.1 * randn(4)
        t[f"q{layer}"] = randn(1, 2, 8, 2)
        t[f"k{layer}"] = randn(1, 2, 8, 2)
        t[f"v{layer}"] = randn(1, 2, 8, 2)
        t[f"freqs{layer}"] = randn(8, 2)
        t[f"gw{layer}"] = randn(4)  # the norm weight's gradient
    return t


def npu_of(x, randn):
    if x.dtype == torch.bool or not x.is_floating_point():
        return x.clone()
    return x + 1e-3 * randn(*x.shape)


def layer_case(randn):
    t = model(randn)
    n = {k: npu_of(v, randn) for k, v in t.items()}
    root = os.path.join(OUT, "layer")
    ms = Side("mindspore", os.path.join(root, "npu", "step0", "rank0"))
    pt = Side("pytorch", os.path.join(root, "bench", "step0", "rank0"))
    expected = {}

    # Top level: MindSpore's Tensor.__add__.0 was reached through mindspore's own __getitem__ (stack.json shows
    # the framework frame), so its scope is TopLayer.__getitem__.__add__ and nothing on the bench side is there;
    # Tensor.__add__.1 sits at TopLayer.__add__ as the first item, like the bench's Tensor.__add__.0.
    ms.add("Tensor.__add__.0.forward", None, (n["mask_a"], 1), outs=(n["mask_a"] + 1,),
           frames=MS_HOOK + [frame("/pkgs/site-packages/mindspore/common/tensor.py", 483, "__getitem__",
                                   "out = tensor_operator_registry.get('__getitem__')(self, index)")] + MS_MAIN)
    ms.add("Tensor.__add__.1.forward", None, (n["mask_b"], 1), outs=(n["mask_b"] + 1,), frames=MS_HOOK + MS_MAIN)
    pt.add("Tensor.__add__.0.forward", None, (t["mask_b"], 1), outs=(t["mask_b"] + 1,), frames=PT_HOOK + PT_MAIN)
    pt.add("Tensor.__add__.1.forward", None, (t["mask_a"], 1), outs=(t["mask_a"] + 1,), frames=PT_HOOK + PT_MAIN)
    expected["Tensor.__add__.0.forward"] = "N/A"
    expected["Tensor.__add__.1.forward"] = "Tensor.__add__.0.forward"

    ms_emb = "Cell.network_with_loss.module.language_model.embedding.word_embeddings.VocabParallelEmbedding.forward.0"
    pt_emb = "Module.module.module.language_model.embedding.word_embeddings.VocabParallelEmbedding.forward.0"
    ms_red = ("Cell.network_with_loss.module.language_model.embedding.word_embeddings.reduce_from_mp_region."
              "ReduceFromModelParallelRegion.forward.0")
    # yaml VocabParallelEmbedding: logical_or -> __or__
    ms.add("Mint.logical_or.0.forward", ms_emb, (n["or_a"], n["or_b"]), outs=(n["or_a"] | n["or_b"],),
           frames=MS_HOOK + MS_IN_CELL)
    pt.add("Tensor.__or__.0.forward", pt_emb, (t["or_a"], t["or_b"]), outs=(t["or_a"] | t["or_b"],),
           frames=PT_HOOK + PT_IN_MODULE)
    expected["Mint.logical_or.0.forward"] = "Tensor.__or__.0.forward"
    # yaml VocabParallelEmbedding: reduce_from_mp_region.all_reduce -> all_reduce (a two-segment key: the
    # MindSpore all_reduce runs inside a helper cell that PyTorch does not have).
    ms.add("Distributed.all_reduce.0.forward", ms_red, (n["emb"],), {"group": None}, (n["emb"], None),
           frames=MS_HOOK + MS_IN_CELL)
    pt.add("Distributed.all_reduce.0.forward", pt_emb, (t["emb"],), {"group": None}, (t["emb"], None),
           frames=PT_HOOK + PT_IN_MODULE)
    expected["Distributed.all_reduce.0.forward"] = "Distributed.all_reduce.0.forward"
    # TopLayer: network_with_loss -> module
    ms.add(ms_emb, "Cell.network_with_loss.module.language_model.embedding.Embedding.forward.0", (n["tokens"].int(),),
           outs=(n["emb"],))
    pt.add(pt_emb, "Module.module.module.language_model.embedding.Embedding.forward.0", (t["tokens"],),
           outs=(t["emb"],))
    expected[ms_emb] = pt_emb

    # Pipeline stage 1: MindSpore numbers its layers globally (2, 3), PyTorch per stage (0, 1).
    ms_enc = "Cell.network_with_loss.module.language_model.encoder"
    pt_enc = "Module.module.module.language_model.encoder"
    for layer in (0, 1):
        g = layer + 2
        msl, ptl = f"{ms_enc}.layers.{g}", f"{pt_enc}.layers.{layer}"
        h, w = n[f"h{layer}"], n[f"w{layer}"]
        # FusedRMSNorm: RmsNorm -> npu_rms_norm (a Primitive: no stack scope on MindSpore's side)
        ms.add(f"Primitive.norm.RmsNorm.{layer}.forward", f"{msl}.input_norm.FusedRMSNorm.forward.0", (h, w),
               outs=(h * w, h.pow(2).mean(-1, keepdim=True)))
        pt.add(f"NPU.npu_rms_norm.{layer}.forward", f"{ptl}.input_norm.RMSNorm.forward.0",
               (t[f"h{layer}"], t[f"w{layer}"]), outs=(t[f"h{layer}"] * t[f"w{layer}"],
                                                      t[f"h{layer}"].pow(2).mean(-1, keepdim=True)),
               frames=PT_HOOK + PT_IN_MODULE)
        expected[f"Primitive.norm.RmsNorm.{layer}.forward"] = f"NPU.npu_rms_norm.{layer}.forward"
        ms.add(f"{msl}.input_norm.FusedRMSNorm.forward.0", f"{msl}.ParallelTransformerLayer.forward.0", (h,),
               outs=(h * w,))
        pt.add(f"{ptl}.input_norm.RMSNorm.forward.0", f"{ptl}.ParallelTransformerLayer.forward.0", (t[f"h{layer}"],),
               outs=(t[f"h{layer}"] * t[f"w{layer}"],))
        expected[f"{msl}.input_norm.FusedRMSNorm.forward.0"] = f"{ptl}.input_norm.RMSNorm.forward.0"
        # ParallelTransformerLayer: attention -> self_attention; ParallelAttention: flash_attention_score ->
        # core_attention_flash.npu_fusion_attention (the bench runs it inside one more module)
        msa, pta = f"{msl}.attention.ParallelAttention.forward.0", f"{ptl}.self_attention.ParallelAttention.forward.0"
        ms.add(f"Mint.cos.{layer}.forward", msa, (n[f"freqs{layer}"],), outs=(n[f"freqs{layer}"].cos(),),
               frames=MS_HOOK + MS_IN_CELL)
        pt.add(f"Torch.cos.{layer}.forward", pta, (t[f"freqs{layer}"],), outs=(t[f"freqs{layer}"].cos(),),
               frames=PT_HOOK + PT_IN_MODULE)
        expected[f"Mint.cos.{layer}.forward"] = f"Torch.cos.{layer}.forward"
        q, k, v = (t[f"{x}{layer}"] for x in "qkv")
        attn = torch.softmax(q @ k.transpose(-1, -2) / 2 ** 0.5, -1) @ v
        nq, nk, nv = (n[f"{x}{layer}"] for x in "qkv")
        nattn = torch.softmax(nq @ nk.transpose(-1, -2) / 2 ** 0.5, -1) @ nv
        if layer == 1:
            nattn = nattn * 3  # broken on purpose: statistics far from the bench
        ms.add(f"Functional.flash_attention_score.{layer}.forward", msa, (nq, nk, nv, 2),
               {"scalar_value": 0.7071067811865476, "input_layout": "BNSD"}, (nattn,), frames=MS_HOOK + MS_IN_CELL)
        pt.add(f"NPU.npu_fusion_attention.{layer}.forward",
               f"{ptl}.self_attention.core_attention_flash.FlashSelfAttention.forward.0", (q, k, v, 2),
               {"scale": 0.7071067811865476, "input_layout": "BNSD"}, (attn,), frames=PT_HOOK + PT_IN_MODULE)
        expected[f"Functional.flash_attention_score.{layer}.forward"] = f"NPU.npu_fusion_attention.{layer}.forward"
        # Backward entries have no stack: they take their forward entry's scope.
        ms.add(f"Functional.flash_attention_score.{layer}.backward", msa.replace("forward", "backward"),
               body={"input": [ms.tensor(nattn)], "output": [ms.tensor(nq), ms.tensor(nk), ms.tensor(nv)]})
        pt.add(f"NPU.npu_fusion_attention.{layer}.backward",
               f"{ptl}.self_attention.core_attention_flash.FlashSelfAttention.backward.0",
               body={"input": [pt.tensor(attn)], "output": [pt.tensor(q), pt.tensor(k), pt.tensor(v)]})
        expected[f"Functional.flash_attention_score.{layer}.backward"] = f"NPU.npu_fusion_attention.{layer}.backward"
        ms.add(msa, f"{msl}.ParallelTransformerLayer.forward.0", (h,), outs=(nattn,))
        pt.add(pta, f"{ptl}.ParallelTransformerLayer.forward.0", (t[f"h{layer}"],), outs=(attn,))
        expected[msa] = pta
        ms.add(f"{msl}.ParallelTransformerLayer.forward.0", f"{ms_enc}.ParallelTransformer.forward.0", (h,),
               outs=(h,))
        pt.add(f"{ptl}.ParallelTransformerLayer.forward.0", f"{pt_enc}.ParallelTransformer.forward.0",
               (t[f"h{layer}"],), outs=(t[f"h{layer}"],))
        expected[f"{msl}.ParallelTransformerLayer.forward.0"] = f"{ptl}.ParallelTransformerLayer.forward.0"
    ms.add(f"{ms_enc}.ParallelTransformer.forward.0", "Cell.network_with_loss.module.language_model.TransformerLanguageModel.forward.0",
           (n["h0"],), outs=(n["h1"],))
    pt.add(f"{pt_enc}.ParallelTransformer.forward.0", "Module.module.module.language_model.TransformerLanguageModel.forward.0",
           (t["h0"],), outs=(t["h1"],))
    expected[f"{ms_enc}.ParallelTransformer.forward.0"] = f"{pt_enc}.ParallelTransformer.forward.0"
    # Parameter gradients: the layer's own node, state parameters_grad (also under a renamed attribute:
    # attention -> self_attention).
    ms.add(f"{ms_enc}.layers.2.attention.ParallelAttention.parameters_grad.0", None,
           body={"qkv_weight": [ms.tensor(n["gw0"] * 2)]})
    pt.add(f"{pt_enc}.layers.0.self_attention.ParallelAttention.parameters_grad.0", None,
           body={"qkv_weight": [pt.tensor(t["gw0"] * 2)]})
    expected[f"{ms_enc}.layers.2.attention.ParallelAttention.parameters_grad.0"] = \
        f"{pt_enc}.layers.0.self_attention.ParallelAttention.parameters_grad.0"
    for layer in (0, 1):
        msk = f"{ms_enc}.layers.{layer + 2}.input_norm.FusedRMSNorm.parameters_grad.0"
        ptk = f"{pt_enc}.layers.{layer}.input_norm.RMSNorm.parameters_grad.0"
        ms.add(msk, None, body={"weight": [ms.tensor(n[f"gw{layer}"])]})
        pt.add(ptk, None, body={"weight": [pt.tensor(t[f"gw{layer}"])]})
        expected[msk] = ptk
    ms.write(grouped_stack=True)
    pt.write(grouped_stack=False)

    with open(os.path.join(root, "layer_mapping.yaml"), "w") as f:
        f.write("""# MindSpore child attribute -> PyTorch child attribute, per class of the parent layer.
TopLayer:
  network_with_loss: module

VocabParallelEmbedding:
  logical_or: __or__
  reduce_from_mp_region.all_reduce: all_reduce

ParallelTransformerLayer:
  attention: self_attention

ParallelAttention:
  flash_attention_score: core_attention_flash.npu_fusion_attention(FlashSelfAttention)

FusedRMSNorm:
  RmsNorm: npu_rms_norm
""")
    broken = "Functional.flash_attention_score.1.forward.output.0"
    out = torch.softmax(n["q1"] @ n["k1"].transpose(-1, -2) / 2 ** 0.5, -1) @ n["v1"] * 3
    ref = torch.softmax(t["q1"] @ t["k1"].transpose(-1, -2) / 2 ** 0.5, -1) @ t["v1"]
    mx_n, mx_b = float(np.float64(out.max().item())), float(np.float64(ref.max().item()))
    doc = {"entries": expected, "broken_row": broken, "broken_max_diff": mx_n - mx_b}
    with open(os.path.join(root, "expected.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(root, "compare.json"), "w") as f:
        json.dump({"npu_path": "npu/step0/rank0/dump.json", "bench_path": "bench/step0/rank0/dump.json"}, f, indent=1)


def api_case(randn):
    """-am with a user file: MindSpore ops.gather(input_params, input_indices, axis) is torch.gather(input, dim,
    index) with the last two arguments swapped; flash_attention_score's extra arguments have no bench partner."""
    root = os.path.join(OUT, "api")
    ms = Side("mindspore", os.path.join(root, "npu", "step0", "rank0"))
    pt = Side("pytorch", os.path.join(root, "bench", "step0", "rank0"))
    x = randn(3, 4)
    idx = torch.randint(0, 4, (3, 2), generator=randn.g)
    y = torch.gather(x, 1, idx)
    nx = npu_of(x, randn)
    ms.add("Functional.gather.0.forward", None, (nx, idx.int(), 1), outs=(torch.gather(nx, 1, idx),))
    pt.add("Torch.gather.0.forward", None, (x, 1, idx), outs=(y,))
    q, k, v = randn(1, 2, 4, 2), randn(1, 2, 4, 2), randn(1, 2, 4, 2)
    attn = torch.softmax(q @ k.transpose(-1, -2), -1) @ v
    lse = torch.logsumexp(q @ k.transpose(-1, -2), -1, keepdim=True)
    ms.add("Functional.flash_attention_score.0.forward", None, (npu_of(q, randn), k, v, 2),
           {"input_layout": "BNSD"}, (npu_of(attn, randn), lse))
    pt.add("NPU.npu_fusion_attention.0.forward", None, (q, k, v, 2), {"input_layout": "BNSD"}, (attn, lse))
    # Built-in table (data/ms_to_pt_api.yaml): Functional.matmul -> Torch.matmul, no user record needed.
    a, b = randn(2, 3), randn(3, 2)
    ms.add("Functional.matmul.0.forward", None, (npu_of(a, randn), b), outs=(a @ b,))
    pt.add("Torch.matmul.0.forward", None, (a, b), outs=(a @ b,))
    ms.write(grouped_stack=True)
    pt.write(grouped_stack=False)
    with open(os.path.join(root, "api_mapping.yaml"), "w") as f:
        f.write("""# ms_api's argument / output indices paired with pt_api's.
- ms_api: Functional.gather
  pt_api: Torch.gather
  ms_args: [0, 1, 2]
  pt_args: [0, 2, 1]
  ms_outputs: [0]
  pt_outputs: [0]
- ms_api: Functional.flash_attention_score
  pt_api: NPU.npu_fusion_attention
  ms_args:
    - 0
    - 1
    - 2
  pt_args:
    - 0
    - 1
    - 2
  ms_outputs: [0]
  pt_outputs: [0]
""")
    with open(os.path.join(root, "compare.json"), "w") as f:
        json.dump({"npu_path": "npu/step0/rank0/dump.json", "bench_path": "bench/step0/rank0/dump.json"}, f, indent=1)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    g = torch.Generator().manual_seed(4321)

    def randn(*shape):
        return torch.randn(*shape, generator=g)

    randn.g = g
    layer_case(randn)
    api_case(randn)


if __name__ == "__main__":
    main()
