"""Small HTTP helpers for tests: a webhook receiver on 127.0.0.1 and a GET that returns (status, body)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class WebhookReceiver:
    """Keeps every JSON body POSTed to it; answers `status` (204: accepted, 500: a receiver in trouble,
    301 with `location`: one that moved) and keeps the path of every GET (a client following a redirect)."""

    def __init__(self, status: int = 204, location: str | None = None) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.gets: list[str] = []
        bodies, gets = self.bodies, self.gets

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                bodies.append(json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0)))))
                self.send_response(status)
                if location is not None:
                    self.send_header("Location", location)
                self.end_headers()

            def do_GET(self) -> None:
                gets.append(self.path)
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, name="webhook", daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def http_get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
