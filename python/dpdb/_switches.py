"""What the user switched off of dpdb's adaptations to frameworks: each adaptation is a named
strategy, and one environment variable per family of them (DPDB_SUPERVISORS,
DPDB_POST_MORTEM_HOOKS) says which are on: unset or `on` (all), `off` (none), or the names to
leave out, e.g. `-gunicorn,-celery`."""

import os
import sys

_warned = set()


def enabled(variable, strategies):
    """The strategies (each with a `name`) that `variable` leaves on."""
    setting = os.environ.get(variable, "on").strip()
    if setting == "off":
        return ()
    left_out = {item.strip()[1:] for item in setting.split(",") if item.strip().startswith("-")}
    unknown = left_out - {strategy.name for strategy in strategies}
    if unknown:
        warn_once("%s: no strategy named %s (there are %s)" % (
            variable, ", ".join(sorted(unknown)), ", ".join(s.name for s in strategies)))
    return tuple(strategy for strategy in strategies if strategy.name not in left_out)


def warn_once(text):
    """One line on the program's stderr, once per process, for what the user should fix."""
    if text not in _warned:
        _warned.add(text)
        sys.stderr.write("dpdb: %s\n" % text)
