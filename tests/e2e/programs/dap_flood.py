"""A job for the copy of a program's output to an IDE while the hub stops reading: it prints more
than the hub's socket and the agent's outbox hold, then says, in a file, that it went on (the test
says when, by files in the working directory)."""

from cues import wait_for

if __name__ == "__main__":
    print("dap_flood ready", flush=True)
    wait_for("hub-stopped")
    for i in range(3000):  # 3 MB
        print("dap_flood line %d %s" % (i, "y" * 1000))
    print("dap_flood printed all", flush=True)
    open("printed", "w").close()
    wait_for("end")
