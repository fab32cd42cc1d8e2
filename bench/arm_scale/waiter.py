# One process of bench/arm_scale: waits, cheaply, until the benchmark says go, then runs the
# line the benchmark's breakpoint is on.
import os
import time

while not os.path.exists(os.environ["ARM_SCALE_GO"]):
    time.sleep(0.05)
reached = True  # the breakpoint's line (ARM_SCALE_LINE)
