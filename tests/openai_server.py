"""A real OpenAI-compatible HTTP server on 127.0.0.1 for the tests: chat, completions (with echo and
prompt log-probs, one token per character), embeddings, and scripted failures. Never the internet."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    """What the server answers. `fail_next`: statuses to answer first (then normal answers);
    `reply(body) -> str`: the chat/completion text; `logprobs`: False to leave them out."""

    def __init__(self, reply=None):
        self.requests: list[tuple[str, dict, dict]] = []  # (path, headers, body)
        self.fail_next: list[int] = []
        self.reply = reply or (lambda body: "Sure, I can help with that.")
        self.logprobs = True
        self.lock = threading.Lock()


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

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with script.lock:
                script.requests.append((self.path, dict(self.headers), body))
                status = script.fail_next.pop(0) if script.fail_next else 200
            if status != 200:
                return self._send(status, {"error": {"message": f"scripted {status}"}})
            if self.path.endswith("/chat/completions"):
                text = script.reply(body)
                return self._send(200, {"choices": [{"message": {"role": "assistant", "content": text}}]})
            if self.path.endswith("/completions"):
                if body.get("echo"):
                    if not script.logprobs:
                        return self._send(
                            200, {"choices": [{"text": body["prompt"] + "x", "logprobs": None}]}
                        )
                    prompt = body["prompt"]
                    # One token per character; a character's log-prob is -(its code point % 7) / 10.
                    tokens = [*prompt, "x"]
                    return self._send(
                        200,
                        {
                            "choices": [
                                {
                                    "text": prompt + "x",
                                    "logprobs": {
                                        "tokens": tokens,
                                        "token_logprobs": [None] + [-(ord(c) % 7) / 10 for c in tokens[1:]],
                                        "text_offset": list(range(len(tokens))),
                                    },
                                }
                            ]
                        },
                    )
                return self._send(200, {"choices": [{"text": script.reply(body)}]})
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


def char_loglik(context: str, continuation: str) -> float:
    """What the server's log-probs add up to for `continuation` after `context` (trailing space moved)."""
    stripped = context.rstrip()
    cont = context[len(stripped) :] + continuation
    return sum(-(ord(c) % 7) / 10 for c in cont)
