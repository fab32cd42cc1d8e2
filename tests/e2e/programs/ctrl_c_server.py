"""A small socket server in its accept loop (socketserver's, as http.server's and many a
development server's): Ctrl-C stops it the way it does without a debugger."""

import socketserver


class Echo(socketserver.StreamRequestHandler):
    def handle(self):
        self.wfile.write(b"echo " + self.rfile.readline())


with socketserver.TCPServer(("127.0.0.1", 0), Echo) as server:
    print("server listening on %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("server stopped by KeyboardInterrupt", flush=True)
