#!/usr/bin/python3
"""Coverage of msprobe's hooked PyTorch APIs by probe's runner registry.

usage: /usr/bin/python3 tools/runner_coverage.py [--probe PATH | --runners FILE] [--missing CLASS...] [--list]

Reads the API names msprobe wraps (tools/msprobe_wrap_ops.txt) and the runner keys `probe -f pytorch runners`
prints, and counts per class: covered (a bench runner answers the name as run_ut would look it up), missing,
and skipped by design (run_ut reports SKIP or runs nothing for them whatever the runner table says).
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# msprobe class (support_wrap_ops.yaml section) -> dump prefix of the API names it produces.
PREFIX = {
    "functional": "Functional",
    "tensor": "Tensor",
    "torch": "Torch",
    "_VF": "VF",
    "torch_npu": "NPU",
    "aten": "Aten",
    "distributed": "Distributed",
    "npu_distributed": "Distributed",
    "mindspeed": "MindSpeed",
}

# precheck §6.10: Distributed/MindSpeed names are SKIPped before anything runs; §6.3: VF executes nothing.
SKIP_CLASSES = {
    "distributed": "communication (run_ut SKIP)",
    "npu_distributed": "communication (run_ut SKIP)",
    "mindspeed": "MindSpeed (run_ut SKIP)",
    "_VF": "VF type executes nothing (run_ut)",
}

# precheck §6.3: on CPU/GPU only these torch_npu ops have a bench function; every other NPU op is a SKIP.
NPU_BENCH = {
    "npu_apply_adam_w", "npu_confusion_transpose", "fast_gelu", "npu_layer_norm_eval", "npu_linear",
    "npu_fusion_attention", "npu_rms_norm", "npu_rotary_mul", "npu_scaled_masked_softmax", "npu_swiglu",
    "npu_apply_adam", "npu_group_norm_silu", "npu_mish", "npu_moe_gating_top_k_softmax", "npu_sort_v2",
}

# precheck §6.10 step 5: always in run_ut's black list.
BLACK_LIST = {"to", "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_with_format"}

# Draws from a random generator: no float64 reference can reproduce the device's stream. (Dropout is not
# here: run_ut judges it by zero counts, precheck §3.2.)
RANDOM = {
    "bernoulli", "bernoulli_", "binomial", "cauchy", "cauchy_", "exponential", "exponential_", "geometric",
    "geometric_", "log_normal", "log_normal_", "multinomial", "normal", "normal_", "poisson", "rand",
    "rand_like", "randint", "randint_like", "randn", "randn_like", "randperm", "uniform", "uniform_", "rrelu",
    "rrelu_", "rrelu_with_noise", "rrelu_with_noise_", "rrelu_with_noise_backward", "gumbel_softmax",
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices", "_fused_dropout", "npu_dropout_gen_mask", "_npu_dropout_gen_mask",
}

# Entries of the aten list that are module attributes, not operators.
NOT_OPS = {"__doc__", "__name__", "__loader__", "__spec__", "__package__", "_dir", "name"}


def read_wrap_ops(path):
    classes = {}
    current = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                current = line[1:-1]
                classes.setdefault(current, [])
            elif current is not None and line not in classes[current]:
                classes[current].append(line)
    return classes


def read_runner_keys(args):
    if args.runners:
        with open(args.runners, encoding="utf-8") as f:
            text = f.read()
    else:
        probe = args.probe or os.path.join(HERE, "..", "build", "bin", "probe")
        text = subprocess.run([probe, "-f", "pytorch", "runners"], check=True, capture_output=True,
                              text=True).stdout
    keys = set()
    for line in text.splitlines():
        cols = line.split("\t")
        if len(cols) >= 2 and cols[0] == "pytorch":
            keys.add(cols[1])
    return keys


def skip_reason(cls, name):
    if cls in SKIP_CLASSES:
        return SKIP_CLASSES[cls]
    if cls == "torch_npu" and name not in NPU_BENCH:
        return "no msprobe bench function"
    if name in BLACK_LIST:
        return "run_ut black list"
    if name in RANDOM:
        return "random"
    if cls == "aten" and name in NOT_OPS:
        return "not an operator"
    return None


def covered(cls, name, keys, aten_ops):
    prefix = PREFIX[cls]
    if cls == "aten":
        # Registry lookup: Aten.<op>.<overload> has a runner of its own, or falls back to Torch.<op>, Tensor.<op>.
        return name in aten_ops or f"Torch.{name}" in keys or f"Tensor.{name}" in keys
    return f"{prefix}.{name}" in keys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--probe", help="probe executable (default: build/bin/probe)")
    ap.add_argument("--runners", help="saved `probe -f pytorch runners` output instead of running probe")
    ap.add_argument("--ops", default=os.path.join(HERE, "msprobe_wrap_ops.txt"))
    ap.add_argument("--missing", nargs="*", metavar="CLASS", help="list the missing names of these classes")
    ap.add_argument("--list", action="store_true", help="list missing names of every class")
    args = ap.parse_args()

    classes = read_wrap_ops(args.ops)
    keys = read_runner_keys(args)
    aten_ops = {k.split(".")[1] for k in keys if k.startswith("Aten.") and k.count(".") >= 2}

    rows = []
    missing = {}
    total = [0, 0, 0, 0]
    for cls, names in classes.items():
        cov = miss = skip = 0
        missing[cls] = []
        for name in names:
            if skip_reason(cls, name):
                skip += 1
            elif covered(cls, name, keys, aten_ops):
                cov += 1
            else:
                miss += 1
                missing[cls].append(name)
        runnable = cov + miss
        rows.append((cls, len(names), cov, miss, skip, f"{100.0 * cov / runnable:.1f}%" if runnable else "-"))
        for i, v in enumerate((len(names), cov, miss, skip)):
            total[i] += v
    runnable = total[1] + total[2]
    rows.append(("total", *total, f"{100.0 * total[1] / runnable:.1f}%" if runnable else "-"))
    print(f"{'class':<16}{'names':>7}{'covered':>9}{'missing':>9}{'skipped':>9}{'coverage':>10}")
    for r in rows:
        print(f"{r[0]:<16}{r[1]:>7}{r[2]:>9}{r[3]:>9}{r[4]:>9}{r[5]:>10}")
    print("(skipped = by design: communication, MindSpeed, VF, NPU ops without msprobe bench function, "
          "run_ut black list, random ops; coverage = covered / (covered + missing))")
    show = list(classes) if args.list else (args.missing or [])
    for cls in show:
        if cls in missing:
            print(f"\nmissing {cls} ({len(missing[cls])}): " + " ".join(missing[cls]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
