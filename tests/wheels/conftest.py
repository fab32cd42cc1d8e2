# This directory tests the wheels that dev/wheels built (dist/): dev/test's "Wheels" step runs it,
# after building them, by naming its file. `pytest tests` leaves it out.
collect_ignore = ["test_wheels.py"]
