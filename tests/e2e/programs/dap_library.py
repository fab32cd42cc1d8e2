"""A job for `dpdb dap`'s justMyCode stepping: a forked child whose code calls into the standard
library (json, which calls back into no user code) and then goes on."""

import json
import multiprocessing


def work():
    text = json.dumps({"a": [1, 2]})  # dap_library: the call into the library
    size = len(text)  # dap_library: the line after it
    return size


if __name__ == "__main__":
    child = multiprocessing.get_context("fork").Process(target=work)
    child.start()
    child.join()
