"""How CPU torch computes a bfloat16 mm (DECISIONS D20, the note on D16's bfloat16 GEMM faults).

Prints, for a grid of shapes, whether torch's bfloat16 mm equals (a) the float32 product of the bfloat16
inputs rounded once and (b) a term-by-term accumulation in bfloat16 with every product rounded to bfloat16
first (acc = bf16(acc + bf16(a_k b_k)), k in order); then, for the 10x12x24 GEMMs of the real-model dumps,
the largest error of torch's clean kernel and the size of a 1% fault, both in units of 2^-8 sum |a||b|.
A measurement for the note, not a fixture. Run with Debian's /usr/bin/python3 (python3-torch).
"""
import statistics

import torch

U = 2.0 ** -8


def sequential_bf16(a, b):
    acc = None
    for k in range(a.shape[1]):
        p = (a[:, k:k + 1].float() * b[k:k + 1, :].float()).bfloat16().float()
        acc = p.bfloat16() if acc is None else (acc.float() + p).bfloat16()
    return acc


def main():
    torch.manual_seed(0)
    for m, k, n in [(4, 64, 16), (16, 16, 16), (32, 16, 8), (10, 12, 24), (4, 64, 24), (16, 12, 24),
                    (32, 12, 15), (64, 512, 64)]:
        a, b = torch.randn(m, k).bfloat16(), torch.randn(k, n).bfloat16()
        d = a @ b
        once = float(((a.float() @ b.float()).bfloat16() == d).double().mean())
        seq = float((sequential_bf16(a, b) == d).double().mean())
        print(f"{m}x{k}x{n} (MNK {m * k * n}): equal to float32 rounded once {once:.3f}, "
              f"to the bfloat16 accumulation {seq:.3f}")
    worst, fault = 0.0, []
    for _ in range(200):
        a, b = torch.randn(10, 12).bfloat16(), torch.randn(12, 24).bfloat16()
        exact = a.double() @ b.double()
        mag = a.double().abs() @ b.double().abs()
        worst = max(worst, float((((a @ b).double() - exact).abs() / (U * mag)).max()))
        fault.append(float((0.01 * exact.abs() / (U * mag)).max()))
    print(f"10x12x24, 200 draws: clean kernel error up to {worst:.2f} u m; a 1% fault on the most favourable "
          f"element {statistics.median(fault):.2f} u m (median)")


if __name__ == "__main__":
    main()
