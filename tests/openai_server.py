"""A real OpenAI-compatible HTTP server on 127.0.0.1 for the tests: chat, completions (with echo and
prompt log-probs), embeddings, and scripted failures. Never the internet.

Log-probs come from a deterministic toy model: one token per character, and a next-character
distribution that depends on the previous character (`toy_logprobs`). `Script.weights` picks another toy
model (other log-probs under the same name), `Script.jitter` moves every log-prob by a fixed pseudo-random
amount of at most that size, as another batch shape moves a real server's rounding (`Script.salt` picks the
amounts), and `Script.models` is what `GET /v1/models` lists. The `/completions` logprobs are
shaped as the real servers shape them (`choices[0].logprobs` with `tokens`, `token_logprobs`,
`top_logprobs`, `text_offset`; the first prompt token's log-prob null):

- `shift=False`, like vLLM: the echoed log-prob of token i is log p(token i | tokens before it); the
  generated token follows the prompt's; a completion's `text_offset` starts at 0.
- `shift=True`, like llama-cpp-python's server 0.3.x for a model without a BOS token: the echoed value at
  token i is the log-prob that the distribution *after* token i gives token i (its logits are read one row
  late); the generated token is not echoed; a completion's `text_offset` starts at the prompt's length.
  One-token completions are right in both.
"""

from __future__ import annotations

import json
import math
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VOCAB = [chr(c) for c in range(32, 127)] + ["\n"]


def toy_logprobs(previous: str, weights: int = 0) -> dict[str, float]:
    """The toy model's next-character log-probs after the character `previous` ("" at the start); `weights`
    picks one of several toy models."""
    p = ord(previous) if previous else 0
    scores = {c: ((p * 31 + ord(c) * (17 + 2 * weights)) % 23) / 3.0 for c in VOCAB}
    total = math.log(sum(math.exp(v) for v in scores.values()))
    return {c: v - total for c, v in scores.items()}


def toy_loglik(context: str, continuation: str) -> float:
    """log p(continuation | context) under the toy model (the context's trailing space moved over)."""
    stripped = context.rstrip()
    text = stripped + context[len(stripped) :] + continuation
    return sum(toy_logprobs(text[i - 1] if i else "")[text[i]] for i in range(len(stripped), len(text)))


class Script:
    """What the server answers. `fail_next`: statuses to answer first (then normal answers);
    `reply(body) -> str`: the chat/completion text; `logprobs`: False to leave them out;
    `shift`: echo log-probs as llama-cpp-python's server does (wrong); `message_extra`: more fields of a chat
    reply's message (a reasoning server's `reasoning_content`); `finish_reason`: why a chat reply ended."""

    def __init__(self, reply=None, shift: bool = False, weights: int = 0, jitter: float = 0.0, salt: int = 0):
        self.requests: list[tuple[str, dict, dict]] = []  # (path, headers, body); a GET's body is {}
        self.fail_next: list[int] = []
        self.fail_only = ""  # the path `fail_next` applies to (its end: "/chat/completions"); "": every POST
        self.reply = reply or (lambda body: "Sure, I can help with that.")
        self.logprobs = True
        self.shift = shift
        self.message_extra: dict = {}
        self.finish_reason = "stop"
        self.weights, self.jitter, self.salt = weights, jitter, salt
        self.models: list[dict] | None = None  # GET /v1/models' `data`; None: 404, as a server without it
        self.lock = threading.Lock()

    def dist(self, previous: str) -> dict[str, float]:
        """This server's next-character log-probs (its toy model's, moved by its jitter)."""
        dist = toy_logprobs(previous, self.weights)
        if not self.jitter:
            return dist
        p = ord(previous) if previous else 0
        return {
            c: v + self.jitter * math.sin(p * 12.9898 + ord(c) * 78.233 + self.salt) for c, v in dist.items()
        }

    def logprob(self, previous: str, char: str) -> float:
        return self.dist(previous).get(char, -30.0)

    def greedy(self, text: str) -> str:
        dist = self.dist(text[-1:] if text else "")
        return max(VOCAB, key=lambda c: (dist[c], c))

    def top(self, previous: str, k: int, token: str) -> dict[str, float]:
        dist = self.dist(previous)
        return {**dict(sorted(dist.items(), key=lambda x: -x[1])[:k]), token: dist.get(token, -30.0)}


def _echo(script: Script, prompt: str, k: int) -> dict:
    generated = script.greedy(prompt)
    if script.shift:  # the value read one row late: token i against the distribution after it
        tokens = list(prompt)
        values = [None] + [script.logprob(c, c) for c in tokens[1:]]
        tops = [None] + [script.top(c, k, c) for c in tokens[1:]]
    else:
        tokens = [*prompt, generated]
        values = [None] + [script.logprob(tokens[i - 1], tokens[i]) for i in range(1, len(tokens))]
        tops = [None] + [script.top(tokens[i - 1], k, tokens[i]) for i in range(1, len(tokens))]
    logprobs = {
        "tokens": tokens,
        "token_logprobs": values,
        "top_logprobs": tops,
        "text_offset": list(range(len(tokens))),
    }
    return {"choices": [{"text": prompt + generated, "index": 0, "logprobs": logprobs}]}


def _one_token(script: Script, prompt: str, k: int) -> dict:
    token, previous = script.greedy(prompt), prompt[-1:]
    logprobs = {
        "tokens": [token],
        "token_logprobs": [script.logprob(previous, token)],
        "top_logprobs": [script.top(previous, k, token)],
        "text_offset": [len(prompt) if script.shift else 0],
    }
    return {"choices": [{"text": token, "index": 0, "logprobs": logprobs}]}


def _handler(script: Script):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            with script.lock:
                script.requests.append((self.path, dict(self.headers), {}))
            if self.path.endswith("/models") and script.models is not None:
                return self._send(200, {"object": "list", "data": script.models})
            return self._send(404, {"error": "no such endpoint"})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with script.lock:
                script.requests.append((self.path, dict(self.headers), body))
                failing = script.fail_next and self.path.endswith(script.fail_only)
                status = script.fail_next.pop(0) if failing else 200
            if status != 200:
                return self._send(status, {"error": {"message": f"scripted {status}"}})
            if self.path.endswith("/chat/completions"):
                message = {"role": "assistant", "content": script.reply(body), **script.message_extra}
                return self._send(
                    200, {"choices": [{"message": message, "finish_reason": script.finish_reason}]}
                )
            if self.path.endswith("/completions"):
                if body.get("logprobs") is None:
                    return self._send(200, {"choices": [{"text": script.reply(body)}]})
                if not script.logprobs:
                    return self._send(200, {"choices": [{"text": body["prompt"] + "x", "logprobs": None}]})
                answer = _echo if body.get("echo") else _one_token
                return self._send(200, answer(script, body["prompt"], int(body["logprobs"])))
            if self.path.endswith("/embeddings"):
                vectors = [[float(len(t)), float(t.count("e")) + 1.0] for t in body["input"]]
                return self._send(
                    200, {"data": [{"index": i, "embedding": v} for i, v in enumerate(vectors)]}
                )
            return self._send(404, {"error": "no such endpoint"})

    return Handler


@contextmanager
def openai_server(script: Script):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
