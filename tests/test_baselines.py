"""Chance rows and exact binomial thresholds, checked against the published Table 2 values."""
import math

import pytest

from engine.stats import chance, critical_accuracy, critical_count, upper_tail


def test_chance_follows_the_answer_distribution():
    assert chance({"A": 1, "B": 1, "C": 1, "D": 1}) == pytest.approx(0.25)
    assert chance({"A": 1, "B": 1, "C": 1}) == pytest.approx(1 / 3)
    anomaly = {"none": 0.5, **{f"{r}/{t}": 1 / 16 for r in "ABCD" for t in "rm"}}
    assert chance(anomaly) == pytest.approx(9 / 32)
    with pytest.raises(ValueError, match="not a distribution"):
        chance({})


@pytest.mark.parametrize("p0,k,shown", [(1 / 4, 300, 27.3), (1 / 2, 578, 52.5), (1 / 3, 393, 35.7), (9 / 32, 335, 30.5)])
def test_exact_binomial_thresholds_reproduce_table_2(p0, k, shown):
    assert critical_count(1100, p0) == k
    assert upper_tail(k, 1100, p0) <= 0.05 < upper_tail(k - 1, 1100, p0)
    assert round(100 * critical_accuracy(1100, p0), 1) == shown


def test_upper_tail_is_a_probability():
    assert upper_tail(0, 10, 0.3) == 1.0 and upper_tail(11, 10, 0.3) == 0.0
    assert upper_tail(10, 10, 0.5) == pytest.approx(0.5 ** 10)
    total = sum(math.comb(20, i) * 0.3 ** i * 0.7 ** (20 - i) for i in range(7, 21))
    assert upper_tail(7, 20, 0.3) == pytest.approx(total)


def test_a_threshold_no_accuracy_reaches_is_not_a_number():
    # with 4 items at chance 0.5, even 4 of 4 has p = 1/16 > 0.05: no level to print
    assert critical_count(4, 0.5) == 5 and math.isnan(critical_accuracy(4, 0.5))
    assert critical_accuracy(5, 0.5) == 1.0
