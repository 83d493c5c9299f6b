"""run_ut / compare / api_precision_compare / run_overflow_check from Python: the CLI's files byte for byte,
progress, cancellation that leaves resumable files, and the GIL released while C++ works."""
import _thread
import os
import subprocess
import threading
import time

import pytest

import probe
from conftest import slow_dump

TS = "20260101000000"


def files(directory):
    """The run's CSVs by name; the run record (.jsonl: start times, absolute paths) is left out."""
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.suffix == ".csv"}


@pytest.mark.parametrize("dump", ["real_gpt_bf16", "pt_fp16_fwdbwd", "pt_bf16_stats"])
def test_run_ut_writes_the_cli_files(cli, data_dir, tmp_path, dump):
    api_info = data_dir / "run_ut" / dump / "dump.json"
    subprocess.run([cli, "run_ut", "-api_info", str(api_info), "-o", str(tmp_path / "cli"), "--timestamp", TS, "-q"],
                   check=True, capture_output=True)
    seen = []
    summary = probe.run_ut(api_info, tmp_path / "py", timestamp=TS, progress=seen.append)
    expected = files(tmp_path / "cli")
    assert len(expected) == 2
    assert files(tmp_path / "py") == expected
    assert summary["apis"] == seen[-1]["total"] == seen[-1]["done"] and not summary["cancelled"]
    assert [p["done"] for p in seen] == sorted(p["done"] for p in seen)


def test_an_exception_in_progress_stops_the_run_and_the_files_resume(cli, data_dir, tmp_path):
    api_info = data_dir / "run_ut" / "real_gpt_bf16" / "dump.json"
    subprocess.run([cli, "run_ut", "-api_info", str(api_info), "-o", str(tmp_path / "cli"), "--timestamp", TS, "-q"],
                   check=True, capture_output=True)

    def stop_at_five(p):
        if p["done"] >= 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as e:
        probe.run_ut(api_info, tmp_path / "py", timestamp=TS, threads=1, progress=stop_at_five)
    partial = e.value.summary
    assert partial["cancelled"] and 5 <= partial["checked"] < 30
    rows = (tmp_path / "py" / os.path.basename(partial["result_csv"])).read_text().count("\n")
    assert 1 < rows < 31
    done = probe.run_ut(api_info, tmp_path / "py", csv_path=partial["result_csv"], timestamp=TS)
    assert not done["cancelled"] and done["apis"] == 30
    assert files(tmp_path / "py") == files(tmp_path / "cli")


def test_ctrl_c_stops_a_long_run_cleanly(tmp_path):
    api_info = slow_dump(tmp_path / "dump.json")
    started = threading.Event()

    def progress(p):
        started.set()

    timer = threading.Thread(target=lambda: (started.wait(30), _thread.interrupt_main()))
    timer.start()
    with pytest.raises(KeyboardInterrupt) as e:
        probe.run_ut(api_info, tmp_path / "out", timestamp=TS, threads=1, progress=progress)
    timer.join()
    summary = e.value.summary
    assert summary["cancelled"] and 1 <= summary["checked"] < 8
    resumed = probe.run_ut(api_info, tmp_path / "out", csv_path=summary["result_csv"], timestamp=TS, threads=1)
    assert resumed["apis"] == 8 and resumed["pass"] == 8 and resumed["checked"] == 8 - summary["checked"]


def test_the_gil_is_released_while_run_ut_works(tmp_path):
    api_info = slow_dump(tmp_path / "dump.json", count=16)
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.05)
    begin = time.monotonic()
    summary = probe.run_ut(api_info, tmp_path / "out", timestamp=TS, threads=1)
    end = time.monotonic()
    stop.set()
    t.join()
    assert summary["pass"] == 16
    assert end - begin > 0.3, "the run must be long enough to tell"
    during = [x for x in ticks if begin + 0.05 < x < end - 0.05]
    # A thread sleeping 1 ms per tick gets a tick in every few ms; with the GIL held it would get none.
    assert len(during) > 20


def test_api_precision_compare_writes_the_cli_files(cli, data_dir, tmp_path):
    api_info = data_dir / "run_ut" / "real_gpt_bf16" / "dump.json"
    run = probe.run_ut(api_info, tmp_path / "ut", timestamp=TS)
    details = run["details_csv"]
    subprocess.run([cli, "api_precision_compare", "-npu", details, "-gpu", details, "-o", str(tmp_path / "cli"),
                    "--timestamp", TS], check=True, capture_output=True)
    seen = []
    summary = probe.api_precision_compare(details, details, tmp_path / "py", timestamp=TS, progress=seen.append)
    assert files(tmp_path / "py") == files(tmp_path / "cli") and len(files(tmp_path / "cli")) == 2
    assert summary["result_rows"] > 0 and seen


def test_compare_writes_the_cli_files(cli, data_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(data_dir / "dump_compare" / "real")
    subprocess.run([cli, "compare", "-i", "compare.json", "-o", str(tmp_path / "cli"), "--timestamp", TS,
                    "--no-xlsx"], check=True, capture_output=True)
    summary = probe.compare("compare.json", tmp_path / "py", timestamp=TS, xlsx=False)
    assert files(tmp_path / "py") == files(tmp_path / "cli") and files(tmp_path / "cli")
    assert summary["outputs"][0]["rows"] > 0


def test_run_overflow_check_writes_the_cli_file(cli, data_dir, tmp_path):
    api_info = data_dir / "overflow" / "overflow_dump" / "dump.json"
    subprocess.run([cli, "run_overflow_check", "-api_info", str(api_info), "-o", str(tmp_path / "cli"),
                    "--timestamp", TS], check=True, capture_output=True)
    (tmp_path / "py").mkdir()
    summary = probe.run_overflow_check(api_info, tmp_path / "py", timestamp=TS)
    assert files(tmp_path / "py") == files(tmp_path / "cli") and files(tmp_path / "cli")
    assert summary["forward_apis"] > 0


def test_run_errors_name_the_file(tmp_path):
    with pytest.raises(probe.IoError) as e:
        probe.run_ut(tmp_path / "none.json", tmp_path)
    assert "none.json" in e.value.file
    with pytest.raises(probe.InvalidArgumentError) as e:
        probe.run_ut(tmp_path / "none.json", tmp_path, device_runner="gpu")
    assert e.value.field == "device_runner"


def test_a_wrong_keyword_is_a_type_error_naming_it(tmp_path):
    """Each binding reads its keywords through one table: a misspelt or missing keyword, or a value of the
    wrong type, is a TypeError naming the function and the keyword, raised before any file is read."""
    import numpy as np
    from probe import _probe
    none = tmp_path / "none.json"
    x = np.ones(3)
    cases = [
        (lambda: probe.run_ut(none, tmp_path, thread=2), "run_ut() got an unexpected keyword argument 'thread'"),
        (lambda: probe.run_ut(none, tmp_path, threads="2"), "run_ut(): keyword 'threads' must be int, not str"),
        (lambda: _probe.run_ut(out_path=str(tmp_path)), "run_ut() missing required keyword argument 'api_info'"),
        (lambda: probe.compare(none, tmp_path, stack=True), "compare() got an unexpected keyword argument 'stack'"),
        (lambda: probe.compare(none, tmp_path, api_mapping=3),
         "compare(): keyword 'api_mapping' must be Optional[str], not int"),
        (lambda: probe.api_precision_compare(none, none, tmp_path, thresholds=None),
         "api_precision_compare(): keyword 'thresholds' must be str, not NoneType"),
        (lambda: probe.run_overflow_check(none, tmp_path, seed=1.5),
         "run_overflow_check(): keyword 'seed' must be int, not float"),
        (lambda: probe.run_overflow_check(none, tmp_path, seed=-1),
         "run_overflow_check(): keyword 'seed' is out of range: -1"),
        (lambda: _probe.judge(x, x, "relu", rul="run_ut"), "judge() got an unexpected keyword argument 'rul'"),
        (lambda: _probe.judge(x, x, "relu", worst_count="3"), "judge(): keyword 'worst_count' must be int, not str"),
        (lambda: _probe.OnlineChecker(dump_path=str(tmp_path), workers="1"),
         "OnlineChecker(): keyword 'workers' must be int, not str"),
        (lambda: _probe.OnlineChecker(tag="t"), "OnlineChecker() missing required keyword argument 'dump_path'"),
    ]
    for call, message in cases:
        with pytest.raises(TypeError) as e:
            call()
        assert str(e.value) == message
    # The right keywords still reach the library: the missing file is the library's error.
    with pytest.raises(probe.IoError):
        probe.run_ut(none, tmp_path, threads=2, save_error_data=True, framework=None)
