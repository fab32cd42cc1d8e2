"""`python -m dpdb ...` runs the dpdb command that was installed with this package, for when its
script folder is not on PATH (a container, a `pip install --user`). Programs that `dpdb run`
starts get this interpreter, unless DPDB_PYTHON or --python says otherwise."""

import os
import shutil
import sys
import sysconfig


def installed_command():
    """The dpdb executable of this installation: in the scripts folder of the prefix that holds
    this package (PREFIX/lib/pythonX.Y/site-packages/dpdb -> PREFIX/bin), of the interpreter's
    schemes, or on PATH."""
    package = os.path.dirname(os.path.abspath(__file__))
    prefix = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(package))))
    folders = [os.path.join(prefix, "bin"), sysconfig.get_path("scripts"),
               sysconfig.get_path("scripts", "posix_user")]
    for folder in folders:
        candidate = os.path.join(folder, "dpdb")
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("dpdb")


def main():
    command = installed_command()
    if command is None:
        sys.exit("dpdb: the dpdb command of this installation is missing (%s); reinstall dpdb"
                 % os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env.setdefault("DPDB_PYTHON", sys.executable)
    os.execve(command, ["dpdb"] + sys.argv[1:], env)


if __name__ == "__main__":
    main()
