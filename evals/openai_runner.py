"""Asking a model behind an OpenAI-compatible chat completions endpoint (``transformers
serve``, vLLM, a hosted API): ``--model openai:MODEL@URL``.

``URL`` is the API's base (``http://127.0.0.1:8000/v1``); requests go to
``URL/chat/completions``. ``MODEL`` is the served model's name; ``openai:@URL`` (or
``openai:URL``) takes it from ``PROCVIS_OPENAI_MODEL``, else asks ``URL/models`` and uses the
only model listed. The key comes from ``PROCVIS_OPENAI_API_KEY`` or ``OPENAI_API_KEY``
(optional: local servers need none) and is sent as a bearer token, never stored or logged.

Each request is one chat: the earlier turns as user messages (images first, as PNG data
URLs, then the text) each followed by its reply as an assistant message, then the current
turn, exactly the conversation :class:`evals.hf_runner.HFRunner` puts through the chat
template. Decoding is greedy (``temperature`` 0) unless a temperature is given; ``seed`` is
always sent (when sampling, mixed with each request's id). The requests of one
``generate`` call run concurrently, at most ``PROCVIS_OPENAI_CONCURRENCY`` (default 8) at
a time: run ``procvis eval`` with ``--batch-size`` at least that. A request that gets 429, a
5xx status, a timeout (``PROCVIS_OPENAI_TIMEOUT`` seconds, default 120) or a broken
connection is retried ``PROCVIS_OPENAI_RETRIES`` times (default 6) with exponential backoff
and jitter, waiting at least the server's ``Retry-After``; then, or at once for any other
status, a :class:`UserError` names the URL, the status and the first line of the body.

The ``identity`` (what the evaluation cache keys replies on, so a killed run resumes where
it stopped) is the endpoint URL, the model name and the generation settings, never the key.
"""
from __future__ import annotations

import base64
import email.utils
import hashlib
import io
import json
import os
import random
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from PIL import Image

from engine.errors import UserError
from engine.protocol import Request

PREFIX = "openai:"
KEY_VARIABLES = ("PROCVIS_OPENAI_API_KEY", "OPENAI_API_KEY")
MAX_WAIT = 60.0          # seconds: the longest single backoff, whatever Retry-After asks


def parse_model(model: str) -> tuple[str | None, str]:
    """``openai:MODEL@URL`` (``MODEL`` may be empty or left out with its ``@``) as
    ``(MODEL or None, URL without a trailing slash)``; a :class:`UserError` when URL is not
    an http(s) URL."""
    body = model[len(PREFIX):] if model.startswith(PREFIX) else model
    at = max(body.rfind("@http://"), body.rfind("@https://"))
    name, url = (body[:at], body[at + 1:]) if at >= 0 else ("", body)
    if not url.startswith(("http://", "https://")):
        raise UserError(f"--model {model!r}: expected openai:MODEL@URL, e.g. "
                        "openai:Qwen/Qwen2.5-VL-3B-Instruct@http://127.0.0.1:8000/v1")
    return name or None, url.rstrip("/")


def png_data_url(image) -> str:
    """A ``[3,H,W]`` uint8 tensor (or array) as a ``data:image/png;base64,...`` URL (lossless)."""
    array = np.ascontiguousarray(np.asarray(image.cpu() if hasattr(image, "cpu") else image).transpose(1, 2, 0))
    buffer = io.BytesIO()
    Image.fromarray(array.astype(np.uint8), "RGB").save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def chat_messages(r: Request) -> list[dict]:
    """The chat of request ``r`` in the OpenAI format: every earlier turn as a user message
    (images, then text) and its reply as an assistant message, then the current turn.
    Returns the list of messages."""
    def user(text, images):
        parts = [{"type": "image_url", "image_url": {"url": png_data_url(i)}} for i in images]
        return {"role": "user", "content": parts + [{"type": "text", "text": text}]}

    messages = []
    for text, images, reply in r.history:
        messages += [user(text, images), {"role": "assistant", "content": [{"type": "text", "text": reply}]}]
    return messages + [user(r.prompt, r.images)]


def _env_number(name: str, default, kind=int):
    """Environment variable ``name`` as a positive ``kind`` (``default`` when unset); a
    :class:`UserError` naming it otherwise."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or value < (0 if name.endswith("RETRIES") else 1e-9):
        raise UserError(f"{name}={raw!r}: expected a positive number")
    return value


class _Retry(Exception):
    """A failed try worth repeating: ``status`` (None: no HTTP answer), ``detail`` (the
    body's first line or the error) and the server's ``Retry-After`` in seconds (or None)."""

    def __init__(self, status: int | None, detail: str, after: float | None = None):
        super().__init__(detail)
        self.status, self.detail, self.after = status, detail, after


def _retry_after(value: str | None) -> float | None:
    """A ``Retry-After`` header (seconds or an HTTP date) in seconds from now, or None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _first_line(data: bytes) -> str:
    """The first non-empty line of an HTTP body, at most 200 characters."""
    text = data.decode("utf-8", "replace").strip()
    return text.splitlines()[0][:200] if text else "(empty body)"


def _content(answer: dict) -> str:
    """The reply text of a chat completion (string or text parts), stripped; raises
    ``KeyError``/``TypeError``/``IndexError`` when the answer has no such field."""
    content = answer["choices"][0]["message"]["content"]
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return (content or "").strip()


class OpenAIRunner:
    """``generate(requests)`` against the chat completions endpoint at ``url`` (the API base,
    e.g. ``http://127.0.0.1:8000/v1``) for served model ``model`` (None: the only one the
    server lists); ``identity`` names the endpoint, the model and the generation settings."""

    def __init__(self, url: str, model: str | None = None, max_new_tokens: int = 32, temperature: float = 0.0,
                 top_p: float = 1.0, seed: int = 0, concurrency: int | None = None, timeout: float | None = None,
                 retries: int | None = None, backoff: float = 1.0, api_key: str | None = None):
        if isinstance(max_new_tokens, bool) or int(max_new_tokens) != max_new_tokens or max_new_tokens < 1:
            raise UserError(f"--max-new-tokens {max_new_tokens!r}: must be a positive integer")
        if not 0 <= float(temperature) < float("inf") or not 0 < float(top_p) <= 1:
            raise UserError(f"temperature {temperature!r} / top_p {top_p!r}: expected temperature >= 0, 0 < top_p <= 1")
        self.url = url.rstrip("/")
        self.api_key = api_key if api_key is not None else next(
            (os.environ[k] for k in KEY_VARIABLES if os.environ.get(k)), None)
        self.concurrency = int(concurrency or _env_number("PROCVIS_OPENAI_CONCURRENCY", 8))
        self.timeout = float(timeout or _env_number("PROCVIS_OPENAI_TIMEOUT", 120.0, float))
        self.retries = int(retries if retries is not None else _env_number("PROCVIS_OPENAI_RETRIES", 6))
        self.backoff = float(backoff)
        self.model = model or os.environ.get("PROCVIS_OPENAI_MODEL") or self._only_model()
        self.max_tokens, self.temperature, self.top_p, self.seed = int(max_new_tokens), float(temperature), \
            float(top_p), int(seed)
        self.name = f"openai:{self.model}"
        self.settings = {"max_tokens": self.max_tokens, "temperature": self.temperature, "seed": self.seed}
        if self.temperature > 0:
            self.settings["top_p"] = self.top_p
        self.source = {"url": self.url, "model": self.model}
        self.identity = "openai " + json.dumps({"url": self.url, "model": self.model, **self.settings}, sort_keys=True)

    def _headers(self) -> dict:
        """The request headers: JSON, and the bearer key when there is one."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _only_model(self) -> str:
        """The one model ``URL/models`` lists; a :class:`UserError` when it lists none or several."""
        answer = self._call("GET", "/models", None)
        names = [m.get("id") for m in answer.get("data", []) if isinstance(m, dict) and m.get("id")]
        if len(names) != 1:
            raise UserError(f"{self.url}/models lists {len(names)} models ({', '.join(names[:5])}): name one, "
                            "as openai:MODEL@URL")
        return names[0]

    def body(self, r: Request) -> dict:
        """The JSON body of the chat completion request for ``r``."""
        seed = self.seed
        if self.temperature > 0:              # sampling: each request its own reproducible stream
            digest = hashlib.blake2b(f"{self.seed}\x00{r.id}".encode(), digest_size=4).digest()
            seed = int.from_bytes(digest, "little") >> 1
        out = {"model": self.model, "messages": chat_messages(r), "max_tokens": self.max_tokens,
               "temperature": self.temperature, "seed": seed, "stream": False}
        if self.temperature > 0:
            out["top_p"] = self.top_p
        return out

    def generate(self, requests: list[Request]) -> list[str]:
        """One reply per request, in order, asked at most ``concurrency`` at a time."""
        if not requests:
            return []
        pool = ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests)), thread_name_prefix="openai")
        try:
            replies = list(pool.map(self._ask, requests))
        except BaseException:                 # an error or Ctrl-C: drop the queued requests, do not wait
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        return replies

    def _ask(self, r: Request) -> str:
        """The reply to ``r`` (a :class:`UserError` when the answer holds no reply)."""
        answer = self._call("POST", "/chat/completions", json.dumps(self.body(r)).encode())
        try:
            return _content(answer)
        except (KeyError, TypeError, IndexError, AttributeError):
            raise UserError(f"{self.url}/chat/completions: no choices[0].message.content in the answer to "
                            f"{r.id!r}: {json.dumps(answer)[:200]}") from None

    def _call(self, method: str, path: str, data: bytes | None) -> dict:
        """The JSON answer of ``method URL+path``, retried with backoff on 429, 5xx, timeouts
        and broken connections; a one-line :class:`UserError` once the retries are spent or
        at once for another status."""
        for attempt in range(self.retries + 1):
            try:
                return self._once(method, path, data)
            except _Retry as e:
                failure = e
                if attempt < self.retries:
                    wait = min(MAX_WAIT, self.backoff * 2 ** attempt) * (0.5 + random.random() / 2)
                    time.sleep(min(MAX_WAIT, max(wait, e.after or 0.0)))
        what = f"HTTP {failure.status}" if failure.status is not None else "no answer"
        raise UserError(f"{method} {self.url}{path}: {what} after {self.retries + 1} tries: {failure.detail}")

    def _once(self, method: str, path: str, data: bytes | None) -> dict:
        """One try: the decoded JSON answer, a :class:`_Retry` for a transient failure, a
        :class:`UserError` for any other."""
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=self._headers())
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            detail = _first_line(e.read() or b"")
            if e.code == 429 or e.code >= 500:
                raise _Retry(e.code, detail, _retry_after(e.headers.get("Retry-After"))) from None
            raise UserError(f"{method} {self.url}{path}: HTTP {e.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as e:          # refused, reset, timed out
            raise _Retry(None, str(getattr(e, "reason", None) or e) or type(e).__name__) from None
        try:
            return json.loads(raw)
        except ValueError:
            raise _Retry(None, f"not JSON: {_first_line(raw)}") from None
