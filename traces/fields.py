"""Text and JSON columns that store NUL characters on PostgreSQL, losslessly.

PostgreSQL text and jsonb cannot hold U+0000, yet real traces contain it (a tool that
`cat`s a binary file). On PostgreSQL these fields write NUL as an escape, ESC + "0", and
ESC itself as ESC + ESC, where ESC is the noncharacter U+FFFF; reading undoes it, so
Python code sees exactly the text it stored. SQLite holds NUL as it is and is left alone.
Pages show NUL as "␀" (see `traces.pages.middleware`).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import zstandard
from django.db import models

ESC = "\uffff"
_ESC_BYTES = ESC.encode()
_ESCAPED = re.compile(ESC + "(.)", re.DOTALL)


def escape(text: str) -> str:
    """Text with NUL and the escape character escaped (no NUL left)."""
    if "\x00" not in text and ESC not in text:
        return text
    return text.replace(ESC, ESC + ESC).replace("\x00", ESC + "0")


def unescape(text: str) -> str:
    """The text `escape` was given."""
    if ESC not in text:
        return text
    return _ESCAPED.sub(lambda m: ESC if m.group(1) == ESC else "\x00", text)


def _fit(text: str, max_length: int | None) -> str:
    """Escaped text cut to the column's length without splitting an escape."""
    if max_length is None or len(text) <= max_length:
        return text
    cut = text[:max_length]
    trailing = len(cut) - len(cut.rstrip(ESC))
    return cut[:-1] if trailing % 2 else cut


def _walk(value: Any, convert) -> Any:
    if isinstance(value, str):
        return convert(value)
    if isinstance(value, dict):
        return {
            convert(k) if isinstance(k, str) else k: _walk(v, convert) for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_walk(item, convert) for item in value]
    return value


def escape_json(value: Any) -> Any:
    """A JSON value with every string (and key) escaped; untouched when none needs it."""
    try:
        raw = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return _walk(value, escape)
    if b"\\u0000" not in raw and _ESC_BYTES not in raw:
        return value
    return _walk(value, escape)


def decode_json(text: str | bytes, vendor: str) -> Any:
    """A NulSafeJSONField's stored text, decoded as the field reads it (orjson first, the
    standard library for what orjson refuses, such as NaN or lone surrogates)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        value = json.loads(text)
    if vendor == "postgresql" and isinstance(text, str) and ESC in text:
        return _walk(value, unescape)
    return value


class _NulSafeText:
    """Mixin of the text fields: escape on the way to PostgreSQL, unescape on the way back."""

    def get_db_prep_value(self, value, connection, prepared=False):
        value = super().get_db_prep_value(value, connection, prepared)  # type: ignore[misc]
        if connection.vendor == "postgresql" and isinstance(value, str):
            return _fit(escape(value), getattr(self, "max_length", None))
        return value

    def from_db_value(self, value, expression, connection):
        if connection.vendor == "postgresql" and isinstance(value, str):
            return unescape(value)
        return value


class NulSafeCharField(_NulSafeText, models.CharField):
    """A CharField that can hold NUL on PostgreSQL."""


class NulSafeTextField(_NulSafeText, models.TextField):
    """A TextField that can hold NUL on PostgreSQL."""


class NulSafeJSONField(models.JSONField):
    """A JSONField whose strings can hold NUL on PostgreSQL (jsonb refuses \\u0000)."""

    def get_db_prep_value(self, value, connection, prepared=False):
        if not prepared:
            value = self.get_prep_value(value)
        if connection.vendor == "postgresql":
            value = escape_json(value)
        return super().get_db_prep_value(value, connection, prepared=True)

    def from_db_value(self, value, expression, connection):
        escaped = isinstance(value, str) and ESC in value
        value = super().from_db_value(value, expression, connection)
        if escaped and connection.vendor == "postgresql":
            return _walk(value, unescape)
        return value


PACKED_MAGIC = b"LIZ1"
"""How a packed JSON value starts: the format's name and version, then one zstd frame."""
PACK_LEVEL = 3
"""zstd level 3: a 20,000-call report (34 MB of JSON) packs to some 3 MB in ~0.1 s and
unpacks in a few hundredths of a second, beside the ~1 s its JSON takes to decode."""


def pack_json(value: Any) -> bytes:
    """A JSON value as compact JSON in one zstd frame (which records its unpacked size)."""
    try:
        raw = orjson.dumps(value)
    except TypeError:  # a non-str key or a lone surrogate: the standard library's JSON
        raw = json.dumps(value).encode()
    return PACKED_MAGIC + zstandard.ZstdCompressor(level=PACK_LEVEL).compress(raw)


def unpack_json(packed: bytes | memoryview) -> Any:
    """The value `pack_json` packed."""
    return decode_json(_unpacked(packed), "sqlite")


def unpacked_size(packed: bytes | memoryview) -> int:
    """How many bytes of JSON `packed` holds (read from the frame, nothing decompressed)."""
    size = zstandard.frame_content_size(bytes(packed[len(PACKED_MAGIC) :]))
    return max(size, 0)


def _unpacked(packed: bytes | memoryview) -> bytes:
    data = bytes(packed)
    if not data.startswith(PACKED_MAGIC):
        raise ValueError("not a packed JSON value")
    return zstandard.ZstdDecompressor().decompress(data[len(PACKED_MAGIC) :])


class PackedJSONField(models.BinaryField):
    """A JSON value stored compressed (`pack_json`): a trace's report is read whole, never
    queried by key, and its JSON is repetitive (each call's and run's keys, the findings'
    messages), so zstd stores it in about a tenth of the bytes of jsonb or text. Bytes hold
    NUL and any character as they are: no escaping on PostgreSQL."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)

    def get_db_prep_value(self, value, connection, prepared=False):
        if value is not None and not isinstance(value, (bytes, bytearray, memoryview)):
            value = pack_json(value)
        return super().get_db_prep_value(value, connection, prepared)

    def from_db_value(self, value, expression, connection):
        return None if value is None else unpack_json(value)

    def to_python(self, value):
        if isinstance(value, (bytes, bytearray, memoryview)):
            return unpack_json(value)
        return value

    def value_to_string(self, obj):
        return orjson.dumps(self.value_from_object(obj)).decode()
