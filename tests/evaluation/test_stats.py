"""Wilson intervals and the exact McNemar test against published and hand-computed values."""
from __future__ import annotations

import pytest

from course_utils.evaluation.stats import Rate, mcnemar_exact, wilson_interval


@pytest.mark.parametrize(
    "successes, n, low, high",
    [
        (23, 30, 0.5907, 0.8821),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (81, 263, 0.2553, 0.3662),  # Newcombe (1998), Statistics in Medicine 17:857, table II
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_interval_known_values(successes, n, low, high):
    assert wilson_interval(successes, n) == pytest.approx((low, high), abs=1e-4)


def test_wilson_interval_stays_in_bounds_and_widens_with_confidence():
    assert wilson_interval(0, 1)[0] == 0.0 and wilson_interval(1, 1)[1] == 1.0
    narrow, wide = wilson_interval(23, 30, 0.90), wilson_interval(23, 30, 0.99)
    assert wide[0] < narrow[0] < 23 / 30 < narrow[1] < wide[1]


@pytest.mark.parametrize("successes, n", [(0, 0), (3, 2), (-1, 4)])
def test_wilson_interval_refuses_impossible_counts(successes, n):
    with pytest.raises(ValueError):
        wilson_interval(successes, n)


def test_rate_formats_value_counts_and_interval():
    rate = Rate.of(23, 30)
    assert (rate.value, rate.interval) == (pytest.approx(23 / 30), pytest.approx([0.5907, 0.8821], abs=1e-4))
    assert rate.format() == "0.767 (23/30, 95% CI 0.59–0.88)"
    assert Rate.of(23, 30, confidence=0.9).format().endswith("90% CI 0.62–0.87)")


def test_rate_without_data():
    rate = Rate.of(0, 0)
    assert (rate.value, rate.low, rate.high, rate.interval) == (None, None, None, None)
    assert rate.format() == "n/a (0 queries)" and rate.format("triggers") == "n/a (0 triggers)"


@pytest.mark.parametrize(
    "b, c, p",
    [
        (0, 0, 1.0),
        (1, 1, 1.0),
        (0, 5, 0.0625),  # 2 / 2**5: five discordant queries all one way is not yet p < 0.05
        (5, 0, 0.0625),
        (0, 6, 0.03125),
        (2, 8, 0.109375),  # 2 * (1 + 10 + 45) / 2**10
        (1, 2, 1.0),
    ],
)
def test_mcnemar_exact_known_values(b, c, p):
    assert mcnemar_exact(b, c) == pytest.approx(p)


def test_mcnemar_exact_large_counts_stay_finite():
    assert 0 < mcnemar_exact(400, 520) < 0.001
    assert mcnemar_exact(500, 500) == 1.0


def test_mcnemar_exact_refuses_negative_counts():
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


@pytest.mark.parametrize("n", range(1, 200))
def test_the_interval_always_holds_the_rate_itself(n):
    """38/38 gave a high bound of 0.9999999999999999, below the rate: a negative error bar in lesson 04's plot."""
    for successes in {0, 1, n // 2, n - 1, n}:
        low, high = wilson_interval(successes, n)
        assert low <= successes / n <= high


def test_a_p_value_is_written_to_three_places_or_as_below_a_thousandth():
    from course_utils.evaluation.stats import format_p

    assert [format_p(p) for p in (0.0004, 0.001, 0.0213, 1.0)] == ["< 0.001", "= 0.001", "= 0.021", "= 1.000"]
