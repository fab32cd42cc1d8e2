import helper


def safe(x):
    try:
        return helper.boom(x)
    except ValueError as exc:
        msg = str(exc)
        return msg


def unsafe(x):
    value = helper.boom(x)
    return value


def main():
    breakpoint()
    r1 = safe(1)
    r2 = safe(5)
    try:
        unsafe(7)
    except ValueError:
        r3 = "caught"
    print(r1, r2, r3)


main()
