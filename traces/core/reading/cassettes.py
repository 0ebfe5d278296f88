"""Read YAML uploads: VCR cassettes become HTTP-pair records, other YAML its records.

A VCR cassette (`interactions:` of request/response mappings, as vcrpy and pytest-recording
write them, or as Go's go-vcr does, whose status code and timing `go_vcr` reads) is
reshaped into the claude-trace HTTP-pair records the request-log adapters read, one
record per interaction. YAML is read safely: aliases ("billion laughs") and deep
nesting are refused from the event stream, before anything is built, and YAML's extra
types (dates, binary, sets) are made JSON or refused per interaction.
"""

from __future__ import annotations

import datetime
from functools import cache
from typing import Any

from ..model import LineError
from . import go_vcr
from .http_body import clean_headers, decode_body, jsonable
from .limits import DEFAULT_LIMITS, InputRejected, Limits
from .records import Record, Source, lines_in


@cache
def no_alias_loader() -> type:
    """A safe YAML loader that also refuses aliases, so 'billion laughs' cannot expand.

    Built at the first YAML file: PyYAML is only imported when a cassette is read.
    """
    import yaml

    # PyYAML ships no type information (types-PyYAML is not a dependency): its loader
    # is Any to mypy, so subclassing it needs this one acknowledged exception.
    class NoAliasLoader(yaml.SafeLoader):  # type: ignore[misc]
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.composer.ComposerError(
                    None, None, "YAML aliases are not accepted in traces", event.start_mark
                )
            return super().compose_node(parent, index)

    return NoAliasLoader


MAX_YAML_BYTES = 64 * 1024 * 1024
"""VCR cassettes are small; a larger YAML file would take minutes to read."""


def read_yaml(data: bytes, limits: Limits = DEFAULT_LIMITS) -> Source:
    """Read a VCR cassette: each interaction becomes one HTTP-pair record."""
    import yaml

    lines_total = lines_in(data)
    if len(data) > MAX_YAML_BYTES:
        raise InputRejected(
            f"The YAML file is {len(data):,} bytes; cassettes over {MAX_YAML_BYTES:,} "
            "bytes are refused (convert it to JSONL)."
        )
    try:
        _check_yaml_events(data, limits)
        document = yaml.load(data, Loader=_loader())
    except yaml.YAMLError as exc:
        raise InputRejected(f"Not readable YAML: {exc}") from exc
    except RecursionError:
        raise InputRejected("Not readable YAML: nested too deeply; refused.") from None
    if not isinstance(document, dict) or not isinstance(document.get("interactions"), list):
        if isinstance(document, list):  # a YAML list of records (e.g. SDK stream messages)
            return Source("yaml", lines_total, [Record(i + 1, v) for i, v in enumerate(document)])
        if isinstance(document, dict):  # one YAML document; its adapter unwraps it
            return Source("yaml", lines_total, [Record(1, document)])
        raise InputRejected("A YAML file must be a VCR cassette or a list/mapping of records.")
    items: list[Record | LineError] = []
    for number, interaction in enumerate(document["interactions"], start=1):
        try:
            pair = _bytes_as_text(vcr_interaction_to_pair(_json_value(interaction), limits))
        except _NotJson as exc:
            items.append(LineError(number, f"interaction holds {exc}, which JSON cannot hold"))
            continue
        if pair is None:
            items.append(LineError(number, "interaction has no request/response mapping"))
        else:
            items.append(Record(number, pair))
    return Source("yaml", lines_total, items)


@cache
def _loader() -> type:
    """libyaml's loader when PyYAML has it (aliases and depth are refused beforehand by
    `_check_yaml_events`), else the pure-Python one that refuses aliases itself."""
    import yaml

    return yaml.CSafeLoader if yaml.__with_libyaml__ else no_alias_loader()


def _check_yaml_events(data: bytes, limits: Limits) -> None:
    """Refuse aliases and deep nesting from the event stream, before anything is built:
    the C loader composes recursively (no Python recursion limit protects it)."""
    import yaml

    depth = 0
    starts = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    ends = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    for event in yaml.parse(data, Loader=_loader()):
        if isinstance(event, yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases are not accepted in traces", event.start_mark
            )
        if isinstance(event, starts):
            depth += 1
            if depth > limits.max_depth:
                raise InputRejected(
                    f"Not readable YAML: nested deeper than {limits.max_depth} levels; refused."
                )
        elif isinstance(event, ends):
            depth -= 1


class _NotJson(ValueError):
    """A YAML value with no JSON counterpart (a set, an odd key)."""


def _json_value(value: Any) -> Any:
    """The value with YAML's extra types made JSON: dates as ISO text, binary as text
    (bodies are decoded later); sets and other types raise `_NotJson`."""
    if isinstance(value, int) and not isinstance(value, bool):
        # orjson reads integers past 64 bits as floats; YAML keeps them exact
        return value if -(2**63) <= value < 2**64 else float(value)
    if value is None or isinstance(value, (str, bool, float)):
        return value
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise _NotJson(f"a {type(key).__name__} key")
            out[key if isinstance(key, str) else str(key)] = _json_value(item)
        return out
    if isinstance(value, list):
        return [_json_value(item) for item in value]
    if isinstance(value, bytes):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    raise _NotJson(f"a YAML {type(value).__name__}")


def _bytes_as_text(value: Any) -> Any:
    """Binary values left outside the bodies (which are decoded on their own) as text."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, dict):
        return {key: _bytes_as_text(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_bytes_as_text(item) for item in value]
    return value


def vcr_interaction_to_pair(
    interaction: Any, limits: Limits = DEFAULT_LIMITS
) -> dict[str, Any] | None:
    """Reshape one VCR interaction into the claude-trace HTTP-pair shape adapters read.

    Bodies are decoded by `http_body`: `parsed_body` structures, JSON strings, gzip or
    base64 `!!binary` bytes and AWS event streams all arrive as JSON (or event text).
    """
    if not isinstance(interaction, dict):
        return None
    request = interaction.get("request")
    response = interaction.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        return None
    request_headers = clean_headers(request.get("headers"))
    if "parsed_body" in request:
        request_body = jsonable(request["parsed_body"])
    else:
        request_body = request.get("body")
    pair_request = {
        "method": request.get("method"),
        "url": request.get("uri") or request.get("url"),
        "headers": request_headers,
        "body": decode_body(request_body, request.get("headers"), limits),
    }
    raw_headers = response.get("headers")
    if "parsed_body" in response:
        parsed = jsonable(response["parsed_body"])
    else:
        parsed = decode_body(response.get("body"), raw_headers, limits)
    status = response.get("status")
    pair_response: dict[str, Any] = {
        "status_code": status.get("code") if isinstance(status, dict) else status,
        "headers": clean_headers(raw_headers),
    }
    if go_vcr.is_go_vcr(response):
        pair_response["status_code"] = go_vcr.status_code(response)
        started, ended = go_vcr.times(response)
        if started is not None:
            pair_request["timestamp"] = started
        if ended is not None:
            pair_response["timestamp"] = ended
        seconds = go_vcr.duration_seconds(response.get("duration"))
        if seconds is not None:
            pair_response["duration_s"] = seconds
    if isinstance(parsed, (dict, list)):
        pair_response["body"] = parsed
    else:
        pair_response["body"] = None
        pair_response["body_raw"] = parsed if isinstance(parsed, str) else None
    return {"request": pair_request, "response": pair_response, "recorded_by": "vcr"}
