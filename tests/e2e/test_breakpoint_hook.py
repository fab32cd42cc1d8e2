"""breakpoint() under `dpdb run` reaches dpdb when a library replaced sys.breakpointhook with a
debugger's hook that has no client (debugpy's, which ipykernel installs in every kernel)."""

import pytest

from conftest import PROMPT, expect_all, finish, program, stop_line

pytest.importorskip("debugpy")


@pytest.mark.parametrize("listening", [False, True], ids=["imported", "listening"])
def test_breakpoint_reaches_dpdb_past_debugpys_hook(dpdb, listening):
    args = ["listen"] if listening else []
    child = dpdb.spawn("dpdb", "run", program("debugpy_hook.py"), *args,
                       env={"PYDEVD_DISABLE_FILE_VALIDATION": "1"})
    child.expect("hook replaced True")
    expect_all(child, r"attached to session \d+", stop_line(r"print\(\"after the breakpoint"))
    child.expect(PROMPT)
    child.sendline("p value")
    child.expect("42")
    child.expect(PROMPT)
    child.sendline("c")
    child.expect("after the breakpoint 84")
    finish(child)


def test_breakpoint_in_a_jupyter_kernels_cell(dpdb):
    """A real kernel (ipykernel, started by jupyter_client as a notebook server does): a cell's
    breakpoint() opens a session in the kernel's process, in the user's terminal, and so does
    one in a pool worker the kernel forked."""
    pytest.importorskip("jupyter_client")
    pytest.importorskip("ipykernel")
    child = dpdb.spawn("dpdb", "run", program("jupyter_kernel.py"), timeout=120,
                       env={"PYDEVD_DISABLE_FILE_VALIDATION": "1"})
    child.expect(r"attached to session \d+: pid \d+ \S+ -m ipykernel_launcher")
    child.expect(PROMPT)
    child.sendline("p value")
    child.expect("21")
    child.expect(PROMPT)
    child.sendline("c")
    child.expect("kernel printed: cell done 42")
    # The pool worker forked from the kernel inherits the hook.
    child.expect(r"attached to session \d+: pid \d+ .*in work\(\)")
    child.expect(PROMPT)
    child.sendline("p item")
    child.expect("5")
    child.expect(PROMPT)
    child.sendline("c")
    child.expect(r"kernel printed: pool done \[15\]")
    finish(child)
