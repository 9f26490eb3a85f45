"""ssh's ProxyCommand inside Corral's Ansible sandbox (with ProxyUseFdpass): connects to
the relay socket (the first argument), which Corral joins to the step's node, and hands
that connection to ssh, which then talks through it directly: no byte of the session
passes through this process, which ends at once.

The sandbox has no network; this socket is its only way out.
"""

import socket
import sys


def main():
    relay = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    relay.connect(sys.argv[1])
    # ssh gives ProxyUseFdpass commands one end of a socket pair as stdin and stdout,
    # and reads one byte with the descriptor attached.
    to_ssh = socket.socket(fileno=1)
    socket.send_fds(to_ssh, [b"\0"], [relay.fileno()])


if __name__ == "__main__":
    main()
