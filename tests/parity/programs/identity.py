class Task:
    pass


class AlwaysEqual:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


def run(items):
    seen = 0
    for item in items:
        seen += 1
    return seen


def main():
    breakpoint()
    print("tasks", run([Task() for _ in range(5)] + [None] * 3))
    print("equal", run([Task(), AlwaysEqual(), None]))


main()
