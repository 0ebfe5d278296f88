"""Template helpers: a foldable, highlighted JSON tree, and the core's number formats as filters.

Every string from a trace is untrusted; all of it passes through `escape` here and
nothing is marked safe before it has been.
"""

from __future__ import annotations

from datetime import datetime
from types import MappingProxyType
from typing import Any

import orjson
from django import template
from django.utils import timezone
from django.utils.html import escape, format_html, json_script
from django.utils.safestring import SafeString, mark_safe

from traces.core import formatting
from traces.core.outputs.notes import note_html as _note_html
from traces.core.outputs.page_figures import ScenarioCells, scenario_cells
from traces.web import audit_names

register = template.Library()

FOLD_STRING_CHARS = 400
FOLD_ITEMS = 40
MAX_TREE_DEPTH = 60


_SCRIPT_ESCAPES = ((b"&", b"\\u0026"), (b"<", b"\\u003C"), (b">", b"\\u003E"))


@register.filter
def json_data(value: Any, element_id: str) -> SafeString:
    """Django's `json_script`, serialised by orjson: the same escapes (`<`, `>`, `&` as
    \\u escapes, so no string can close the script), at a tenth of the time on the
    10,000-point chart figures of a long trace."""
    try:
        raw = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json_script(value, element_id)
    for char, escaped in _SCRIPT_ESCAPES:
        raw = raw.replace(char, escaped)
    return format_html(
        '<script id="{}" type="application/json">{}</script>',
        element_id,
        mark_safe(raw.decode()),  # escaped above: no markup can end the element
    )


@register.filter
def json_tree(value: Any, open_levels: int = 2) -> SafeString:
    """Render a JSON value as nested <details>, long strings and big lists folded."""
    out: list[str] = []
    _node(value, out, depth=0, open_levels=int(open_levels))
    return mark_safe("".join(out))


_CONTAINERS = MappingProxyType(
    {
        dict: ("j-obj", "{", "}", "keys", "<ul>", "</ul>"),
        list: ("j-arr", "[", "]", "items", '<ol start="0">', "</ol>"),
    }
)
"""How an object and an array are drawn: class, brackets, what is counted, list tags."""


def _container(value: dict | list, out: list[str], depth: int, open_levels: int) -> str | None:
    """Open the folded tree of an object or array; the markup that closes it, or None when
    it is empty (then drawn as its bare brackets)."""
    kind = dict if isinstance(value, dict) else list
    css, opening, closing, unit, list_open, list_close = _CONTAINERS[kind]
    if not value:
        out.append(f'<span class="j-punct">{opening}{closing}</span>')
        return None
    is_open = " open" if depth < open_levels else ""
    out.append(
        f'<details class="{css}"{is_open}><summary><span class="j-punct">{opening}</span>'
        f'<span class="j-count">{len(value)} {unit}</span></summary>{list_open}'
    )
    return f'{list_close}<span class="j-punct">{closing}</span></details>'


def _node(value: Any, out: list[str], depth: int, open_levels: int) -> None:
    if depth >= MAX_TREE_DEPTH:
        text = orjson.dumps(value).decode()
        out.append(f'<code class="j-deep">{escape(text[:2000])}</code>')
        return
    if isinstance(value, (dict, list)):
        closing = _container(value, out, depth, open_levels)
        if closing is None:
            return
        if isinstance(value, dict):
            for key, item in value.items():
                out.append(f'<li><span class="j-key">{escape(str(key))}</span>: ')
                _node(item, out, depth + 1, open_levels)
                out.append("</li>")
        else:
            _items(value, out, depth, open_levels)
        out.append(closing)
    elif isinstance(value, str):
        out.append(folded_text(value, css="j-str", quote=True))
    elif isinstance(value, bool) or value is None:
        out.append(f'<span class="j-lit">{escape(orjson.dumps(value).decode())}</span>')
    elif isinstance(value, (int, float)):
        out.append(f'<span class="j-num">{escape(str(value))}</span>')
    else:
        out.append(f'<span class="j-str">{escape(str(value))}</span>')


def _items(value: list, out: list[str], depth: int, open_levels: int) -> None:
    """An array's items; past FOLD_ITEMS (with ten more to come) the rest fold away."""
    for position, item in enumerate(value):
        if position == FOLD_ITEMS and len(value) > FOLD_ITEMS + 10:
            out.append(
                f'<li><details class="j-more"><summary>{len(value) - FOLD_ITEMS} more '
                "items</summary><ol>"
            )
        out.append("<li>")
        _node(item, out, depth + 1, open_levels)
        out.append("</li>")
    if len(value) > FOLD_ITEMS + 10:
        out.append("</ol></details></li>")


def folded_text(text: str, css: str = "text", quote: bool = False) -> str:
    """A string, folded after FOLD_STRING_CHARS with its full size shown."""
    q = '"' if quote else ""
    if len(text) <= FOLD_STRING_CHARS:
        return f'<span class="{css}">{q}{escape(text)}{q}</span>'
    head = escape(text[:FOLD_STRING_CHARS])
    return (
        f'<details class="fold {css}"><summary><span class="fold-head">{q}{head}…</span>'
        f'<span class="fold-size">{len(text):,} chars — show all</span></summary>'
        f'<span class="fold-body">{q}{escape(text)}{q}</span></details>'
    )


@register.filter
def fold(value: Any) -> SafeString:
    """Long plain text, folded with its size shown."""
    return mark_safe(folded_text("" if value is None else str(value), css="pre"))


@register.filter
def note_html(value: Any) -> SafeString:
    """A note's Markdown as safe HTML: markdown-it-py with raw HTML, images and links other
    than http(s)/mailto off (`traces.core.outputs.notes`), so it is marked safe here."""
    return mark_safe(_note_html(str(value or "")))


@register.filter
def tokens(value: Any) -> str:
    """1234567 -> '1.23 M', 12345 -> '12.3 k'; exact figures go in titles."""
    return formatting.tokens_compact(value)


@register.filter
def seconds(value: Any) -> str:
    """A duration: '250 ms', '12.5 s', '1 min 5 s', '2 h 3 min'."""
    return formatting.duration(value)


@register.filter
def get_item(mapping: Any, key: Any) -> Any:
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def usd(value: Any) -> str:
    """Dollars with enough precision for per-call costs; 'unknown' when not priced."""
    return formatting.money(value)


@register.filter
def signed(value: Any, kind: str = "int") -> SafeString:
    """A difference (B minus A) with its sign, coloured: more is red, less green (for
    tokens, calls, dollars and findings, less is better; `pp-neutral` is not coloured)."""
    if value is None or value == "":
        return mark_safe('<span class="delta-zero">—</span>')
    number = float(value)
    if kind == "usd":
        text = formatting.money(abs(number))
    elif kind == "pct":
        text = formatting.percent(abs(number))
    elif kind in ("pp", "pp-neutral"):
        text = f"{abs(number) * 100:.1f} pp"
    elif kind == "float":
        text = f"{abs(number):,.2f}"
    elif kind == "mean":  # a difference of means of counts: 1.5 calls, not 1.50
        text = formatting.mean_count(abs(number))
    else:
        text = f"{abs(int(number)):,}"
    if number == 0:
        return mark_safe(f'<span class="delta-zero">±{escape(text)}</span>')
    sign, css = ("+", "delta-up") if number > 0 else ("−", "delta-down")
    if kind == "pp-neutral":  # e.g. an outcome's rate: more is not worse by itself
        css = "delta-neutral"
    return mark_safe(f'<span class="{css}">{sign}{escape(text)}</span>')


@register.filter
def count(value: Any) -> str:
    """An exact count with thousands separators: 10,000, never 10000 ('—' when unknown)."""
    return formatting.count(value)


@register.filter
def mean_count(value: Any) -> str:
    """A mean of counts: 12.4 calls per run, 3 findings (not 3.00)."""
    return formatting.mean_count(value)


@register.filter
def saving(usd_saved: Any, percent_saved: Any = None) -> str:
    """A what-if's dollars saved; a fix that costs more says so: 'costs $9.92 more (+117.7%)'."""
    return formatting.saving(usd_saved, percent_saved)


@register.filter
def when(value: Any) -> SafeString:
    """A moment in the server's time zone with the zone named ('2026-12-01 19:22:38 UTC'),
    in a <time> element carrying the ISO form with its offset."""
    if not isinstance(value, datetime):
        return mark_safe(formatting.MISSING)
    local = timezone.localtime(value) if timezone.is_aware(value) else value
    zone = local.tzname() or "UTC"
    return format_html(
        '<time datetime="{}">{} {}</time>',
        local.isoformat(timespec="seconds"),
        local.strftime("%Y-%m-%d %H:%M:%S"),
        zone,
    )


@register.filter
def audit_event(action: Any) -> str:
    """An audit line's action as people say it ('Price set'), not its code ('price.set')."""
    return audit_names.event_name(str(action or ""))


@register.filter
def percent(value: Any) -> str:
    """A fraction as a percentage ('—' when unknown)."""
    return formatting.percent(value)


_BREAK_AFTER = frozenset("/-.")


@register.filter
def breakable(value: Any) -> SafeString:
    """A code-like token (a model name) escaped, with a <wbr> after each "/", "-" and ".":
    the only places it may wrap (`claude-sonnet-<wbr>4-<wbr>5`), never mid-word."""
    out = []
    for char in "" if value is None else str(value):
        out.append(escape(char))
        if char in _BREAK_AFTER:
            out.append("<wbr>")
    return mark_safe("".join(out))  # every character escaped above


@register.filter
def percent_points(value: Any, digits: int = 1) -> str:
    """A value already in percent ('33.3%'; `:0` for a share shown whole); '—' when unknown."""
    return formatting.percent(value, scale=1, digits=int(digits))


@register.filter
def diff_lines(lines: Any) -> SafeString:
    """A unified diff as escaped lines, each marked added, removed, hunk or context."""
    out = []
    for line in lines or []:
        text = str(line)
        if text.startswith(("+++", "---")):
            continue
        css = {"+": "add", "-": "del", "@": "hunk"}.get(text[:1], "ctx")
        out.append(f'<span class="{css}">{escape(text) or " "}</span>')
    return mark_safe("".join(out))


@register.filter
def split_pairs(value: str) -> list[tuple[str, str]]:
    """'Title:key,Title:key' -> [(title, key), ...], for small fixed lists in templates."""
    return [tuple(item.split(":", 1)) for item in value.split(",")]  # type: ignore[misc]


@register.filter
def what_if_cells(scenario: Any) -> ScenarioCells:
    """A what-if scenario's figures as its row shows them, written by the same function
    as the live page's (traces.core.outputs.page_figures)."""
    return scenario_cells(scenario if isinstance(scenario, dict) else {})
