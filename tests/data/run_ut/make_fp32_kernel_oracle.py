"""fp32_kernel_differs.json for the real-model dumps: the forwards of the APIs that accumulate
(Functional.linear, Torch.matmul, Torch.sum, Functional.softmax) whose dumped output is not what a kernel
accumulating in float32 gives. torch recomputes
each one in float32 on the dumped inputs and rounds once to the output dtype; a direction listed here is one
where the CPU kernel that recorded the dump accumulated (or rounded) otherwise, and DECISIONS D14 may report
it as a Warning ("within the bound of an accumulation in reduced precision"). A GEMM forward not listed
equals the float32-accumulated result bit for bit and must pass D14.
(For float32 dumps the recomputation is torch's float32 kernel itself: the list says whether the recorded
run reproduces.)
The backward of Functional.linear and Torch.matmul is listed the same way (DECISIONS D16 checks their input
gradients through the dataflow): torch's kernel in the dump's dtype computes the input gradients from the
dumped inputs and the dumped output gradient, and they are compared with the float32 computation rounded once.

Run with Debian's /usr/bin/python3 (python3-torch) after make_real_model_dumps.py.
"""
import json
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
DUMPS = ["real_mlp_bf16", "real_mlp_bf16_faults", "real_half_fp16", "real_half_fp16_faults", "real_mlp_fp32",
         "real_mlp_fp32_faults"] + [f"real_{m}_{t}{f}" for m in ("llama", "gpt") for t in ("fp32", "bf16")
                                    for f in ("", "_gemmfaults")]
FUNCTIONS = {"Functional.linear.": torch.nn.functional.linear, "Torch.matmul.": torch.matmul,
             "Torch.sum.": torch.sum, "Functional.softmax.": torch.nn.functional.softmax}


def load(dump, node):
    if isinstance(node, dict) and "data_name" in node:
        return torch.load(os.path.join(HERE, dump, "dump_tensor_data", node["data_name"]))
    if isinstance(node, dict) and "value" in node:
        return node["value"]
    return None


def input_grads_differ(fn, args, kwargs, grad):
    """Whether the kernel in the dump's dtype gives other input gradients than float32 rounded once."""
    def grads(cast):
        leaves = [a.detach().to(cast(a)).requires_grad_(True) if isinstance(a, torch.Tensor) and
                  a.is_floating_point() else a for a in args]
        kw = {k: v.detach().to(cast(v)) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
        out = fn(*leaves, **kw)
        wrt = [x for x in leaves if isinstance(x, torch.Tensor) and x.requires_grad]
        return torch.autograd.grad(out, wrt, grad.to(out.dtype))
    native = grads(lambda t: t.dtype)
    wide = grads(lambda t: torch.float32)
    return any(not torch.equal(n, w.to(n.dtype)) for n, w in zip(native, wide))


def main():
    for dump in DUMPS:
        data = json.load(open(os.path.join(HERE, dump, "dump.json")))["data"]
        differs = []
        for key, entry in data.items():
            prefix = next((p for p in FUNCTIONS if key.startswith(p)), None)
            if not key.endswith(".forward") or prefix is None:
                continue
            args = [load(dump, a) for a in entry["input_args"]]
            kwargs = {k: load(dump, v) for k, v in entry["input_kwargs"].items()}
            kwargs = {k: v for k, v in kwargs.items() if v is not None}
            out = load(dump, entry["output"][0])
            f32 = [a.float() if isinstance(a, torch.Tensor) else a for a in args]
            kw32 = {k: v.float() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
            ref = FUNCTIONS[prefix](*f32, **kw32).to(out.dtype)
            if not torch.equal(ref, out):
                differs.append(key)
            bkey = key[:-len(".forward")] + ".backward"
            if prefix in ("Functional.linear.", "Torch.matmul.") and bkey in data:
                grad = load(dump, data[bkey]["input"][0])
                if isinstance(grad, torch.Tensor) and input_grads_differ(FUNCTIONS[prefix], args, kwargs, grad):
                    differs.append(bkey)
        with open(os.path.join(HERE, dump, "fp32_kernel_differs.json"), "w") as f:
            json.dump(sorted(differs), f, indent=1)
        print(dump, differs)


if __name__ == "__main__":
    main()
