"""`text.shorten`, the one helper that cuts text for messages."""
from course_utils.skills.text import shorten


def test_a_text_that_fits_is_kept_and_a_longer_one_ends_in_an_ellipsis_at_the_width():
    assert shorten("x" * 10, 10) == "x" * 10
    assert shorten("x" * 11, 10) == "x" * 9 + "…" and len(shorten("x" * 500, 300)) == 300


def test_flat_makes_every_run_of_whitespace_one_space_and_flat_false_keeps_it():
    assert shorten(" a\n\tb  c ", 20) == "a b c"
    assert shorten("a\nb", 20, flat=False) == "a\nb"
    assert shorten("a\n" * 50, 10, flat=False) == "a\na\na\na\na…"
