"""A Jupyter kernel started through jupyter_client, as a notebook server starts it; its cell
calls breakpoint()."""

from jupyter_client.manager import start_new_kernel

CELL = "value = 21\nbreakpoint()\nprint('cell done', value * 2)\n"

manager, client = start_new_kernel(kernel_name="python3")
try:
    printed = []
    client.execute_interactive(
        CELL, timeout=120,
        output_hook=lambda message: printed.append(message["content"].get("text", "")))
    print("kernel printed:", "".join(printed).strip())
finally:
    client.stop_channels()
    manager.shutdown_kernel(now=True)
