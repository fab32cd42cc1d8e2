"""Code a loader runs with exec(compile(source, path, "exec")), as Sphinx runs conf.py: no
module holds its file."""


def hook(n):
    return n + 1  # exec'd breakpoint here
