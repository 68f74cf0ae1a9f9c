"""The ways a test server's answer can fail to end, shared by the protocol stubs
(tests/openai_stub.py, tests/search_stub.py, tests/api/webhook_receiver.py):

- "trickle": the real answer, its Content-Length announced, one byte every
  `interval` seconds;
- "endless": `unit` (an SSE content event, say) again and again, chunked, never
  ending;
- "keepalive": SSE comments (`: keep-alive`) every `interval` seconds, nothing else;
- "huge": a body of `HUGE_BYTES` (1 GiB) announced and sent as fast as the client
  reads it.

Each ends when the client hangs up (or the stub stops); `send` returns True when
the whole answer went out, False when the client gave up on it.
"""

from __future__ import annotations

import threading
import time

MODES = ("trickle", "endless", "keepalive", "huge")
HUGE_BYTES = 1 << 30
BLOCK = b"x" * 65536


def send(
    handler,
    mode: str,
    *,
    status: int = 200,
    content_type: str = "application/json",
    body: bytes = b"{}",
    unit: bytes = b"",
    interval: float = 1.0,
    stopped: threading.Event | None = None,
) -> bool:
    stopped = stopped or threading.Event()
    handler.close_connection = True
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    try:
        if mode == "trickle":
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            for byte in body:
                if stopped.wait(interval):
                    return False
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
            return True
        if mode == "huge":
            handler.send_header("Content-Length", str(HUGE_BYTES))
            handler.end_headers()
            for _ in range(HUGE_BYTES // len(BLOCK)):
                if stopped.is_set():
                    return False
                handler.wfile.write(BLOCK)
            return True
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        piece = unit if mode == "endless" else b": keep-alive\n\n"
        pause = 0.01 if mode == "endless" else interval
        while not stopped.is_set():
            handler.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            handler.wfile.flush()
            time.sleep(pause)
        return False
    except (BrokenPipeError, ConnectionResetError):
        return False
