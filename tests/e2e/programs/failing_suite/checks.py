"""A test that fails, one that passes and one that skips, for `dpdb run --post-mortem -m pytest`
(named so that the suite itself does not collect it: test_caught passes this file by name)."""
import pytest


def test_passes():
    assert sum(range(5)) == 10


def test_skips():
    pytest.skip("a skip is no failure")


def test_fails():
    rows = [3, 0]
    assert rows[0] / rows[1] > 1  # line: divide
