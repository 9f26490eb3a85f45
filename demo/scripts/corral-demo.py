#!/usr/bin/env python3
"""Corral's demo services: small, real servers on python3's standard library only.

  kv    an HTTP key-value store; with --leader it is a follower that copies the
        leader's log and forwards writes to it (kv-cluster's replication)
  app   a web app that counts visits in kv and says which node served the page
        (with no --kv it serves without a counter: paas's DEA stand-in)
  lb    a round-robin HTTP proxy to the backends listed in a file, re-read on change
        so a reconfigure after adding nodes needs no restart
  role  a stand-in for a role Debian cannot run unprivileged here: one process that
        answers HTTP with its role and the reason it is a stand-in
  probe wait until a URL answers 200 (or a TCP port answers a greeting)

Every server binds the node's own loopback address and answers GET /health.
"""

import argparse
import http.server
import json
import os
import socket
import sys
import threading
import time
import urllib.error
import urllib.request

# Small thread stacks: hardware types cap each process's address space (ulimit -v),
# and the default 8 MiB per request thread would exhaust a small node's cap quickly.
threading.stack_size(512 * 1024)

NODE = os.environ.get("CORRAL_NODE", "?")
HOST = os.environ.get("CORRAL_HOST", "127.0.0.1")
CLUSTER = os.environ.get("CORRAL_CLUSTER_NAME", "?")


class Handler(http.server.BaseHTTPRequestHandler):
    """Routes to the server's `routes` table; answers JSON or text."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        sys.stderr.write("%s %s\n" % (self.address_string(), format % args))

    def reply(self, status, body, content_type="application/json", headers=()):
        if not isinstance(body, (bytes, str)):
            body = json.dumps(body) + "\n"
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def dispatch(self):
        try:
            self.server.app.handle(self)
        except Exception as error:  # a demo server reports, it does not die
            self.reply(500, {"error": str(error)})

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = dispatch


def serve(app, port):
    server = http.server.ThreadingHTTPServer((HOST, port), Handler)
    server.daemon_threads = True
    server.app = app
    print("%s listening on http://%s:%d/" % (type(app).__name__, HOST, port), flush=True)
    server.serve_forever()


def http_call(method, url, data=None, timeout=2.0):
    request = urllib.request.Request(url, data=data, method=method)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, response.read()


class Kv:
    """Leader: keeps the data and an append-only log. Follower: polls the leader's log."""

    def __init__(self, port, leader):
        self.lock = threading.Lock()
        self.data = {}
        self.log = []  # (seq, key, value or None)
        self.leader = "%s:%d" % (leader, port) if leader and leader != HOST else None
        self.synced = self.leader is None
        if self.leader:
            threading.Thread(target=self.follow, daemon=True).start()

    def follow(self):
        while True:
            try:
                since = self.log[-1][0] if self.log else 0
                _, raw = http_call("GET", "http://%s/log?since=%d" % (self.leader, since))
                with self.lock:
                    for seq, key, value in json.loads(raw)["ops"]:
                        self.apply(seq, key, value)
                self.synced = True
            except (OSError, ValueError) as error:
                sys.stderr.write("following %s: %s\n" % (self.leader, error))
            time.sleep(0.2)

    def apply(self, seq, key, value):
        self.log.append((seq, key, value))
        if value is None:
            self.data.pop(key, None)
        else:
            self.data[key] = value

    def write(self, key, value):
        with self.lock:
            seq = self.log[-1][0] + 1 if self.log else 1
            self.apply(seq, key, value)
            return seq

    def handle(self, req):
        path = req.path.split("?")[0]
        if path == "/health":
            ok = self.synced
            return req.reply(200 if ok else 503, {
                "service": "kv", "node": NODE, "cluster": CLUSTER, "ok": ok,
                "role": "follower" if self.leader else "leader", "leader": self.leader,
                "keys": len(self.data), "seq": self.log[-1][0] if self.log else 0})
        if path == "/log" and not self.leader:
            since = int(req.path.partition("since=")[2] or 0)
            with self.lock:
                ops = [op for op in self.log if op[0] > since]
            return req.reply(200, {"ops": ops})
        if path.startswith("/incr/") and len(path) > 6:
            return self.incr(req, path[6:])
        if not path.startswith("/kv/") or len(path) <= 4:
            return req.reply(404, {"error": "use /kv/KEY, /incr/KEY or /health"})
        key = path[4:]
        if req.command in ("GET", "HEAD"):
            value = self.data.get(key)
            return req.reply(404, {"error": "no key %s" % key}) if value is None \
                else req.reply(200, value, "text/plain")
        if self.leader:
            return self.forward(req)
        if req.command == "PUT":
            seq = self.write(key, req.body().decode())
            return req.reply(200, {"key": key, "seq": seq})
        if req.command == "DELETE":
            seq = self.write(key, None)
            return req.reply(200, {"key": key, "seq": seq})
        return req.reply(405, {"error": "GET, PUT or DELETE"})

    def incr(self, req, key):
        if self.leader:
            return self.forward(req)
        with self.lock:
            value = int(self.data.get(key) or 0) + 1
            seq = self.log[-1][0] + 1 if self.log else 1
            self.apply(seq, key, str(value))
        return req.reply(200, {"key": key, "value": value, "seq": seq})

    def forward(self, req):
        try:
            status, raw = http_call(req.command, "http://%s%s" % (self.leader, req.path),
                                    req.body() if req.command in ("PUT", "POST") else None)
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        return req.reply(status, raw)


class App:
    """The web tier: a page naming its node, with a visit counter kept in kv."""

    def __init__(self, kv_hosts, kv_port, title):
        self.kv = ["%s:%d" % (host, kv_port) for host in kv_hosts if host]
        self.title = title
        # What `install --release` wrote into the service's directory (the working
        # directory): which release of the app this node serves.
        try:
            with open("release") as text:
                self.release = text.read().strip() or "1"
        except OSError:
            self.release = "1"

    def handle(self, req):
        path = req.path.split("?")[0]
        if path == "/health":
            problem = self.kv_problem()
            return req.reply(503 if problem else 200, {
                "service": self.title, "node": NODE, "ok": not problem, "kv": self.kv,
                "release": self.release, "problem": problem})
        if path != "/":
            return req.reply(404, {"error": "no page %s" % path})
        visits = "no counter (this tier has no kv)"
        if self.kv:
            try:
                _, raw = http_call("POST", "http://%s/incr/visits" % self.kv[0], b"")
                visits = json.loads(raw)["value"]
            except (OSError, ValueError) as error:
                return req.reply(503, "kv unreachable: %s\n" % error, "text/plain")
        page = ("<!doctype html><title>%s</title><h1>%s on cluster %s</h1>"
                "<p>release %s, served by node %s (%s); visits: %s</p>\n"
                % (self.title, self.title, CLUSTER, self.release, NODE, HOST, visits))
        return req.reply(200, page, "text/html",
                         [("X-Corral-Node", NODE), ("X-Corral-Release", self.release)])

    def kv_problem(self):
        for address in self.kv[:1]:
            try:
                http_call("GET", "http://%s/health" % address)
            except OSError as error:
                return "kv %s: %s" % (address, error)
        return None


class Lb:
    """Round robin over the backends file; a backend that refuses is skipped."""

    def __init__(self, backends_file):
        self.file = backends_file
        self.mtime = None
        self.backends = []
        self.next = 0
        self.lock = threading.Lock()

    def current(self):
        with self.lock:
            mtime = os.stat(self.file).st_mtime_ns
            if mtime != self.mtime:
                with open(self.file) as lines:
                    self.backends = [line.strip() for line in lines if line.strip()]
                self.mtime = mtime
            start = self.next
            self.next += 1
            return [self.backends[(start + i) % len(self.backends)]
                    for i in range(len(self.backends))]

    def handle(self, req):
        backends = self.current()
        if req.path.split("?")[0] == "/lb/health":
            return req.reply(200 if backends else 503, {
                "service": "lb", "node": NODE, "ok": bool(backends), "backends": backends})
        body = req.body() if req.command in ("PUT", "POST") else None
        last = "no backends configured"
        for backend in backends:
            try:
                status, raw = http_call(req.command, "http://%s%s" % (backend, req.path), body)
            except urllib.error.HTTPError as error:
                status, raw = error.code, error.read()
            except OSError as error:
                last = "%s: %s" % (backend, error)
                continue
            return req.reply(status, raw, "text/html", [("X-Corral-Backend", backend)])
        return req.reply(502, {"error": "no backend answered", "last": last})


class Role:
    """A stand-in role: it runs and answers, and says what it stands in for."""

    def __init__(self, name, note):
        self.name = name
        self.note = note

    def handle(self, req):
        return req.reply(200, {"role": self.name, "node": NODE, "cluster": CLUSTER,
                               "ok": True, "standin": bool(self.note), "note": self.note})


def probe(args):
    """Polls until the target answers; exit 1 with the last error after the timeout."""
    deadline = time.monotonic() + args.timeout
    last = None
    while time.monotonic() < deadline:
        try:
            if args.url:
                status, _ = http_call("GET", args.url, timeout=1.0)
                if status == 200:
                    return 0
                last = "status %d" % status
            else:
                with socket.create_connection((args.host, args.port), timeout=1.0) as conn:
                    conn.sendall(args.send.encode().decode("unicode_escape").encode())
                    answer = conn.recv(256).decode(errors="replace")
                    if answer.startswith(args.expect):
                        return 0
                    last = "answered %r" % answer
        except urllib.error.HTTPError as error:
            last = "status %d" % error.code
        except OSError as error:
            last = str(error)
        time.sleep(0.1)
    print("no answer from %s after %ss: %s"
          % (args.url or "%s:%d" % (args.host, args.port), args.timeout, last), file=sys.stderr)
    return 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    kv = commands.add_parser("kv")
    kv.add_argument("--port", type=int, required=True)
    kv.add_argument("--leader", default="")
    app = commands.add_parser("app")
    app.add_argument("--port", type=int, required=True)
    app.add_argument("--kv", default="")
    app.add_argument("--kv-port", type=int, default=7070)
    app.add_argument("--title", default="app")
    lb = commands.add_parser("lb")
    lb.add_argument("--port", type=int, required=True)
    lb.add_argument("--backends-file", required=True)
    role = commands.add_parser("role")
    role.add_argument("--port", type=int, required=True)
    role.add_argument("--name", required=True)
    role.add_argument("--note", default="")
    check = commands.add_parser("probe")
    check.add_argument("--url")
    check.add_argument("--host", default=HOST)
    check.add_argument("--port", type=int)
    check.add_argument("--send", default="")
    check.add_argument("--expect", default="")
    check.add_argument("--timeout", type=float, default=20)
    args = parser.parse_args()
    if args.command == "probe":
        return probe(args)
    if args.command == "kv":
        serve(Kv(args.port, args.leader.split(",")[0]), args.port)
    elif args.command == "app":
        serve(App(args.kv.split(","), args.kv_port, args.title), args.port)
    elif args.command == "lb":
        serve(Lb(args.backends_file), args.port)
    else:
        serve(Role(args.name, args.note), args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
