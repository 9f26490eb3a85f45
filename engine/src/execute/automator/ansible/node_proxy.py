"""ssh's ProxyCommand inside Corral's Ansible sandbox: joins stdin and stdout to the
relay socket (the first argument), which Corral connects to the step's node.

The sandbox has no network; this socket is its only way out.
"""

import os
import selectors
import socket
import sys


def write_all(fd, data):
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def main():
    relay = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    relay.connect(sys.argv[1])
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ)
    selector.register(relay, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj == 0:
                data = os.read(0, 65536)
                if data:
                    relay.sendall(data)
                else:
                    selector.unregister(0)
                    relay.shutdown(socket.SHUT_WR)
            else:
                data = relay.recv(65536)
                if not data:
                    return
                write_all(1, data)


if __name__ == "__main__":
    main()
