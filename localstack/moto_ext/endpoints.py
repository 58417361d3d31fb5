"""Endpoints that are no instance's own, as Aurora has them: a cluster's writer and reader endpoints
("Amazon Aurora endpoint connections", https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/Aurora.Overview.Endpoints.html),
each on an address of its own from the engines' network (``engines.py``), forwarding each
connection to the real server of the role it names when the connection comes in.
"""

from __future__ import annotations

import socket
import threading
import weakref
from typing import Any, Callable

from . import scope
from .engines import ADDRESSES, LOCK, EngineError, _address


def _read(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data


# The MySQL protocol's CLIENT_SSL capability (a client's SSLRequest packet sets it), and
# PostgreSQL's SSLRequest code (the first message of a client that wants TLS).
CLIENT_SSL = 0x0800
PG_SSL_REQUEST = 80877103


def tls_asked(client: socket.socket, upstream: socket.socket, family: str) -> bool:
    """Whether the client's first message asks for TLS, which a proxy with RequireTLS insists on
    ("RequireTLS: Whether Transport Layer Security (TLS) encryption is required for connections to
    the proxy", API_CreateDBProxy.html). What was read is passed on when it does; otherwise the
    client is told so in its protocol's error message. TLS itself then runs end to end with the
    real server, whose certificate names every address of the network."""
    client.settimeout(10)
    try:
        if family == "postgres":
            first = _read(client, 8)
            if int.from_bytes(first[:4], "big") == 8 and int.from_bytes(first[4:], "big") == PG_SSL_REQUEST:
                upstream.sendall(first)
                return True
            text = b"SFATAL\0C28000\0Mthis proxy requires TLS (RequireTLS); connect with sslmode=require\0\0"
            client.sendall(b"E" + (len(text) + 4).to_bytes(4, "big") + text)
            return False
        greeting_header = _read(upstream, 4)
        greeting = _read(upstream, int.from_bytes(greeting_header[:3], "little"))
        client.sendall(greeting_header + greeting)
        header = _read(client, 4)
        payload = _read(client, int.from_bytes(header[:3], "little"))
        if int.from_bytes(payload[:4], "little") & CLIENT_SSL:
            upstream.sendall(header + payload)
            return True
        message = b"#08004this proxy requires TLS (RequireTLS); connect with --ssl"
        err = b"\xff" + (1043).to_bytes(2, "little") + message
        client.sendall(len(err).to_bytes(3, "little") + bytes([(header[3] + 1) % 256]) + err)
        return False
    except OSError:
        return False
    finally:
        client.settimeout(None)


class Endpoint:
    """An endpoint that is no instance's own, on an address of its own: each connection is
    forwarded to the server `target` names when it comes in (an Aurora cluster endpoint to the
    writer, its reader endpoint to a reader). A connection made while there is none is closed."""

    # Every endpoint alive, for the IAM token check (a token names the endpoint it was signed for).
    LIVE: "weakref.WeakSet[Endpoint]" = weakref.WeakSet()

    def __init__(self, name: str, port: int, target: Callable[[], Any],
                 require_tls: Callable[[], bool] | None = None):
        self.name = name
        # Run in the forwarder's threads, in the account and region it was made in (scope.py).
        self.target = scope.carry(target)
        self.port = port
        # A proxy's RequireTLS: a connection that does not ask for TLS is refused (``tls_asked``).
        self.require_tls = require_tls or (lambda: False)
        for _ in range(20):
            with LOCK:
                self.address = _address()
                ADDRESSES.add(self.address)
            try:
                self.listener = socket.create_server((self.address, port))
                break
            except OSError:
                # Still held by a process outside the registry (a server stopping): not this one.
                continue
        else:
            raise EngineError(f"no free address for the endpoint {name}")
        self.closed = False
        Endpoint.LIVE.add(self)
        threading.Thread(target=self._serve, name=f"endpoint-{name}", daemon=True).start()

    def _serve(self) -> None:
        listener = self.listener
        while not self.closed:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._forward, args=(client,), daemon=True).start()

    def _forward(self, client: socket.socket) -> None:
        server = self.target()
        if server is None or not server.ready:
            client.close()
            return
        try:
            upstream = socket.create_connection((server.address, server.port), timeout=5)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        if self.require_tls() and not tls_asked(client, upstream, server.family):
            client.close()
            upstream.close()
            return

        def pump(src: socket.socket, dst: socket.socket) -> None:
            try:
                while True:
                    data = src.recv(65536)
                    if not data:
                        break
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                for s in (src, dst):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
        pump(client, upstream)
        client.close()
        upstream.close()

    def move(self, port: int) -> None:
        """The same address on another port."""
        if port == self.port:
            return
        self.listener.close()
        self.port = port
        self.listener = socket.create_server((self.address, port))
        threading.Thread(target=self._serve, name=f"endpoint-{self.name}", daemon=True).start()

    def close(self) -> None:
        self.closed = True
        Endpoint.LIVE.discard(self)
        try:
            self.listener.close()
        except OSError:
            pass
        with LOCK:
            ADDRESSES.discard(self.address)
