"""A bare ASGI app that stops at a breakpoint in the event loop's thread, served by uvicorn or by
gunicorn's uvicorn worker."""


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    rows = int(scope["path"].rsplit("/", 1)[-1])
    total = sum(range(rows))
    breakpoint()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"score %d\n" % total})


async def lifespan(receive, send):
    # Nothing to start or stop; uvicorn says "Application startup complete" once it listens.
    while True:
        message = await receive()
        await send({"type": message["type"] + ".complete"})
        if message["type"] == "lifespan.shutdown":
            return
