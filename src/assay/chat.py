"""One OpenAI-compatible chat-completions client, cached, shared by the LLM judge and answerer.

Every call goes through `assay.cache.RequestCache`: the key is the endpoint and the full request
body (model, messages, temperature, max_tokens, seed), so a rerun reproduces every reply without
calling the model, and changing any setting makes a new call. Base URL, model and key come from
the arguments or the environment (`ASSAY_LLM_BASE_URL`, e.g. "http://127.0.0.1:8000/v1",
`ASSAY_LLM_MODEL`, `ASSAY_LLM_API_KEY`). `transport` takes an `httpx` transport for tests.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.cache import RequestCache, cache_key
from assay.errors import AssayError, UsageError

if TYPE_CHECKING:
    import httpx

__all__ = ["ENV_API_KEY", "ENV_BASE_URL", "ENV_MODEL", "ChatClient", "ChatReply", "LLMError"]

ENV_BASE_URL = "ASSAY_LLM_BASE_URL"
ENV_MODEL = "ASSAY_LLM_MODEL"
ENV_API_KEY = "ASSAY_LLM_API_KEY"


class LLMError(AssayError):
    """The chat endpoint failed or answered in a shape that cannot be read."""


@dataclass(frozen=True, slots=True)
class ChatReply:
    """A reply and what it cost: the endpoint's `usage` token counts (None when it reports
    none), and whether the request cache served it (the tokens are those of the original call).
    """

    text: str
    model: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool = False

    @property
    def total_tokens(self) -> int | None:
        if self.prompt_tokens is None and self.completion_tokens is None:
            return None
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)


class ChatClient:
    """Minimal OpenAI-compatible chat-completions client; every call goes through the cache.

    `calls` counts the requests that reached the endpoint (the rest came from the cache).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        cache: RequestCache | None = None,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ):
        if not base_url:
            raise UsageError(f"no chat endpoint: pass a base URL or set {ENV_BASE_URL}")
        if not model:
            raise UsageError(f"no model: pass a model name or set {ENV_MODEL}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.cache = cache if cache is not None else RequestCache(namespace="chat")
        import httpx

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(timeout=timeout, headers=headers, transport=transport)
        self.calls = 0

    @classmethod
    def from_env(
        cls,
        *,
        base_url: str | None = None,
        model: str | None = None,
        cache: RequestCache | None = None,
        environ: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> ChatClient:
        """A client for the given endpoint and model, else those of the environment."""
        env = os.environ if environ is None else environ
        return cls(
            base_url or env.get(ENV_BASE_URL, ""),
            model or env.get(ENV_MODEL, ""),
            api_key=env.get(ENV_API_KEY) or None,
            cache=cache,
            timeout=timeout,
            transport=transport,
        )

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = 200,
        seed: int | None = 0,
    ) -> str:
        """The assistant's reply text; cached by endpoint, model, messages and settings.

        `max_tokens=None` / `seed=None` leave the field out of the request.
        """
        return self.reply(messages, temperature=temperature, max_tokens=max_tokens, seed=seed).text

    def reply(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = 200,
        seed: int | None = 0,
    ) -> ChatReply:
        """`complete`, with the tokens the endpoint reports in `usage` (kept in the cache with
        the text, so a cached reply still says what it cost)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": temperature,
        }
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if seed is not None:
            body["seed"] = seed
        key = cache_key(kind="chat.completions", base_url=self.base_url, body=body)
        hit = self.cache.get(key)
        if isinstance(hit, str):  # cached before usage was kept
            return ChatReply(hit, self.model, cached=True)
        if isinstance(hit, dict) and isinstance(hit.get("text"), str):
            return ChatReply(
                hit["text"],
                self.model,
                _tokens(hit.get("prompt_tokens")),
                _tokens(hit.get("completion_tokens")),
                cached=True,
            )
        import httpx

        self.calls += 1
        try:
            resp = self._http.post(f"{self.base_url}/chat/completions", json=body)
        except httpx.HTTPError as exc:
            raise LLMError(f"chat endpoint {self.base_url} failed: {exc}") from exc
        if resp.status_code != 200:
            raise LLMError(
                f"chat endpoint {self.base_url} answered HTTP {resp.status_code}: {resp.text[:200]}"
            )
        try:
            payload = resp.json()
            text = payload["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"chat endpoint {self.base_url} answered an unreadable body") from exc
        if not isinstance(text, str):
            raise LLMError(f"chat endpoint {self.base_url} answered non-text content")
        usage = payload.get("usage") if isinstance(payload, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        out = ChatReply(
            text,
            self.model,
            _tokens(usage.get("prompt_tokens")),
            _tokens(usage.get("completion_tokens")),
        )
        self.cache.put(
            key,
            {
                "text": text,
                "prompt_tokens": out.prompt_tokens,
                "completion_tokens": out.completion_tokens,
            },
        )
        return out

    def close(self) -> None:
        self._http.close()


def _tokens(value: Any) -> int | None:
    """A token count from a usage field (a non-negative int), else None."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value
