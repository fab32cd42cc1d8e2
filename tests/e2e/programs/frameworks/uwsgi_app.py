"""A WSGI app for uWSGI's workers: /stop calls breakpoint(); every request passes the line
marked for a global breakpoint."""

import os


def application(environ, start_response):
    path = environ["PATH_INFO"]
    pid = os.getpid()
    if path == "/stop":
        breakpoint()
    answer = "%s %d\n" % (path, pid)  # global breakpoint here
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [answer.encode()]
