"""A pool master whose first worker exits as billiard's recycled workers do (status 155) and
whose second stops in a function with a long name."""
import os


def a_function_whose_name_is_long_enough_to_push_the_columns_out_of_line():
    breakpoint()


recycled = os.fork()
if recycled == 0:
    os._exit(155)
os.waitpid(recycled, 0)
print("recycled %d" % recycled, flush=True)
worker = os.fork()
if worker == 0:
    a_function_whose_name_is_long_enough_to_push_the_columns_out_of_line()
    os._exit(0)
os.waitpid(worker, 0)
print("pool done", flush=True)
