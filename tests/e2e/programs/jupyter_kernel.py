"""A Jupyter kernel started through jupyter_client, as a notebook server starts it; its first
cell calls breakpoint(), its second one in a pool worker forked from the kernel."""

from jupyter_client.manager import start_new_kernel

CELLS = (
    "value = 21\nbreakpoint()\nprint('cell done', value * 2)\n",
    "import multiprocessing\n"
    "def work(item):\n"
    "    breakpoint()\n"
    "    return item * 3\n"
    "with multiprocessing.get_context('fork').Pool(1) as pool:\n"
    "    print('pool done', pool.map(work, [5]))\n",
)

manager, client = start_new_kernel(kernel_name="python3")
try:
    for cell in CELLS:
        printed = []
        client.execute_interactive(
            cell, timeout=120,
            output_hook=lambda message: printed.append(message["content"].get("text", "")))
        print("kernel printed:", "".join(printed).strip())
finally:
    client.stop_channels()
    manager.shutdown_kernel(now=True)
