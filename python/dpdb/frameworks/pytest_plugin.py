"""dpdb's pytest plugin under `dpdb run --post-mortem` (one of pytest's default plugins in a
process under dpdb, see caught_exceptions.Pytest): a failing test opens a post-mortem session
where it failed, in the process that ran it (an xdist worker too), as `pytest --pdb` opens pdb."""

from dpdb.frameworks import caught_exceptions


def pytest_exception_interact(node, call, report):
    if node.config.getoption("usepdb", False):
        return  # the user asked for pytest's own --pdb
    value = call.excinfo.value
    # A doctest's failure wraps the example's exception, whose frames are the ones to see.
    underlying = getattr(value, "exc_info", None)
    traceback = underlying[2] if isinstance(underlying, tuple) else call.excinfo.tb
    caught_exceptions.post_mortem(
        value, traceback, "pytest: post-mortem of %s in %s (pytest reports it once you continue)"
        % (type(value).__name__, node.nodeid))
