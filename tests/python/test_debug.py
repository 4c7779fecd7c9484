"""ember.debug and ember.profiler on the CPU (the device-side events are in
test_debug_fake_cuda.py on a fake driver and tests/gpu/test_debug_gpu.py on the GPU)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import warnings

import ember
import numpy as np
import pytest
from ember import debug, profiler


def test_modes_validate_and_restore():
    assert debug.get_sync_mode() == "off" and debug.get_transfer_mode() == "off"
    with pytest.raises(ValueError, match="set_sync_mode: mode must be"):
        debug.set_sync_mode("loud")
    with pytest.raises(ValueError, match="transfer_mode: mode must be"):
        with debug.transfer_mode("sometimes"):
            pass
    with debug.sync_mode("error"):
        assert debug.get_sync_mode() == "error"
        seen = []
        t = threading.Thread(target=lambda: seen.append(debug.get_sync_mode()))
        t.start()
        t.join()
        assert seen == ["off"], "context managers are per thread"
    assert debug.get_sync_mode() == "off"
    debug.set_transfer_mode("warn")
    try:
        assert debug.get_transfer_mode() == "warn"
        assert ember._core._debug.enabled()
    finally:
        debug.set_transfer_mode("off")
    assert not ember._core._debug.enabled()


def test_cpu_ops_have_no_hidden_costs():
    x = ember.arange(10.0)
    with debug.ledger() as led:
        v = x.sum().item()
        bool(x[0] == 0)
        repr(x)
        ember.nonzero(x > 3)
    assert v == 45.0
    assert led.events == []
    assert str(led) == "ember.debug.ledger: 0 events"
    s = led.summary()
    assert s["sync"] == {"count": 0, "bytes": 0, "ms": 0.0} and s["implicit_syncs"] == 0


def test_ledger_arguments():
    with pytest.raises(ValueError, match="unknown kinds"):
        debug.ledger(kinds=["syncs"])
    led = debug.ledger()
    with led:
        with pytest.raises(RuntimeError, match="already open"):
            led.__enter__()
    assert repr(led) == "<ember.debug.Ledger: 0 events>"


def test_location_tokens_name_the_callers_line():
    token = ember._core._debug.location()
    line = sys._getframe().f_lineno - 1
    assert ember._core._debug.describe(token) == (
        f"{__file__}:{line} in test_location_tokens_name_the_callers_line"
    )


def test_environment_modes(tmp_path):
    code = "import ember; print(ember.debug.get_sync_mode(), ember.debug.get_transfer_mode())"
    env = dict(os.environ, EMBER_SYNC_MODE="warn", EMBER_TRANSFER_MODE="bogus")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["warn", "off"]
    assert "EMBER_TRANSFER_MODE='bogus' ignored" in r.stderr


def test_profiler_on_the_cpu(tmp_path):
    x = ember.ones((256, 256), dtype=ember.float32)
    with profiler.profile() as prof:
        y = x * 2 + 1
        s = ember.sum(y, axis=0)
        m = ember.mean(y)  # a Python function calling other ops
        z = ember.matmul(y, y)
    ka = {a.key: a for a in prof.key_averages()}
    assert {"ember.multiply", "ember.add", "ember.sum", "ember.matmul"} <= set(ka)
    mul = ka["ember.multiply"]
    assert mul.count == 1 and mul.kind == "op"
    assert mul.bytes == 2 * 4 * 256 * 256  # read x, write the result
    assert mul.memory == 4 * 256 * 256
    assert mul.cuda_time_total == 0 and mul.gbps is None
    assert ka["ember.sum"].bytes == 4 * 256 * 256 + 4 * 256
    events = prof.events()
    assert all(e.cpu_time_total >= 0 for e in events)
    top = [e for e in events if e.parent not in {o.id for o in events}]
    assert 0 < sum(e.cpu_time_total for e in top) <= prof.wall_time_us
    assert sum(e.self_cpu_time_total for e in events) <= prof.wall_time_us
    assert float(m) == 3.0 and s.shape == (256,) and z.shape == (256, 256)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=3)
    assert table.count("\n") == 3 + 5 and "ember." in table
    with pytest.raises(ValueError, match="sort_by must be one of"):
        prof.key_averages().table(sort_by="speed")
    path = prof.export_chrome_trace(str(tmp_path / "t.json"))
    trace = json.load(open(path))
    ops = [e for e in trace["traceEvents"] if e.get("cat") == "op"]
    assert {e["name"] for e in ops} >= {"ember.multiply", "ember.sum", "ember.matmul"}
    assert all(e["ph"] == "X" and e["dur"] > 0 for e in ops)


def test_profiler_nests_and_is_exclusive():
    with profiler.profile():
        with pytest.raises(RuntimeError, match="another profile is running"):
            with profiler.profile():
                pass
    p = profiler.profile()
    with pytest.raises(RuntimeError, match="has not finished"):
        p.events()


def test_nvtx_and_memory_snapshot_without_a_gpu():
    assert isinstance(ember.cuda.nvtx.is_available(), bool)
    with ember.cuda.nvtx.range("outer"):
        ember.cuda.nvtx.mark("here")

    @ember.cuda.nvtx.range("decorated")
    def f(a):
        return a + 1

    assert f(1) == 2
    with profiler.emit_nvtx():
        ember.ones(3) + 1
    import ember.cuda.nvtx as nv

    assert nv is ember.cuda.nvtx
    if not ember.cuda.is_available():
        assert ember.cuda.memory_snapshot() == []


def test_strict_modes_do_not_touch_cpu_code():
    x = ember.arange(5)
    with debug.sync_mode("error"), debug.transfer_mode("error"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert int(x[2]) == 2
            assert ember.asnumpy(x + np.ones(5, np.int64)).tolist() == [1, 2, 3, 4, 5]
