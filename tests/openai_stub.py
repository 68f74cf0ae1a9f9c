"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol.

Tests and benches drive it through the real `openai` client. It answers
POST /v1/chat/completions (streamed when the request says `"stream": true`) and
POST /v1/embeddings (a deterministic vector per text, see `embedding_vector`), and
can be told to misbehave: scripted replies per prompt, malformed or out-of-schema
content, 429 with Retry-After, 500s, replies slower than the client's timeout, a cap on
requests in flight (429 beyond it), a required API key, unknown models (404), and
answers that never end (`Reply(fault=…)`, see tests/slow_bodies.py: a trickle of one
byte every `interval` seconds, an endless stream, SSE keep-alive comments only, a
1 GiB body).

With `idempotency=True`, a request carrying an `Idempotency-Key` header is
answered as providers that honour one do (without, the header is ignored, as most
OpenAI-compatible servers do): a key whose reply was made is answered that reply
again without making (or charging for) it again, even when the client that first
sent it hung up before the reply came (a killed worker); a request whose key is
still being answered waits for that answer.

    with OpenAIStub(latency=0.01, max_in_flight=4) as stub:
        stub.script("item-17", Reply(status=429, headers={"Retry-After": "0"}),
                    Reply(content='{"score": 2, "reason": "ok"}'))
        client = OpenAI(base_url=stub.base_url, api_key="x")
        ...
        assert stub.duplicate_answers() == {}

`ReadingModel(facts)` is a responder that answers from the prompt it is sent
(the options shown, the statement asked), as a model knowing `facts` would: the
tests of runs use it, so a prompt that lacks an item's options, or a reply served
from another item's request, changes the outcome.

Every request is recorded; `duplicate_answers()` lists request bodies (model +
messages) that were answered with 200 more than once — a repeated paid call —
and `paid_twice()` those whose reply was made more than once, whether or not the
client was still there to read it (replays of an idempotency key are not made).
GET /stub/stats returns the counters as JSON (for a stub in another process, see
`start_in_subprocess`). Run `python tests/openai_stub.py --help` for the CLI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import re
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests import slow_bodies


@dataclass
class Reply:
    """What the stub sends for one request.

    `status` other than 200 sends an OpenAI-style error body with `error_message`;
    `delay` (seconds) overrides the stub's latency for this reply; `body`, when set,
    is sent as the 200 reply's JSON body as it is (a malformed completion), `raw` as
    its text (a body that is not JSON, two objects); `reset` drops the connection
    with a TCP reset instead of replying (recorded as status 0);
    `fault` ("trickle", "endless", "keepalive", "huge") sends the reply in a way that
    never ends in time, `interval` seconds apart (tests/slow_bodies.py).
    """

    content: str = ""
    reasoning: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error_message: str = ""
    delay: float | None = None
    finish_reason: str = "stop"
    body: object = None
    reset: bool = False
    fault: str = ""
    interval: float = 1.0
    raw: str | None = None
    # The error body's code and type (a provider's refusal names its filter).
    error_code: str = "stub_error"


Responder = Callable[[dict], "Reply | str"]
EMBEDDING_DIMS = 64


def embedding_vector(text: str, dims: int = EMBEDDING_DIMS) -> list[float]:
    """A deterministic, unnormalised vector for `text`: its character bigrams
    hashed into `dims` signed buckets (the hashing trick), so the same text always
    gets the same vector and texts sharing most bigrams point the same way."""
    grams = [text[i : i + 2] for i in range(len(text) - 1)] or [text]
    vector = [0.0] * dims
    for gram in grams:
        digest = hashlib.sha256(gram.encode()).digest()
        vector[digest[0] % dims] += 1.0 if digest[1] & 1 else -1.0
    return vector


def request_key(body: dict) -> str:
    """Identity of a request for duplicate detection: model and messages (or the
    text to embed)."""
    identity = {"model": body.get("model"), "messages": body.get("messages")}
    if "input" in body:
        identity["input"] = body["input"]
    canonical = json.dumps(
        identity,
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def last_user_text(body: dict) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return " ".join(part.get("text", "") for part in content)
            return content or ""
    return ""


def first_user_text(body: dict) -> str:
    for message in body.get("messages") or []:
        if message.get("role") == "user":
            return message.get("content") or ""
    return ""


def scripted_text(body: dict) -> str:
    """What a script's marker is looked for in: the first user message, or the
    text to embed."""
    if isinstance(body.get("input"), str):
        return body["input"]
    return first_user_text(body)


def echo_responder(body: dict) -> Reply:
    return Reply(content="OK")


# An option as a prompt shows it, on its own line: "A. text", "B) text",
# "（C）text", "D、text".
_OPTION_LINE = re.compile(
    r"^[ \t]*(?:[(（]([A-G])[)）]|([A-G])[.．)）、:：])[ \t]*(\S.*)$", re.MULTILINE
)
_TRUE_FALSE_ASKED = re.compile(r"true or false|正确.{0,3}或.{0,3}错误", re.IGNORECASE)
_KEY_POINT = re.compile(r"^\d+\.\s*(.+)$", re.MULTILINE)


class ReadingModel:
    """A responder that answers from the prompt it received, as a model that
    knows `facts` ({subject: what it believes of it}) would.

    - A prompt that shows options ("A. …" lines): the letters of the options whose
      text carries what it believes of a subject the prompt names — "Answer: B";
      several: "Answer: A, C"; none: "I cannot answer this question." So an MC
      item asked without its options is refused, and a shuffled order is
      answered with the option's new letter.
    - A prompt that asks true or false: "true" only when the statement carries
      what it believes of a subject it names, "false" when it names the subject
      with anything else; a statement naming no known subject is refused.
    - Any other question naming a subject: "The answer is <belief>."; otherwise
      refused.
    - The key-point judge's prompt ("Key points:" and "Candidate answer:"):
      "Score: 1" and JSON when the candidate answer contains every key point,
      else "Score: 0".

    `subjects_seen` counts, per subject, the prompts that named it.
    """

    def __init__(self, facts: dict[str, str | tuple[str, ...]]):
        # A subject may carry several beliefs (a confused model): each is looked
        # for in the options.
        self.facts = {
            subject: (belief,) if isinstance(belief, str) else tuple(belief)
            for subject, belief in facts.items()
        }
        self.subjects_seen: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> Reply:
        prompt = "\n".join(
            str(message.get("content") or "")
            for message in body.get("messages") or []
            if message.get("role") == "user"
        )
        if "Key points:" in prompt and "Candidate answer:" in prompt:
            return self._judge(prompt)
        known = [subject for subject in self.facts if subject in prompt]
        with self._lock:
            self.subjects_seen.update(known)
        beliefs = [belief for subject in known for belief in self.facts[subject]]
        options = [(a or b, text) for a, b, text in _OPTION_LINE.findall(prompt)]
        if options:
            letters = [
                letter
                for letter, text in options
                if any(belief in text for belief in beliefs)
            ]
            if not letters:
                return Reply(content="I cannot answer this question.")
            return Reply(content="Answer: " + ", ".join(letters))
        if not beliefs:
            return Reply(content="I cannot answer this question.")
        if _TRUE_FALSE_ASKED.search(prompt):
            statement = prompt
            for subject in known:
                statement = statement.replace(subject, "")
            true = any(belief in statement for belief in beliefs)
            return Reply(content="true" if true else "false")
        return Reply(content=f"The answer is {beliefs[0]}.")

    @staticmethod
    def _judge(prompt: str) -> Reply:
        head, _, answer = prompt.partition("Candidate answer:")
        points_text = head.partition("Key points:")[2]
        points = [point.strip() for point in _KEY_POINT.findall(points_text)]
        met = bool(points) and all(
            point.casefold() in answer.casefold() for point in points
        )
        score = int(met)
        basis = "every key point met" if met else "a key point is missing"
        return Reply(
            content=f"Score: {score}\n" + json.dumps({"score": score, "basis": basis})
        )


# -- LPFQA's forum construction (construction.forum) ----------------------------
#
# A forum post as the tests write it: "Q: …" the original poster's question,
# "R: …" each reply; a screenshot is a PNG whose tEXt chunk carries the text it
# shows (what an OCR-capable model would read off it), sent as an image part.


def screenshot_png(text: str, width: int = 240, height: int = 60) -> str:
    """A blank PNG as a data URL, `text` in its tEXt chunk ("Comment")."""
    import base64
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return (
            struct.pack(">I", len(data))
            + body
            + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\xf4" * (3 * width) for _ in range(height))
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"tEXt", b"Comment\x00" + text.encode("latin-1", "replace"))
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
    return "data:image/png;base64," + base64.b64encode(png).decode()


def screenshot_text(url: str) -> str:
    """The text a test screenshot shows ("" for anything else)."""
    import base64

    if not url.startswith("data:image/png;base64,"):
        return ""
    png = base64.b64decode(url.partition(",")[2])
    at = 8
    while at + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[at : at + 8])
        if kind == b"tEXt":
            _, _, text = png[at + 8 : at + 8 + length].partition(b"\x00")
            return text.decode("latin-1")
        at += 12 + length
    return ""


def _section(prompt: str, heading: str, following: str) -> str:
    start = prompt.find(heading)
    if start < 0:
        return ""
    rest = prompt[start + len(heading) :]
    end = rest.find(following) if following else -1
    return (rest if end < 0 else rest[:end]).strip()


class ForumModel:
    """A responder for the forum pipeline's prompts that answers from what it is
    sent, as a model reading the post would:

    - extraction ("Post body:"): the "Q:" line of the post's text or of its
      screenshots (image parts) is the question — none: not valid; the first
      "R:" reply the answer, all replies the explanation — none: no answer;
    - quality ("is_qualified"): a question of fewer than eight words, or one
      that asks about "this year" (time-bound), is not qualified;
    - multiple choice ('"options"'): the answer and distractors made from the
      question, 5 to 7 of them, the key at a place the question decides; a
      question naming "torque" first gets a reply repeating an option (the
      stage must refuse it and ask again);
    - short answer ('"key_points"'): the answer, its clauses as key points.

    `images_seen` counts the screenshots it read."""

    def __init__(self):
        self.images_seen = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> Reply:
        users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
        content = users[0].get("content") if users else ""
        images = []
        if isinstance(content, list):
            images = [
                part["image_url"]["url"]
                for part in content
                if part.get("type") == "image_url"
            ]
            content = " ".join(part.get("text", "") for part in content)
        prompt = content or ""
        asked_again = len(users) > 1
        if "Post body:" in prompt:
            return self._extract(prompt, images)
        if "is_qualified" in prompt:
            return self._qualify(prompt)
        if '"options"' in prompt:
            return self._multiple_choice(prompt, asked_again)
        if '"key_points"' in prompt:
            return self._short_answer(prompt)
        return Reply(content="I do not know this task.")

    def _extract(self, prompt: str, images: list[str]) -> Reply:
        shown = [screenshot_text(url) for url in images]
        with self._lock:
            self.images_seen += sum(1 for text in shown if text)
        text = (
            _section(prompt, "Post body:", "Reply with only") + "\n" + "\n".join(shown)
        )
        questions = re.findall(r"^\s*Q:\s*(.+)$", text, re.MULTILINE)
        replies = re.findall(r"^\s*R:\s*(.+)$", text, re.MULTILINE)
        if not questions:
            return Reply(content=json.dumps({"is_valid": False}))
        reply = {
            "is_valid": True,
            "question": questions[0].strip(),
            "answer": replies[0].strip() if replies else "",
            "explanation": " ".join(r.strip() for r in replies),
            "has_answer": 1 if replies else 0,
        }
        return Reply(content=json.dumps(reply, ensure_ascii=False))

    @staticmethod
    def _pair(prompt: str) -> tuple[str, str, str]:
        return (
            _section(prompt, "Question:", "Answer:"),
            _section(prompt, "Answer:", "Explanation:"),
            _section(prompt, "Explanation:", "Reply with only"),
        )

    def _qualify(self, prompt: str) -> Reply:
        question, _, _ = self._pair(prompt)
        if len(question.split()) < 8:
            verdict = {"is_qualified": False, "reason": "Too short to be complete."}
        elif "this year" in question.lower():
            verdict = {"is_qualified": False, "reason": "Time-bound: not lasting."}
        else:
            verdict = {"is_qualified": True, "reason": ""}
        return Reply(content=json.dumps(verdict))

    def _multiple_choice(self, prompt: str, asked_again: bool) -> Reply:
        question, answer, explanation = self._pair(prompt)
        digest = hashlib.sha256(question.encode()).digest()
        count = 5 + digest[0] % 3
        distractors = [
            f"The opposite of what the thread concludes: not {answer[:60]}",
            "Leave it as it is: the behaviour is within tolerance",
            "Replace the whole assembly before measuring anything",
            "A firmware update, whatever the hardware",
            "Halve the load and repeat the test",
            "Ask the vendor for a custom part",
        ][: count - 1]
        key = digest[1] % count
        options = distractors[:key] + [answer] + distractors[key:]
        if "torque" in question.lower() and not asked_again:
            options[-1] = options[0]  # a careless reply: one option twice
        reply = {
            "question": question,
            "options": options,
            "correct": "ABCDEFG"[key],
            "explanation": explanation,
        }
        return Reply(content=json.dumps(reply, ensure_ascii=False))

    def _short_answer(self, prompt: str) -> Reply:
        question, answer, explanation = self._pair(prompt)
        points = [p.strip() for p in re.split(r"[;,]", answer) if p.strip()][:3]
        reply = {
            "question": question,
            "answer": f"{answer} {explanation}".strip(),
            "key_points": points or [answer],
        }
        return Reply(content=json.dumps(reply, ensure_ascii=False))


@dataclass
class RecordedRequest:
    at: float
    key: str
    model: str
    stream: bool
    status: int
    body: dict


class OpenAIStub:
    def __init__(
        self,
        *,
        latency: float = 0.0,
        max_in_flight: int | None = None,
        responder: Responder = echo_responder,
        api_key: str | None = None,
        models: set[str] | None = None,
        retry_after_on_cap: str = "0",
        keep_bodies: bool = True,
        idempotency: bool = False,
    ):
        self.latency = latency
        self.max_in_flight = max_in_flight
        self.responder = responder
        self.api_key = api_key
        self.models = models
        self.retry_after_on_cap = retry_after_on_cap
        self.keep_bodies = keep_bodies
        self.idempotency = idempotency
        self.requests: list[RecordedRequest] = []
        self.answered: Counter[str] = Counter()
        self.made: Counter[str] = Counter()
        self.replayed = 0
        # key → (answered, the reply made or None while it is being made)
        self._idempotent: dict[str, tuple[threading.Event, list]] = {}
        self._stopped = threading.Event()
        self.in_flight = 0
        self.peak_in_flight = 0
        self.capped = 0
        self._scripts: list[tuple[str, list[Reply]]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- configuration -------------------------------------------------------------

    def script(self, marker: str, *replies: Reply | str) -> None:
        """Requests whose first user message (or text to embed) contains `marker`
        get `replies` in order; the last one repeats. An embeddings request
        answered 200 gets its text's vector unless the reply has a `body`."""
        queue = [Reply(content=r) if isinstance(r, str) else r for r in replies]
        with self._lock:
            self._scripts.append((marker, queue))

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.answered.clear()
            self.made.clear()
            self.replayed = 0
            self._idempotent.clear()
            self.peak_in_flight = 0
            self.capped = 0
            self._scripts.clear()

    # -- inspection ------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the stub first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def request_count(self) -> int:
        return len(self.requests)

    def answered_count(self) -> int:
        return sum(self.answered.values())

    def duplicate_answers(self) -> dict[str, int]:
        with self._lock:
            return {key: n for key, n in self.answered.items() if n > 1}

    def paid_twice(self) -> dict[str, int]:
        """Request identities whose reply was made more than once."""
        with self._lock:
            return {key: n for key, n in self.made.items() if n > 1}

    def stats(self) -> dict:
        with self._lock:
            return {
                "requests": len(self.requests),
                "answered": sum(self.answered.values()),
                "distinct_answered": len(self.answered),
                "duplicate_answers": sum(n - 1 for n in self.answered.values()),
                "made": sum(self.made.values()),
                "paid_twice": sum(n - 1 for n in self.made.values()),
                "replayed": self.replayed,
                "capped_429": self.capped,
                "peak_in_flight": self.peak_in_flight,
                "in_flight": self.in_flight,
            }

    # -- lifecycle -------------------------------------------------------------------

    def start(self, port: int = 0) -> OpenAIStub:
        self._stopped.clear()
        handler = type("BoundHandler", (_Handler,), {"stub": self})
        self._server = _Server(("127.0.0.1", port), handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}
        )
        self._thread.daemon = True
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()  # ends never-ending answers still being sent
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- request handling --------------------------------------------------------------

    def _choose(self, body: dict, embedding: bool = False) -> Reply:
        prompt = scripted_text(body)
        with self._lock:
            for marker, queue in self._scripts:
                if marker in prompt:
                    return queue.pop(0) if len(queue) > 1 else queue[0]
        if embedding:
            return Reply()
        try:
            reply = self.responder(body)
        except Exception as error:  # noqa: BLE001 - a broken responder is a 500
            return Reply(status=500, error_message=f"Stub responder failed: {error!r}")
        return Reply(content=reply) if isinstance(reply, str) else reply

    def _enter(self) -> bool:
        with self._lock:
            if self.max_in_flight is not None and self.in_flight >= self.max_in_flight:
                self.capped += 1
                return False
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            return True

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _claim_key(self, key: str | None):
        """ "new", "busy" (still being answered after a long wait), or the Reply
        made for `key` before. A key being answered is waited for."""
        while key:
            with self._lock:
                if key not in self._idempotent:
                    self._idempotent[key] = (threading.Event(), [])
                    return "new"
                answered, made = self._idempotent[key]
                if made:
                    self.replayed += 1
                    return made[0]
            if not answered.wait(60):
                return "busy"
        return "new"

    def _settle_key(self, key: str | None, made: Reply | None) -> None:
        if not key:
            return
        with self._lock:
            answered, kept = self._idempotent[key]
            if made is None:
                del self._idempotent[key]  # not made: the next try makes it
            elif not kept:
                kept.append(made)
            answered.set()

    def _record(self, body: dict, status: int, made: bool = False) -> None:
        key = request_key(body)
        with self._lock:
            self.requests.append(
                RecordedRequest(
                    at=time.monotonic(),
                    key=key,
                    model=str(body.get("model")),
                    stream=bool(body.get("stream")),
                    status=status,
                    body=body if self.keep_bodies else {},
                )
            )
            if status == 200:
                self.answered[key] += 1
            if made:
                self.made[key] += 1


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True


class _Handler(BaseHTTPRequestHandler):
    stub: OpenAIStub
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - silence per-request logs
        pass

    def do_GET(self):
        if self.path == "/stub/stats":
            self._send_json(200, self.stub.stats())
        elif self.path.rstrip("/") == "/v1/models":
            self._send_json(200, {"object": "list", "data": []})
        else:
            self._send_json(404, _error("Not found", "invalid_request_error"))

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        path = self.path.rstrip("/")
        embedding = path == "/v1/embeddings"
        if path != "/v1/chat/completions" and not embedding:
            self._send_json(404, _error(f"Unknown path {self.path}", "not_found"))
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._send_json(400, _error("Request body is not JSON", "invalid_json"))
            return
        stub = self.stub
        if stub.api_key is not None:
            if self.headers.get("Authorization") != f"Bearer {stub.api_key}":
                stub._record(body, 401)
                self._send_json(
                    401, _error("Incorrect API key provided.", "invalid_api_key")
                )
                return
        if stub.models is not None and body.get("model") not in stub.models:
            stub._record(body, 404)
            message = f"The model `{body.get('model')}` does not exist."
            self._send_json(404, _error(message, "model_not_found"))
            return
        if not stub._enter():
            stub._record(body, 429)
            self._send_json(
                429,
                _error("Too many requests in flight.", "rate_limit_exceeded"),
                headers={"Retry-After": stub.retry_after_on_cap},
            )
            return
        idempotency_key = stub.idempotency and self.headers.get("Idempotency-Key")
        claim = stub._claim_key(idempotency_key)
        if claim == "busy":
            stub._leave()
            stub._record(body, 409)
            message = "A request with this Idempotency-Key is still being answered."
            self._send_json(409, _error(message, "idempotency_conflict"))
            return
        replay = claim if isinstance(claim, Reply) else None
        left = False
        made = None  # the 200 reply made for this request (paid, read or not)
        try:
            reply = replay or stub._choose(body, embedding)
            delay = stub.latency if reply.delay is None else reply.delay
            if delay and replay is None:
                time.sleep(delay)
            # Like a real server, the request stops counting as in flight once its
            # reply is ready; the client learns of it only after that.
            stub._leave()
            left = True
            if reply.reset:
                stub._record(body, 0)
                self._reset_connection()
            elif reply.fault:
                whole = self._send_fault(body, reply, embedding)
                stub._record(body, reply.status if whole else 499)
            elif reply.status != 200:
                stub._record(body, reply.status)
                self._send_json(
                    reply.status,
                    _error(reply.error_message or "Stub error", reply.error_code),
                    headers=reply.headers,
                )
            else:
                made = reply
                if reply.raw is not None:
                    self._send_raw(reply.raw)
                elif embedding:
                    payload = _embedding(body) if reply.body is None else reply.body
                    self._send_json(200, payload, headers=reply.headers)
                elif body.get("stream"):
                    self._send_stream(body, reply)
                else:
                    payload = (
                        _completion(body, reply) if reply.body is None else reply.body
                    )
                    self._send_json(200, payload, headers=reply.headers)
                stub._record(body, 200, made=replay is None)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (timeout, a killed worker): the reply, if it was
            # made, was made — and paid for — all the same.
            stub._record(body, 499, made=made is not None and replay is None)
        finally:
            if not left:
                stub._leave()
            stub._settle_key(idempotency_key, made)

    def _send_raw(self, text: str) -> None:
        data = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_fault(self, body: dict, reply: Reply, embedding: bool) -> bool:
        streamed = bool(body.get("stream")) and not embedding
        if reply.status != 200:
            payload = _error(reply.error_message or "Stub error", "stub_error")
        elif embedding:
            payload = _embedding(body)
        else:
            payload = _completion(body, reply)
        event = {
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model"),
            "choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": None}],
        }
        return slow_bodies.send(
            self,
            reply.fault,
            status=reply.status,
            content_type="text/event-stream" if streamed else "application/json",
            body=(
                "".join(_stream_events(body, reply)).encode()
                if streamed
                else json.dumps(payload).encode()
            ),
            unit=f"data: {json.dumps(event)}\n\n".encode(),
            interval=reply.interval,
            stopped=self.stub._stopped,
        )

    def _reset_connection(self) -> None:
        # SO_LINGER 0: closing sends RST, as a crashed proxy or provider would. The
        # descriptor is closed at once (socket.close() would wait for the handler's
        # rfile and wfile to let go of it).
        self.connection.setsockopt(
            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
        )
        os.close(self.connection.detach())
        self.close_connection = True

    def _send_json(self, status: int, payload, headers=None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, body: dict, reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in _stream_events(body, reply):
            self._write_chunk(event)
        self.wfile.write(b"0\r\n\r\n")

    def _write_chunk(self, text: str) -> None:
        data = text.encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")


def _stream_events(body: dict, reply: Reply) -> list[str]:
    """The SSE events of a streamed reply, `data: [DONE]` last."""
    base = {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model"),
    }
    events = []

    def chunk(delta: dict, finish=None, usage=None) -> None:
        event = {
            **base,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if usage is not None:
            event = {**base, "choices": [], "usage": usage}
        events.append(f"data: {json.dumps(event, ensure_ascii=False)}\n\n")

    chunk({"role": "assistant", "content": ""})
    for piece in _pieces(reply.reasoning):
        chunk({"reasoning_content": piece})
    for piece in _pieces(reply.content):
        chunk({"content": piece})
    chunk({}, finish=reply.finish_reason)
    if (body.get("stream_options") or {}).get("include_usage"):
        chunk({}, usage=_usage(body, reply))
    events.append("data: [DONE]\n\n")
    return events


def _pieces(text: str, size: int = 16) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _usage(body: dict, reply: Reply) -> dict:
    prompt_chars = sum(
        len(str(message.get("content") or "")) for message in body.get("messages", [])
    )
    prompt_tokens = prompt_chars // 4 + 1
    completion_tokens = (len(reply.content) + len(reply.reasoning)) // 4 + 1
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _completion(body: dict, reply: Reply) -> dict:
    message = {"role": "assistant", "content": reply.content}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model"),
        "choices": [
            {"index": 0, "message": message, "finish_reason": reply.finish_reason}
        ],
        "usage": _usage(body, reply),
    }


def _embedding(body: dict) -> dict:
    text = str(body.get("input"))
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": 0, "embedding": embedding_vector(text)}
        ],
        "model": body.get("model"),
        "usage": {
            "prompt_tokens": len(text) // 4 + 1,
            "total_tokens": len(text) // 4 + 1,
        },
    }


def _error(message: str, code: str) -> dict:
    return {"error": {"message": message, "type": code, "param": None, "code": code}}


def _serve(conn, kwargs: dict) -> None:
    stub = OpenAIStub(**kwargs).start()
    conn.send(stub.base_url)
    conn.recv()  # blocks until the parent asks us to stop (or dies)
    stub.stop()


def serve_in_subprocess(target, *args):
    """Run `target(conn, *args)` in a process of its own (so that it does not
    share the caller's GIL): it sends its base URL on the pipe `conn`, then serves
    until anything arrives on it. Returns (base_url, stop)."""
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.get_context("spawn").Process(
        target=target, args=(child, *args), daemon=True
    )
    process.start()
    base_url = parent.recv()

    def stop() -> None:
        parent.send("stop")
        process.join(timeout=5)
        if process.is_alive():
            process.kill()

    return base_url, stop


def start_in_subprocess(**kwargs):
    """Run a stub in its own process. `responder` must be a module-level
    function. Returns (base_url, stop); read the counters with GET
    {base_url[:-3]}/stub/stats.
    """
    return serve_in_subprocess(_serve, kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--max-in-flight", type=int, default=None)
    args = parser.parse_args()
    stub = OpenAIStub(latency=args.latency, max_in_flight=args.max_in_flight)
    stub.start(args.port)
    print(stub.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        stub.stop()


if __name__ == "__main__":
    main()
