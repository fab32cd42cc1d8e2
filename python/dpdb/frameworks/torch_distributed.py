"""torch.distributed.breakpoint(), in dpdb.

Every rank calls `torch.distributed.breakpoint(rank=N)`: rank N stops at a pdb prompt, the others
wait for it in a barrier. Torch raises the timeout of every process group (to `timeout_s`, an
hour) so that the waiting ranks' barrier does not time out while N is paused, and never sets it
back: every collective after it, in every rank, waits an hour where the job asked for less
(pytorch #154563). Its pdb reads /dev/stdin, which a rank started by torchrun under dpdb does not
share with the user.

Here, in a process that carries dpdb, the rank that breaks stops in a dpdb session at the line
that called torch.distributed.breakpoint(), and each rank sets every group's timeout back to what
it was once the barrier is passed. The timeout of a collective that other ranks wait in while a
rank is paused at a plain `breakpoint()` cannot be raised from here (it was fixed when the
collective started): see docs/frameworks.md.
"""

import functools
import inspect
import sys

_MODULE = "torch.distributed"
TOLD = ("torch: the process groups' timeouts are raised while the ranks wait at "
        "torch.distributed.breakpoint(), and set back once it returns")


class Torch:
    """The strategy (see supervisors): its work is done as torch.distributed is imported and at
    each torch.distributed.breakpoint(), none while paused."""

    name = "torch"

    @staticmethod
    def prepare():
        from dpdb import _on_import

        _on_import.when_imported(_MODULE, _adapt)

    def applies(self):
        return False


def _adapt(distributed):
    original = getattr(distributed, "breakpoint", None)
    if original is None or not hasattr(distributed, "_make_distributed_pdb"):
        return  # torch without distributed support, or one whose breakpoint we do not know
    signature = inspect.signature(original)

    @functools.wraps(original)
    def breakpoint(*args, **kwargs):
        try:
            saved = _timeouts(distributed)
        except Exception as error:  # a torch whose groups we do not know: torch's way, then
            sys.stderr.write("dpdb: torch strategy: %r\n" % error)
            saved = ()
        called = signature.bind(*args, **kwargs)
        called.apply_defaults()
        arguments = called.arguments
        # The rank that breaks stops here, before torch's function and its barrier, one `up`
        # from its caller. With `skip`, only torch knows when to stop: its pdb is dpdb's, in
        # its frame.
        stops_here = arguments.get("skip", 0) == 0 and (
            distributed.get_rank() == arguments.get("rank", 0))
        if stops_here:
            from dpdb import _set_trace_at

            _set_trace_at(sys._getframe(0), header=TOLD, commands=["up"])
        try:
            _Session.stopped = stops_here
            return original(*args, **kwargs)
        finally:
            _Session.stopped = False
            _restore(saved)

    distributed._make_distributed_pdb = _Session
    distributed.breakpoint = breakpoint


class _Session:
    """What torch's breakpoint asks of the pdb it makes: a message (which tells the user to go
    `up` to the caller, where dpdb's prompt is already) and set_trace(), which stops where torch
    calls it unless the rank stopped before."""

    stopped = False

    def message(self, text):
        pass

    def set_trace(self):
        from dpdb import _set_trace_at

        if not _Session.stopped:
            _set_trace_at(sys._getframe(1), header=TOLD)


def _timeouts(distributed):
    """(backend, its timeout) for every backend of every process group of this rank."""
    import torch

    saved = []
    for group in list(distributed.distributed_c10d._world.pg_map):
        for device in group._device_types:
            backend = group._get_backend(torch.device(device))
            saved.append((backend, backend.options._timeout))
    return saved


def _restore(saved):
    for backend, timeout in saved:
        backend.set_timeout(timeout)
