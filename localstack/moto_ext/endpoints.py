"""Endpoints that are no instance's own, as Aurora has them: a cluster's writer and reader endpoints
("Amazon Aurora endpoint connections", https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/Aurora.Overview.Endpoints.html),
each on an address of its own from the engines' network (``engines.py``), forwarding each
connection to the real server of the role it names when the connection comes in.
"""

from __future__ import annotations

import socket
import threading
from typing import Any, Callable

from .engines import ADDRESSES, LOCK, EngineError, _address


class Endpoint:
    """An endpoint that is no instance's own, on an address of its own: each connection is
    forwarded to the server `target` names when it comes in (an Aurora cluster endpoint to the
    writer, its reader endpoint to a reader). A connection made while there is none is closed."""

    def __init__(self, name: str, port: int, target: Callable[[], Any]):
        self.name = name
        self.target = target
        self.port = port
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
        try:
            self.listener.close()
        except OSError:
            pass
        with LOCK:
            ADDRESSES.discard(self.address)
