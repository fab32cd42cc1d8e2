"""Stops at its start; the test steps with `n` through a loop whose line holds a logpoint."""
total = 0
breakpoint()
for i in range(3):
    total += i  # the logged line
print("total %d" % total)
