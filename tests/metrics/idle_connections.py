"""idle_connections.py HOST PORT N: keep N idle TCP connections open to HOST:PORT.

A connection sends nothing (no HTTP request, no TLS ClientHello). When the
server closes one, it is opened again at once, so the server always faces N
idle connections (a client that leaks connections, or a local user holding
the port). Prints "ready" once the first N are connected; on SIGTERM prints
"dropped D max_lifetime_s S": how many the server closed, and the longest a
closed one had lived (its connect to the server's close). Runs as any user.
"""
import selectors
import signal
import socket
import sys
import time

host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sel = selectors.DefaultSelector()
dropped = 0
max_lifetime = 0.0


def open_one():
    s = socket.create_connection((host, port), timeout=5)
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ, time.monotonic())


def report(*_):
    print(f"dropped {dropped} max_lifetime_s {max_lifetime:.2f}", flush=True)
    sys.exit(0)


signal.signal(signal.SIGTERM, report)
for _ in range(count):
    open_one()
print("ready", flush=True)
while True:
    for key, _ in sel.select(timeout=0.2):
        try:
            data = key.fileobj.recv(4096)
        except OSError:
            data = b""
        if data:
            continue  # an error page, say: the close follows
        sel.unregister(key.fileobj)
        key.fileobj.close()
        dropped += 1
        max_lifetime = max(max_lifetime, time.monotonic() - key.data)
        open_one()
