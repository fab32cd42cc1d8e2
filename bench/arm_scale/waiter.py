# One process of bench/arm_scale: waits until the benchmark says go, then runs the line the
# benchmark's breakpoint is on. It waits in the kernel, not polling: opening a FIFO for reading
# blocks until the benchmark opens it for writing, which wakes every waiter at once (600 waiters
# polling every 50 ms took about a core of the machine the benchmark measures).
import os

open(os.environ["ARM_SCALE_GO"]).close()
reached = True  # the breakpoint's line (ARM_SCALE_LINE)
