"""A session that went `up` from the frame it stopped in: once it is continued and the function
returns, what that frame held is the program's to release."""
import gc

import released_work


class Resource:
    pass


if __name__ == "__main__":
    watched = released_work.hold(Resource())
    gc.collect()
    print("resource released" if watched() is None else "resource still held", flush=True)
