"""The intervals of :mod:`yahtzee_sim.intervals` (and heuristic's binomial) are scipy.stats' own, to the last bit,
though they are computed without importing scipy.stats (about a second of every
command's start): scipy.stats is the outside reference here."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from yahtzee_sim.intervals import binomial_interval, t_interval

levels = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99, 0.999]) | st.floats(0.01, 0.9999)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(mean=st.floats(-1e4, 1e4) | st.integers(-300, 300), sd=st.floats(1e-6, 1e3), n=st.integers(2, 10**7),
       level=levels)
def test_t_interval_is_scipys_bit_for_bit(mean, sd, n, level):
    se = sd / math.sqrt(n)
    low, high = stats.t.interval(level, n - 1, loc=mean, scale=se)
    assert t_interval(mean, sd, n, level) == (float(low), float(high))


def test_t_interval_of_float32_inputs_is_scipys():
    mean, sd = np.float32(251.3), np.float32(59.7)
    low, high = stats.t.interval(0.95, 9_999, loc=mean, scale=sd / math.sqrt(10_000))
    assert t_interval(mean, sd, 10_000, 0.95) == (float(low), float(high))


@settings(max_examples=400, deadline=None, derandomize=True)
@given(data=st.data(), n=st.integers(1, 10**8), level=levels)
def test_wilson_interval_is_scipys_bit_for_bit(data, n, level):
    k = data.draw(st.integers(0, n) | st.sampled_from([0, n]))
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    assert binomial_interval(k, n, level) == (float(ci.low), float(ci.high))


def test_other_methods_and_bad_counts_still_go_to_scipy():
    ci = stats.binomtest(3, 40).proportion_ci(confidence_level=0.9, method="exact")
    assert binomial_interval(3, 40, 0.9, method="exact") == (float(ci.low), float(ci.high))
    with pytest.raises(ValueError):
        binomial_interval(5, 4, 0.95)           # more successes than trials: scipy's own refusal


def test_a_simulation_summary_does_not_import_scipy_stats():
    code = ("import sys; from yahtzee_sim import simulate; "
            "r = simulate('yacht', 'greedy', 200, seed=1); r.summary(); r.ci('mean'); "
            "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@settings(max_examples=400, deadline=None, derandomize=True)
@given(n=st.integers(1, 40), p=st.floats(1e-9, 1 - 1e-9) | st.sampled_from([1 - (5 / 6) ** k for k in range(1, 8)]))
def test_the_heuristics_binomial_is_scipys_bit_for_bit(n, p):
    """The upper bonus outlook's binomial (heuristic's set-up) without scipy.stats: the
    numbers of scipy.stats.binom.pmf to the last bit."""
    from yahtzee_sim.strategies.heuristic import binomial_pmf

    got, want = binomial_pmf(n, p), stats.binom.pmf(np.arange(n + 1), n, p)
    assert got.dtype == want.dtype and np.array_equal(got, want)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(n=st.integers(0, 40), p=st.floats(0, 1) | st.sampled_from([0.0, 1.0, 0.3 * (1 - (5 / 6) ** 3)]))
def test_the_goal_outlooks_binomial_tail_is_scipys_bit_for_bit(n, p):
    """The goals' outlooks of cards with aims (Balut, Yamb): ``P(X > k)`` on the (turns,
    boxes) grid heuristic's set-up asks, below and past the support too, the numbers of
    scipy.stats.binom.sf to the last bit."""
    from yahtzee_sim.strategies.heuristic import binomial_sf

    k = np.arange(-2, n + 3)[None, :]
    turns = np.arange(n + 1)[:, None]
    got, want = binomial_sf(k, turns, p), stats.binom.sf(k, turns, p)
    assert got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("rules", ["yahtzee", "balut", "yamb"])
def test_heuristic_play_does_not_import_scipy_stats(rules):
    """A heuristic's games and their summary leave scipy.stats unimported (about a second
    saved): its upper bonus outlook is a binomial, and so are the goals' outlooks of the
    cards with aims (Balut, Yamb)."""
    code = ("import sys; from yahtzee_sim import simulate; "
            f"r = simulate({rules!r}, 'heuristic', 30, seed=1); r.summary(); "
            "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
