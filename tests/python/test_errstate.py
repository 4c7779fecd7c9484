"""Floating-point error reporting of CPU ops as NumPy's: RuntimeWarning by default for divide,
overflow and invalid, FloatingPointError under 'raise', silence under 'ignore', seterrcall's
function and log object, errstate as a context manager and a decorator (ember's state is
NumPy's). CUDA ops do not report (CuPy does not either)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import ember
import numpy as np
import pytest

CPU = "cpu"

# (ember call, NumPy call, the message both give)
CASES = [
    (lambda m: m.log(m.asarray([-1.0])), "invalid value encountered in log"),
    (lambda m: m.log(m.asarray([0.0])), "divide by zero encountered in log"),
    (lambda m: m.asarray([1.0]) / 0, "divide by zero encountered in divide"),
    (lambda m: m.asarray([1e308]) * 10, "overflow encountered in multiply"),
    (lambda m: m.sqrt(m.asarray([-1.0], dtype=m.float32)), "invalid value encountered in sqrt"),
    (lambda m: m.asarray([np.inf]) - np.inf, "invalid value encountered in subtract"),
    (lambda m: m.power(m.asarray([2.0]), 2000), "overflow encountered in power"),
    (lambda m: m.arcsin(m.asarray([2.0])), "invalid value encountered in arcsin"),
    (lambda m: m.exp(m.asarray([1000.0])), "overflow encountered in exp"),
]


def messages(fn, **modes):
    with np.errstate(**modes), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(x.message) for x in w if x.category is RuntimeWarning]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_warns_as_numpy(case):
    fn, text = CASES[case]
    with ember.device(CPU):
        got = messages(lambda: fn(ember), all="warn", under="ignore")
    want = messages(lambda: fn(np), all="warn", under="ignore")
    assert want == [text]
    assert got == want


@pytest.mark.parametrize("case", range(len(CASES)))
def test_raise_and_ignore(case):
    fn, text = CASES[case]
    with ember.device(CPU):
        with ember.errstate(all="raise", under="ignore"):
            with pytest.raises(FloatingPointError, match=text):
                fn(ember)
        assert messages(lambda: fn(ember), all="ignore") == []


def test_defaults_are_numpys():
    # outside the test fixtures (which silence NumPy): a fresh interpreter
    code = (
        "import warnings, ember\n"
        "print(sorted(ember.geterr().items()))\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    ember.log(ember.asarray([-1.0], device='cpu'))\n"
        "    ember.exp(ember.asarray([-1000.0], device='cpu'))\n"
        "print([(x.category.__name__, str(x.message)) for x in w])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == str(
        [("divide", "warn"), ("invalid", "warn"), ("over", "warn"), ("under", "ignore")]
    )
    assert out[1] == str([("RuntimeWarning", "invalid value encountered in log")])


def test_log_of_minus_one_warns_once_with_the_callers_line():
    with np.errstate(invalid="warn"), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ember.log(ember.asarray([-1.0, -2.0], device=CPU))
    assert len(w) == 1
    assert w[0].category is RuntimeWarning
    assert w[0].filename == __file__


def test_several_flags_in_numpys_order():
    x = ember.asarray([0.0, -1.0], device=CPU)
    want = messages(lambda: np.log(np.asarray([0.0, -1.0])), all="warn")
    assert messages(lambda: ember.log(x), all="warn") == want
    with ember.errstate(divide="raise", invalid="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero"):
            ember.log(x)


def test_clean_ops_and_nan_inputs_stay_quiet():
    x = ember.asarray([np.nan, 1.0, np.inf, -np.inf], device=CPU)
    with ember.errstate(all="raise"):
        ember.add(x, 1.0)
        _ = x < 1.0
        _ = x == x
        ember.isnan(x)
        ember.isfinite(x)
        ember.maximum(x, 0.0)
        ember.sqrt(ember.asarray([4.0, np.nan], device=CPU))
        ember.log(ember.asarray([np.nan], device=CPU))


def test_call_and_log_modes():
    calls = []
    with ember.errstate(call=lambda kind, flag: calls.append((kind, flag)), all="call"):
        ember.log(ember.asarray([-1.0, 0.0], device=CPU))
    with np.errstate(call=lambda kind, flag: calls.append((kind, flag)), all="call"):
        np.log(np.asarray([-1.0, 0.0]))
    assert calls[:2] == calls[2:] and [c[0] for c in calls[:2]] == [
        "divide by zero",
        "invalid value",
    ]

    class Log:
        def __init__(self):
            self.lines = []

        def write(self, text):
            self.lines.append(text)

    log = Log()
    with ember.errstate(call=log, invalid="log"):
        ember.log(ember.asarray([-1.0], device=CPU))
    assert log.lines == ["Warning: invalid value encountered in log\n"]


def test_print_mode(capsys):
    with ember.errstate(invalid="print"):
        ember.log(ember.asarray([-1.0], device=CPU))
    assert "Warning: invalid value encountered in log" in capsys.readouterr().out


def test_errstate_decorator_and_seterr():
    @ember.errstate(divide="raise")
    def f():
        return ember.asarray([1.0], device=CPU) / 0

    with np.errstate(divide="ignore"):
        with pytest.raises(FloatingPointError):
            f()
        old = ember.seterr(divide="raise")
        try:
            assert old["divide"] == "ignore"
            with pytest.raises(FloatingPointError):
                ember.asarray([1.0], device=CPU) / 0
        finally:
            ember.seterr(**old)
        assert ember.geterr()["divide"] == "ignore"
    with pytest.raises(ValueError):
        ember.seterr(all="loud")


def test_inplace_and_large_arrays_report():
    x = ember.ones(1 << 18, device=CPU)  # split over the thread pool
    x[12345] = 0
    with ember.errstate(divide="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
            ember.ones(1 << 18, device=CPU) / x
        y = ember.ones(3, device=CPU)
        with pytest.raises(FloatingPointError, match="divide"):
            y /= ember.zeros(3, device=CPU)


def test_mixed_dtypes_report():
    with ember.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError, match="invalid value encountered in log"):
            ember.log(ember.asarray([-1], dtype=ember.int32, device=CPU))


def test_cuda_does_not_report(device):
    if device == "cpu":
        pytest.skip("the CPU reports (the tests above)")
    with ember.errstate(all="raise"):
        ember.log(ember.asarray([-1.0, 0.0], device=device))
