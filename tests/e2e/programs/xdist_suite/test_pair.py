"""Two tests that stop, run by pytest-xdist in two workers."""
import os


def test_one():
    breakpoint()
    assert os.environ["PYTEST_XDIST_WORKER"].startswith("gw")


def test_two():
    breakpoint()
    assert os.environ["PYTEST_XDIST_WORKER"].startswith("gw")
