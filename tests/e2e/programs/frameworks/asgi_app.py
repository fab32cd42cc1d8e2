"""A bare ASGI app that stops at a breakpoint in the event loop's thread, served by uvicorn or by
gunicorn's uvicorn worker."""


async def app(scope, receive, send):
    if scope["type"] != "http":
        return  # lifespan: nothing to start or stop
    rows = int(scope["path"].rsplit("/", 1)[-1])
    total = sum(range(rows))
    breakpoint()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"score %d\n" % total})
