"""A job for `dpdb dap`'s verified breakpoints: one process that imports its modules only when the
test says so (an "import" file in the working directory): late_plain from the working directory,
late_linked through `linkdir`, a symlink to the directory `real` that holds it. Then it calls
both every 10 ms until an "end" file appears."""

import os
import sys
import time

from cues import wait_for

if __name__ == "__main__":
    print("dap_late_import waiting", flush=True)
    wait_for("import")
    sys.path[:0] = [os.getcwd(), os.path.join(os.getcwd(), "linkdir")]
    import late_linked
    import late_plain

    for _ in range(6000):
        late_plain.plain(1)
        late_linked.linked(2)
        if os.path.exists("end"):
            break
        time.sleep(0.01)
