"""A tiny, safe SVG element builder: elements are built as a tree and serialised with
proper XML escaping, so untrusted text (tool names, error messages, ids) can never turn
into markup.

Nothing here pastes strings into markup: tag and attribute names are checked against
the XML name grammar (they come from our code, so a bad one is a bug and raises), and
every attribute value and text node is escaped on output. Characters XML 1.0 cannot
carry at all (C0 controls other than tab/newline/return, lone surrogates, U+FFFE/FFFF)
are replaced by visible stand-ins, because even an escaped `&#1;` makes the document
unparseable.

    root = Element("svg", {"viewBox": "0 0 10 10"})
    root.add("text", {"x": 1, "y": 5}, text=untrusted_name)
    markup = root.to_string()
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from traces.core.outputs.escaping import escape_html

SVG_NAMESPACE = "http://www.w3.org/2000/svg"

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]*$")
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ATTRIBUTE_SPECIAL = re.compile('[&<>"\t\n\r]')
_ATTRIBUTE_UNSAFE = re.compile('[&<>"\t\n\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]')
_ATTRIBUTE_ESCAPES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "&quot;",
    # Escaped so attribute-value normalisation does not turn them into spaces.
    "\t": "&#9;",
    "\n": "&#10;",
    "\r": "&#13;",
}


def _stand_in(match: re.Match[str]) -> str:
    """A visible replacement for a character XML cannot hold (␀..␟ for controls)."""
    code = ord(match.group(0))
    return chr(0x2400 + code) if code < 0x20 else "\ufffd"


def xml_safe(value: str) -> str:
    """`value` with the characters XML 1.0 forbids replaced (not yet escaped)."""
    if _NOT_XML.search(value) is None:
        return value
    return _NOT_XML.sub(_stand_in, value)


def escape_text(value: str) -> str:
    """Text-node content: `&`, `<` and `>` escaped (so `]]>` is harmless too)."""
    return escape_html(xml_safe(value), quote=False)


def escape_attribute(value: str) -> str:
    """A double-quoted attribute value's content."""
    if _ATTRIBUTE_UNSAFE.search(value) is None:
        return value
    value = xml_safe(value)
    return _ATTRIBUTE_SPECIAL.sub(lambda m: _ATTRIBUTE_ESCAPES[m.group(0)], value)


_cached_escape_attribute = lru_cache(maxsize=4096)(escape_attribute)
"""Class names, colours and URLs repeat on every arrow: escape each once."""


def format_number(value: float) -> str:
    """Coordinates with at most two decimals and no trailing zeros (smaller output)."""
    if value.is_integer():
        return str(int(value))
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _attribute_text(value: Any) -> str:
    """An attribute value, escaped; numbers (most values) skip the escaping."""
    kind = type(value)
    if kind is int:
        return str(value)
    if kind is float:
        return format_number(value)
    if kind is bool:
        return "true" if value else "false"
    return _cached_escape_attribute(str(value))


_CHECKED_NAMES: set[str] = set()


def _checked_name(name: str) -> str:
    if name not in _CHECKED_NAMES:
        if not _NAME.match(name):
            raise ValueError(f"not an XML name: {name!r}")
        _CHECKED_NAMES.add(name)
    return name


class Element:
    """One SVG element: a tag, attributes (None values are left out), text and children.

    Text is written before the children, which is all the diagrams need (a <text> holds
    either a string or <tspan>s, a <title> a string).
    """

    __slots__ = ("attrs", "children", "tag", "text")

    def __init__(
        self,
        tag: str,
        attrs: Mapping[str, Any] | None = None,
        *,
        text: str | None = None,
    ) -> None:
        self.tag = _checked_name(tag)
        self.attrs: dict[str, Any] = {}
        if attrs:
            if not attrs.keys() <= _CHECKED_NAMES:
                for name in attrs:
                    _checked_name(name)
            self.attrs = {k: v for k, v in attrs.items() if v is not None}
        self.text = text
        self.children: list[Element] = []

    def add(
        self,
        child: Element | str,
        attrs: Mapping[str, Any] | None = None,
        *,
        text: str | None = None,
    ) -> Element:
        """Append a child (an Element, or a tag to build one from) and return it."""
        element = child if isinstance(child, Element) else Element(child, attrs, text=text)
        self.children.append(element)
        return element

    def iter(self) -> Iterator[Element]:
        """This element and all its descendants, depth first."""
        stack = [self]
        while stack:
            element = stack.pop()
            yield element
            stack.extend(reversed(element.children))

    def count(self) -> int:
        """How many elements the serialised document will hold."""
        return sum(1 for _ in self.iter())

    def to_string(self) -> str:
        parts: list[str] = []
        self._write(parts)
        return "".join(parts)

    def _write(self, parts: list[str]) -> None:
        attributes = "".join(
            [f' {name}="{_attribute_text(value)}"' for name, value in self.attrs.items()]
        )
        if self.text is None and not self.children:
            parts.append(f"<{self.tag}{attributes}/>")
            return
        parts.append(f"<{self.tag}{attributes}>")
        if self.text:
            parts.append(escape_text(self.text))
        for child in self.children:
            child._write(parts)
        parts.append(f"</{self.tag}>")


def svg_root(width: float, height: float, attrs: Mapping[str, Any] | None = None) -> Element:
    """An <svg> root with the namespace, a matching viewBox and the given size."""
    base = {
        "xmlns": SVG_NAMESPACE,
        "width": width,
        "height": height,
        "viewBox": f"0 0 {format_number(width)} {format_number(height)}",
    }
    return Element("svg", {**base, **(attrs or {})})


def truncate(value: str, limit: int) -> str:
    """At most `limit` characters, ending in an ellipsis when cut; whitespace collapsed."""
    value = " ".join(value.split())
    if len(value) <= limit:
        return value
    return value[: max(1, limit - 1)] + "…"
