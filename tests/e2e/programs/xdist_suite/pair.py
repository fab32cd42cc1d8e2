"""Two tests that stop, run by pytest-xdist in two workers (named so that the suite itself does
not collect them: test_job passes this file to pytest by name)."""
import os


def test_one():
    breakpoint()
    assert os.environ["PYTEST_XDIST_WORKER"].startswith("gw")


def test_two():
    breakpoint()
    assert os.environ["PYTEST_XDIST_WORKER"].startswith("gw")
