#!/usr/bin/python3
"""Fixtures of the HTML report (tests/report): a run_ut result/details CSV pair written with Python's csv
module, and the data the page must embed for it and for msprobe's own run_ut CSVs (tests/data/conformance); two
compare_result CSVs (real data, statistics) and the rows and first different entry the compare page must show,
derived here from the CSV cells with Python's csv/json, independently of probe.

Run with Debian's /usr/bin/python3 from the repository root: /usr/bin/python3 tests/data/report/make_report_fixtures.py
"""
import csv
import json
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CONF = os.path.join(HERE, "..", "conformance", "msprobe_e2e", "head")

DETAILS_HEADER = ["API Name", "Bench Dtype", "DEVICE Dtype", "Shape", "余弦相似度", "最大绝对误差", "双百指标",
                  "双千指标", "双万指标", "二进制一致错误率", "误差均衡性", "均方根误差", "小值域错误占比",
                  "相对误差最大值", "相对误差平均值", "inf/nan错误率", "相对误差错误率", "绝对误差错误率",
                  "ULP误差最大值", "ULP误差平均值", "ULP误差大于阈值占比", "Status", "Message"]
RESULT_HEADER = ["API name", "Forward Test Success", "Backward Test Success", "Message"]


def write_csv(path, header, rows):
    with open(path, "w", encoding="utf-8-sig", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def detail_row(name, dtype, shape, bench, device, status, message):
    """One details row whose metric cells are numpy's float64 cosine / max abs / max rel of the pair."""
    b = np.asarray(bench, dtype=np.float64)
    d = np.asarray(device, dtype=np.float64)
    cos = float(np.dot(b, d) / (np.linalg.norm(b) * np.linalg.norm(d)))
    abs_err = np.abs(d - b)
    rel = float(np.max(abs_err / np.abs(b)))
    cells = [name, "torch.float64", dtype, shape, repr(cos), repr(float(abs_err.max()))] + [" "] * 7
    cells += [repr(rel)] + [" "] * 7 + [status, message]
    return cells


def synthetic():
    rng = np.random.default_rng(34)
    bench = rng.uniform(0.5, 2.0, 16)
    small = bench * (1 + 2.0 ** -9)          # within a bfloat16 bound
    broken = bench.copy()
    broken[5] += 0.25                        # one element far outside
    worse = bench.copy()
    worse[2:6] += 3.0                        # four elements far outside
    bound = 2.0 ** -8 * float(np.abs(bench[5]))
    err5 = 0.25
    bound2 = 2.0 ** -8 * float(np.abs(bench[3]))
    err3 = 3.0
    d14 = "error bound (D14, activation x*f(x) family, K=1, bfloat16)"
    g14 = "error bound (D14, gemm family, K=64, bfloat16)"
    details = [
        detail_row("Functional.gelu.0.forward.output.0", "torch.bfloat16", "(16,)", bench, broken, "error",
                   f"{d14}: 1 of 16 elements beyond their bound; worst at [5]: device {broken[5]:.9g}, bench "
                   f"{bench[5]:.9g}, error {err5:.3g} > bound {bound:.3g} ({err5 / bound:.3g}x)"),
        detail_row("Functional.gelu.0.backward.output.0", "torch.bfloat16", "(16,)", bench, small, "pass",
                   f"{d14}: largest error/bound 0.5"),
        detail_row("Functional.linear.0.forward.output.0", "torch.float16", "(4, 4)", bench, worse, "error",
                   f"{g14}: 4 of 16 elements beyond their bound; worst at [0, 3]: device {worse[3]:.9g}, bench "
                   f"{bench[3]:.9g}, error {err3:.3g} > bound {bound2:.3g} ({err3 / bound2:.3g}x)"),
        detail_row("Torch.matmul.0.forward.output.0", "torch.float16", "(16,)", bench, small * (1 + 0.02),
                   "Warning", "\nRelative error is greater than 0.01, consider as warning.\n"),
        detail_row("Torch.matmul.0.backward.output.0", "torch.float16", "(16,)", bench, small, "pass",
                   "\nMax abs error is less than 0.001, consider as pass, skip other check and set to SPACE.\n"),
        detail_row("Tensor.add.0.forward.output.0", "torch.bfloat16", "(16,)", bench, small, "pass",
                   "error bound (D14, addition family, K=1, bfloat16): largest error/bound 0.25"),
        detail_row("Module.fc1.Linear.parameters_grad.0.weight", "torch.bfloat16", "(16,)", bench, small, "pass",
                   "error bound (D14, gemm family, K=8, bfloat16): largest error/bound 0.125"),
    ]
    results = [
        ["Functional.gelu.0", "error", "pass", ""],
        ["Functional.linear.0", "error", "SKIP", "This API does not have backward input data, skip backward."],
        ["Torch.matmul.0", "Warning", "pass", ""],
        ["Tensor.add.0", "pass", "SKIP", "This API does not have backward input data, skip backward."],
        ["Torch.empty_like.0", "SKIP", " ", "Bench output is None, skip this test."],
        ["Torch.cumsum.0", "SKIP", "SKIP", "This data type does not support benchmark compare."],
        ["Module.fc1.Linear.parameters_grad.0", " ", "pass", ""],
    ]
    return results, details


def num(cell):
    try:
        v = float(cell.strip())
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def expected(result_csv, details_csv):
    """What the page embeds, from the cells: counts, per-output fields, flagged order, SKIP groups."""
    with open(result_csv, encoding="utf-8-sig", newline="") as f:
        res = list(csv.reader(f))[1:]
    with open(details_csv, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f))
    h = rows[0]
    col = {name: h.index(name) for name in h}
    rank = {"pass": 0, "Warning": 1, "error": 2}
    statuses = ["pass", "Warning", "error", "SKIP"]
    total = {s: 0 for s in statuses}
    fwd = {s: 0 for s in statuses}
    bwd = {s: 0 for s in statuses}
    skips = {}
    for name, f_cell, b_cell, msg in ((r + [""] * 4)[:4] for r in res):
        if f_cell.strip():
            fwd[f_cell.strip()] += 1
        if b_cell.strip():
            bwd[b_cell.strip()] += 1
        # A blank forward (a parameter-gradient row): the backward's verdict.
        status = f_cell if f_cell.strip() else b_cell
        if f_cell.strip() and f_cell != "SKIP" and b_cell.strip() and b_cell != "SKIP" and rank[b_cell] > rank[f_cell]:
            status = b_cell
        total[status] += 1
        if "SKIP" in (f_cell.strip(), b_cell.strip()):
            skips.setdefault(msg.strip() or "(no reason given)", []).append(name)
    names = [r[0] for r in res]
    outputs, dtypes = [], {}
    for r in rows[1:]:
        name = r[col["API Name"]]
        api, direction = "", ""
        for d in ("forward", "backward"):
            p = name.rfind("." + d)
            if p > 0 and name[:p] in names:
                api, direction = name[:p], d
        dtype = r[col["DEVICE Dtype"]].strip() or "(no dtype)"
        dtypes.setdefault(dtype, {s: 0 for s in statuses})[r[col["Status"]]] += 1
        outputs.append({"name": name, "api": api, "direction": direction, "dtype": r[col["DEVICE Dtype"]],
                        "status": r[col["Status"]], "cosine": num(r[col["余弦相似度"]]),
                        "max_abs": num(r[col["最大绝对误差"]]), "max_rel": num(r[col["相对误差最大值"]]),
                        "message": r[col["Message"]]})
    return {"summary": {"apis": len(res), "status": total, "forward": fwd, "backward": bwd,
                        "dtypes": sorted([k, v] for k, v in dtypes.items())},
            "outputs": outputs,
            "skips": [{"reason": k, "count": len(v), "apis": v[:20]} for k, v in skips.items()]}


def main():
    results, details = synthetic()
    rc = os.path.join(HERE, "accuracy_checking_result_20260101000000.csv")
    dc = os.path.join(HERE, "accuracy_checking_details_20260101000000.csv")
    write_csv(rc, RESULT_HEADER, results)
    write_csv(dc, DETAILS_HEADER, details)
    exp = expected(rc, dc)
    # The parsed criteria of the synthetic rows (their numbers are the ones written into the Messages), and
    # the flagged order: errors before Warnings, each by error over bound, largest first.
    msgs = [o["message"] for o in exp["outputs"]]
    def after(text, key):
        rest = text[text.index(key) + len(key):]
        return float(rest.split()[0].rstrip(",;x)"))
    for o in exp["outputs"]:
        m = o["message"]
        if "largest error/bound" in m:
            o["ratio"] = after(m, "largest error/bound ")
        elif "beyond their bound" in m:
            w = m.index("worst at [")
            o["worst_index"] = m[w + 9:m.index("]", w) + 1]
            o["value"] = after(m[w:], "error ")
            o["threshold"] = after(m[w:], "> bound ")
            o["ratio"] = float(m[m.rindex("(") + 1:m.rindex("x)")])
            o["worst_device"] = m[w:].split("device ")[1].split(",")[0]
            o["worst_bench"] = m[w:].split("bench ")[1].split(",")[0]
        elif "greater than" in m:
            o["threshold"] = 0.01
            o["value"] = o["max_rel"]
            o["ratio"] = o["max_rel"] / 0.01
    assert msgs
    exp["flagged"] = [2, 0, 3]   # linear (ratio ~1e3) before gelu (~1e2), then the Warning
    r2 = [o.get("ratio") for o in exp["outputs"]]
    assert r2[2] > r2[0], r2
    with open(os.path.join(HERE, "expected_synthetic.json"), "w") as f:
        json.dump(exp, f, indent=1, ensure_ascii=False)
    conf = expected(os.path.join(CONF, "npu_accuracy_checking_result_20250101000000.csv"),
                    os.path.join(CONF, "npu_accuracy_checking_details_20250101000000.csv"))
    # msprobe's rows: errors before Warnings; within each, by max relative error (no bound), largest first.
    out = conf["outputs"]
    for o in out:
        m = o["message"]
        line = next((l.strip() for l in m.split("\n") if l.strip()), "")
        o["ratio"] = None
        if "greater than" in line and "elative error" in line and o["max_rel"] is not None:
            o["ratio"] = o["max_rel"] / float(line.split("than ")[1].split(",")[0])
    def key(i):
        o = out[i]
        ratio = -1.0 if o["ratio"] is None else o["ratio"]
        rel = -1.0 if o["max_rel"] is None else o["max_rel"]
        return (0 if o["status"] == "error" else 1, -ratio, -rel, i)
    conf["flagged"] = sorted((i for i, o in enumerate(out) if o["status"] in ("error", "Warning")), key=key)
    with open(os.path.join(HERE, "expected_msprobe_head.json"), "w") as f:
        json.dump(conf, f, indent=1, ensure_ascii=False)



# ---- compare pages -------------------------------------------------------------------------------------------
COMPARE_REAL_HEADER = ["NPU Name", "Bench Name", "NPU Dtype", "Bench Dtype", "NPU Tensor Shape",
                       "Bench Tensor Shape", "NPU Requires_grad", "Bench Requires_grad", "Cosine", "EucDist",
                       "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio", "Five Thousandths Err Ratio",
                       "NPU max", "NPU min", "NPU mean", "NPU l2norm", "Bench max", "Bench min", "Bench mean",
                       "Bench l2norm", "Requires_grad Consistent", "Accuracy Reached or Not", "Err_message",
                       "NPU_Stack_Info", "Data_name"]
COMPARE_STATS_HEADER = ["NPU Name", "Bench Name", "NPU Dtype", "Bench Dtype", "NPU Tensor Shape",
                        "Bench Tensor Shape", "NPU Requires_grad", "Bench Requires_grad", "Max diff", "Min diff",
                        "Mean diff", "L2norm diff", "MaxRelativeErr", "MinRelativeErr", "MeanRelativeErr",
                        "NormRelativeErr", "NPU max", "NPU min", "NPU mean", "NPU l2norm", "Bench max", "Bench min",
                        "Bench mean", "Bench l2norm", "Requires_grad Consistent", "Result", "Err_message"]


def stats(a):
    return [float(a.max()), float(a.min()), float(a.mean()), float(np.linalg.norm(a))]


def compare_pairs():
    """(name, bench array, npu array): an input far off (inputs never make an entry different), then the first
    output that is (Torch.mul.0: its mean moved by more than 50%), then a later one."""
    rng = np.random.default_rng(3434)
    x = rng.uniform(1.0, 2.0, 8)
    near = x * (1 + 1e-3)
    far = x * 2.5
    return [("Functional.linear.0.forward.input.0", x, far),
            ("Functional.linear.0.forward.output.0", x, near),
            ("Torch.mul.0.forward.input.0", x, x),
            ("Torch.mul.0.forward.output.0", x, far),
            ("Tensor.add.0.forward.output.0", x, x * 1.8)]


def write_compare_fixtures():
    thresholds = json.load(open(os.path.join(HERE, "..", "..", "..", "data", "diff_analyze.json")))
    th = thresholds["relative_error_thresholds"]
    real_rows, stats_rows, exp_real, exp_stats = [], [], [], []
    for name, b, n in compare_pairs():
        cos = float(np.dot(b, n) / (np.linalg.norm(b) * np.linalg.norm(n)))
        abs_err = np.abs(n - b)
        rel = float((abs_err / np.abs(b)).max())
        sn, sb = stats(n), stats(b)
        stat_rel = max(abs(p - q) / abs(q) for p, q in zip(sn, sb))
        out = ".output." in name
        real_rows.append([name, name, "torch.float32", "torch.float32", "[8]", "[8]", "False", "False", repr(cos),
                          "0.0", repr(float(abs_err.max())), repr(rel), "1.0", "1.0"] + [repr(v) for v in sn + sb] +
                         ["True", "Yes" if rel < 0.5 else "No", "", "['File model.py, line 1']", "N/A"])
        pct = [abs(p - q) / abs(q) for p, q in zip(sn, sb)]
        stats_rows.append([name, name, "torch.float32", "torch.float32", "[8]", "[8]", "False", "False"] +
                          [repr(p - q) for p, q in zip(sn, sb)] + [f"{100 * v}%" for v in pct] +
                          [repr(v) for v in sn + sb] + ["True", "", ""])
        differs_stats = out and any(v > th[c] for v, c in zip(
            pct, ["MaxRelativeErr", "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr"]))
        exp_real.append({"name": name, "cosine": cos, "max_abs": float(abs_err.max()), "max_rel": rel,
                         "stat_rel": stat_rel, "differs": out and stat_rel > 0.5})
        exp_stats.append({"name": name, "cosine": None, "max_abs": abs(sn[0] - sb[0]),
                          "max_rel": float(f"{100 * pct[0]}") / 100, "stat_rel": max(pct),
                          "differs": bool(differs_stats)})
    write_csv(os.path.join(HERE, "compare_real", "compare_result_20260101000000.csv"), COMPARE_REAL_HEADER,
              real_rows)
    write_csv(os.path.join(HERE, "compare_stats", "compare_result_20260101000000.csv"), COMPARE_STATS_HEADER,
              stats_rows)
    for rows, name in ((exp_real, "expected_compare_real.json"), (exp_stats, "expected_compare_stats.json")):
        first = next((i for i, r in enumerate(rows) if r["differs"]), None)
        assert first == 3, first
        with open(os.path.join(HERE, name), "w") as f:
            json.dump({"first_diff": first, "rows": rows}, f, indent=1)


def write_precision_expected():
    """api_precision_compare's page data for msprobe's own CSVs: each output's worst ratio column (the most
    severe verdict, then the largest ratio), the flagged order (errors, then Warnings, each by that ratio) and
    the verdict counts of the result CSV."""
    rc = os.path.join(CONF, "api_precision_compare_result_20250101000000.csv")
    dc = os.path.join(CONF, "api_precision_compare_details_20250101000000.csv")
    with open(rc, encoding="utf-8-sig", newline="") as f:
        res = list(csv.reader(f))[1:]
    statuses = ["pass", "Warning", "error", "SKIP"]
    fwd = {s: 0 for s in statuses}
    bwd = {s: 0 for s in statuses}
    for r in res:
        if r[1].strip():
            fwd[r[1].strip()] += 1
        if r[2].strip():
            bwd[r[2].strip()] += 1
    with open(dc, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f))
    h = rows[0]
    sev = {"error": 3, "Warning": 2, "pass": 1, "SKIP": 0}
    out = []
    for r in rows[1:]:
        best, metric, ratio = None, "", None
        for i, name in enumerate(h):
            if not name.endswith("比值"):
                continue
            v = num(r[i])
            if v is None:
                continue
            verdict = r[i + 1].strip() if i + 1 < len(h) and h[i + 1].endswith("判定结果") else ""
            key = (sev.get(verdict, -1), v)
            if best is None or key > best:
                best, metric, ratio = key, name, v
        out.append({"name": r[0], "result": r[h.index("比对结果")].strip(), "worst_metric": metric,
                    "worst_ratio": ratio})
    flagged = [i for i, o in enumerate(out) if o["result"] in ("error", "Warning")]
    flagged.sort(key=lambda i: (0 if out[i]["result"] == "error" else 1,
                                -(out[i]["worst_ratio"] if out[i]["worst_ratio"] is not None else -1.0)))
    with open(os.path.join(HERE, "expected_precision_head.json"), "w") as f:
        json.dump({"apis": len(res), "forward": fwd, "backward": bwd, "rows": out, "flagged": flagged}, f, indent=1,
                  ensure_ascii=False)


if __name__ == "__main__":
    main()
    os.makedirs(os.path.join(HERE, "compare_real"), exist_ok=True)
    os.makedirs(os.path.join(HERE, "compare_stats"), exist_ok=True)
    write_compare_fixtures()
    write_precision_expected()
