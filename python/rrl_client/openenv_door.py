"""The OpenEnv server's front door: the rules of `rrl serve`'s (src/serve/front-door.ts), as ASGI middleware.

- **Host.** Without a token of its own only a loopback ``Host`` with the server's port is served
  (``127.0.0.1:PORT``, ``localhost:PORT``, ``[::1]:PORT``, and its own loopback address): a
  DNS-rebinding page names its own host and is refused (421).
- **Origin.** An ``Origin``, when a browser sends one, must be the server's own (``http://`` or
  ``https://`` + its Host), else 403: a page of another origin can drive neither a route nor the
  ``/ws`` WebSocket (browsers send ``Origin`` on every WebSocket handshake).
- **Token.** With a token of its own every request, the WebSocket handshake included, must carry
  ``Authorization: Bearer TOKEN``, else 401 (then the Host is not checked: the token keeps others out).

A refused HTTP request gets ``{"error": "one line"}``; a refused WebSocket handshake is answered with
the same status and body where the ASGI server supports it (uvicorn does), else closed before it opens.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """True for a loopback host name or address (``localhost``, ``::1``, ``127.x.y.z``), as `rrl serve` reads them."""
    return host == "localhost" or host == "::1" or re.fullmatch(r"127\.\d+\.\d+\.\d+", host) is not None


def loopback_hosts(port: int, listen_host: str | None = None) -> list[str]:
    """The Host values a server without a token answers for: the loopback names with its port (and its own loopback address)."""
    hosts = [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
    if listen_host and is_loopback(listen_host):
        own = (f"[{listen_host}]" if ":" in listen_host else listen_host).lower() + f":{port}"
        if own not in hosts:
            hosts.append(own)
    return hosts


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _one_line(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def refusal(scope: Scope, token: str | None, listen_host: str | None = None) -> tuple[int, str] | None:
    """Why a request (HTTP or WebSocket handshake) is not served, as a status and a one-line reason, or None.
    ``token``: the server's own token (None: loopback only); ``listen_host``: the address it listens on."""
    host = (_header(scope, b"host") or "").lower()
    if token is None:
        port = (scope.get("server") or (None, 0))[1] or 0
        allowed = loopback_hosts(int(port), listen_host)
        if host not in allowed:
            return 421, f'Host "{_one_line(host)}" is not this server: without a token it answers only for {", ".join(allowed)}'
    else:
        given = re.fullmatch(r"Bearer (.+)", _header(scope, b"authorization") or "")
        if given is None or not hmac.compare_digest(_digest(given.group(1)), _digest(token)):
            return 401, "missing or wrong bearer token (Authorization: Bearer TOKEN)"
    origin = _header(scope, b"origin")
    if origin is not None:
        o = origin.lower()
        if not host or o not in (f"http://{host}", f"https://{host}"):
            return 403, f"a request from another origin ({_one_line(origin)}) is refused: only this server's own pages may call it"
    return None


class FrontDoor:
    """ASGI middleware: every HTTP request and WebSocket handshake passes :func:`refusal` before ``app`` sees it."""

    def __init__(self, app: App, *, token: str | None = None, listen_host: str | None = None) -> None:
        self.app = app
        self.token = token
        self.listen_host = listen_host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refused = refusal(scope, self.token, self.listen_host)
        if refused is None:
            await self.app(scope, receive, send)
            return
        status, message = refused
        body = json.dumps({"error": message}).encode("utf-8")
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await receive()  # websocket.connect
        if "websocket.http.response" in (scope.get("extensions") or {}):
            await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008})


__all__ = ["FrontDoor", "is_loopback", "loopback_hosts", "refusal"]
