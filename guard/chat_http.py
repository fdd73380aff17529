"""A small client for OpenAI-compatible chat-completions endpoints (vLLM, llama.cpp server, ...).

Timeouts, retries with exponential backoff on 5xx and connection errors, clear errors otherwise. Uses
only the standard library. Never logs message content.
"""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

from guard.errors import BackendError


class ChatClient:
    def __init__(self, base_url: str, model: str, *, api_key: str = "", timeout: float = 30.0, retries: int = 2,
                 backoff: float = 0.5):
        if not base_url:
            raise BackendError("no chat-completions base URL configured")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.api_key, self.timeout, self.retries, self.backoff = model, api_key, timeout, retries, backoff

    def complete(self, messages: list[dict], **params) -> str:
        body = json.dumps({"model": self.model, "messages": messages, **params}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    data = json.loads(resp.read())
                return data["choices"][0]["message"]["content"] or ""
            except urllib.error.HTTPError as e:
                last = f"HTTP {e.code} from {self.url}"
                if e.code < 500:
                    raise BackendError(f"{last}: the request was rejected ({e.reason})") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
                last = f"{self.url} unreachable ({getattr(e, 'reason', e)})"
            except (KeyError, IndexError, ValueError):
                raise BackendError(f"{self.url} answered without choices[0].message.content") from None
        raise BackendError(f"{last}; gave up after {self.retries + 1} attempts")
