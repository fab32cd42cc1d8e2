"""released.py's function, in a module of its own: the session goes `up` into another module."""
import weakref


def hold(resource):
    watched = weakref.ref(resource)
    breakpoint()
    return watched
