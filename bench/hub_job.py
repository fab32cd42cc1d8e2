"""A standalone hub for a benchmark (`dpdb hub`, a state directory of its own, in a temporary
root) and what the benchmarks ask of it: `dpdb` commands, and programs timed under `dpdb run`
joined to it. Each timed program prints `elapsed SECONDS` (its hot loop's own CPU time)."""
import os
import subprocess
import time


def elapsed(output):
    for line in output.splitlines():
        if line.startswith("elapsed "):
            return float(line.split()[1])
    raise RuntimeError("no timing in: %s" % output)


class HubJob:
    def __init__(self, venv, root):
        self.python = os.path.join(venv, "bin", "python")
        self.dpdb = os.path.join(venv, "bin", "dpdb")
        self.socket = os.path.join(root, "hub.sock")
        self.env = dict(os.environ, DPDB_HUB="unix:" + self.socket, XDG_RUNTIME_DIR=root)
        self.hub = subprocess.Popen([self.dpdb, "hub", "--socket", self.socket, "--state-dir",
                                     os.path.join(root, "state"), "--quiet"], env=self.env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):  # bounded: 10 s
            if os.path.exists(self.socket + ".token"):
                break
            time.sleep(0.05)

    def python_version(self):
        return subprocess.run([self.python, "-c", "import sys; print(sys.version.split()[0])"],
                              capture_output=True, text=True).stdout.strip()

    def dpdb_cmd(self, *args):
        done = subprocess.run([self.dpdb] + list(args), env=self.env, capture_output=True,
                              text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        return done.stdout

    def timed(self, *argv):
        """The seconds a program reports, run bare."""
        return elapsed(subprocess.run([self.python] + list(argv), capture_output=True,
                                      text=True, check=True).stdout)

    def timed_under_dpdb(self, *argv):
        """The seconds a program reports, run under `dpdb run` joined to this hub."""
        done = subprocess.run([self.dpdb, "run"] + list(argv), env=self.env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=600)
        return elapsed(done.stdout)

    def close(self):
        self.hub.terminate()
        self.hub.wait(timeout=10)
