"""The stages of pipeline.py that the front end and the parsers run."""


def receive(request, i):
    rows = list(range(i % 4 + 1))
    return rows  # stage 1: received


def parse(request, rows):
    total = sum(rows) * 3
    return total  # stage 2: parsed


def serve(inbox, results):
    while True:
        item = inbox.get()
        if item is None:
            return
        request, rows = item
        results.put((request, parse(request, rows)))
