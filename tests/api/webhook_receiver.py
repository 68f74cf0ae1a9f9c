"""A real HTTP server on 127.0.0.1 that records webhook POSTs and answers them
from a script (a status per request, or a delay beyond the sender's timeout), or
in a way that never ends in time: `fault` one of tests/slow_bodies.MODES (a
trickle of one byte every `interval` seconds, an endless body, keep-alive comments
only, a 1 GiB body), with the scripted status."""

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests import slow_bodies


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


class Receiver:
    def __init__(
        self, *statuses: int, delay: float = 0.0, fault: str = "", interval=1.0
    ):
        self.statuses = list(statuses)
        self.delay = delay
        self.fault = fault
        self.interval = interval
        self.received: list[Received] = []
        self.answered = 0  # answers sent whole
        self.stopped = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append(Received(dict(self.headers), body))
                time.sleep(receiver.delay)
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                if receiver.fault:
                    whole = slow_bodies.send(
                        self,
                        receiver.fault,
                        status=status,
                        body=b'{"received": true}',
                        unit=b"still here ",
                        interval=receiver.interval,
                        stopped=receiver.stopped,
                    )
                    receiver.answered += whole
                    return
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
                receiver.answered += 1

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.stopped.set()
        self.server.shutdown()
        self.server.server_close()
