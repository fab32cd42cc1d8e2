"""A gevent program (monkey-patched): a greenlet that stops at breakpoint() while another,
`sleeper`, is suspended in gevent.sleep."""

from gevent import monkey

monkey.patch_all()

import sys  # noqa: E402 (after the patching, as gevent asks)

import gevent  # noqa: E402


def sleeper():
    while True:
        gevent.sleep(0.05)  # line: sleeper


def worker():
    total = 10
    breakpoint()
    sys.stdout.write("worker done %d\n" % total)
    sys.stdout.flush()


if __name__ == "__main__":
    background = gevent.spawn(sleeper)
    background.name = "sleeper"
    gevent.spawn(worker).join()
    background.kill()
    print("main done")
