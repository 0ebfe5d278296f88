"""The one rule for what in a trace is a credential: names that hold one, shapes that are one.

Two places apply it: `redact` replaces credentials in the bytes of an original before a
shared server stores it, and `credentials` masks them in what a page shows. They used to
keep a list each and disagreed (a header the page masked stayed in the stored original),
so both now ask this module.

*Names* hold a secret in three ways:
- a few field names are a credential wherever they appear (`SECRET_FIELDS`: `api_key`,
  `client_secret`, `password`, `Authorization`, `x-api-key`…), spelt with `-`, `_` or in
  camelCase;
- inside a header container (a key ending in `header`/`headers`) or an attribute container
  (`attributes`…), and for a `{name, value}` / `{key, value}` pair, a name is secret when
  it holds a word that marks one (`SECRET_WORDS`: key, auth, token, secret, cookie…);
  header-style names (with a `-`, as only HTTP headers are spelt) and OpenTelemetry
  `http.request.header.<name>` attributes are judged by that pattern wherever they are;
- a query parameter of a URL, by the same pattern (`?key=`, `?api_key=`, `?X-Amz-Signature=`).
Counters and identifiers are not secrets though their names hold such a word: `tokens`,
`token_count`, `session_id`/`session.id` stay, so readers still count and group by them.

*Shapes* are secret wherever they appear, even in message text (`SHAPES`): provider keys
(`sk-`, `sk_live_`, `AKIA…`, `ghp_`, `AIza…`, `xox?-`, `hf_`, `glpat-`), this product's own
`li_` tokens, `Bearer`/`Basic` credentials, JWTs, PEM private keys, an AWS secret key after
its name, and `Authorization: …`-style header lines or `password=…` settings in text.
Every shape needs enough of a key's own length or prefix that ordinary words, hex digests
and UUIDs never match it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from traces.core.patterns import lazy_compile
from traces.core.records import dataclass

REDACTED = b"[redacted]"
"""What a credential's value becomes in a stored original."""
SECRET_WORDS = lazy_compile(
    r"key|auth|token(?!s|[-_.]?count)|secret|cookie|session(?![-_.]?id)|signature|"
    r"password|passwd|credential|^sig$|^code$|x-amz-security",
    re.IGNORECASE,
)
"""A word in a header, attribute or query parameter's name that marks a credential."""
ACCOUNT_HEADERS = frozenset({"openai-organization", "openai-project"})
"""Not secret by name, but they identify the account."""
HEADER_CONTAINERS = re.compile(r"headers?$", re.IGNORECASE)
ATTRIBUTE_CONTAINERS = frozenset({"attributes", "span_attributes", "resource_attributes"})
OTEL_HEADER = re.compile(r"^http\.(request|response)\.header\.", re.IGNORECASE)
HEADER_STYLE = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+")
"""How HTTP header names are spelt (`x-custom-token`); file paths and package names
(`src/session-discovery.ts`, `@aws-sdk/credential-providers`) are not."""
SECRET_FIELDS = frozenset(
    {
        "authorization",
        "proxyauthorization",
        "xapikey",
        "apikey",
        "xgoogapikey",
        "cookie",
        "setcookie",
        "openaiorganization",
        "openaiproject",
        "xamzsecuritytoken",
        "xauthtoken",
        "xlitellmapikey",
        "privatetoken",
        "ocpapimsubscriptionkey",
        "xloopinspectortoken",
        "clientsecret",
        "password",
        "passwd",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "authtoken",
        "apitoken",
        "bearertoken",
        "secretkey",
        "privatekey",
        "secretaccesskey",
        "awssecretaccesskey",
        "sessiontoken",
        "awssessiontoken",
    }
)
"""Field names that hold a credential wherever they appear, squashed (`squash`)."""
FIELD_WORDS = "key|auth|token|secret|cookie|passw|credential|organization|project|session|signature"
"""A word every name in `SECRET_FIELDS` or matched by `SECRET_WORDS` holds: the byte
scanner only looks closer at names holding one (a cheap first filter, never the rule)."""


def squash(name: str) -> str:
    """A name without case, `-` or `_`: `x-api-key`, `X_API_KEY` and `xApiKey` are one."""
    return name.lower().replace("-", "").replace("_", "")


NAMES_REMEMBERED = 4096
"""Names whose verdict `secret_name` and `secret_field` remember: a trace repeats the
same few attribute and header keys at every span (an OTLP export of 2,000 spans asked
about 4,000 keys, a dozen distinct; two regex passes each). Only names are kept, never
values, and the verdict is a pure function of the name."""


def secret_name(name: Any) -> bool:
    """Whether a header, attribute or query parameter of this name holds a credential."""
    return _secret_name(name if type(name) is str else str(name))


@lru_cache(maxsize=NAMES_REMEMBERED)
def _secret_name(name: str) -> bool:
    text = OTEL_HEADER.sub("", name).lower()
    return (
        text in ACCOUNT_HEADERS or squash(text) in SECRET_FIELDS or bool(SECRET_WORDS.search(text))
    )


def secret_field(name: Any) -> bool:
    """Whether a field of this name holds a credential wherever it appears: a name of
    `SECRET_FIELDS`, a header-style name (`x-custom-token`) or an OTel header attribute
    that `secret_name` marks."""
    return _secret_field(name if type(name) is str else str(name))


@lru_cache(maxsize=NAMES_REMEMBERED)
def _secret_field(text: str) -> bool:
    if squash(text) in SECRET_FIELDS:
        return True
    if OTEL_HEADER.match(text) or HEADER_STYLE.fullmatch(text):
        return _secret_name(text)
    return False


# -- shapes ------------------------------------------------------------------------------
_B64 = "A-Za-z0-9+/"
_SECRET_HEADER_NAMES = (
    "authorization|proxy-authorization|x-api-key|api-key|x-goog-api-key|x-auth-token|"
    "x-amz-security-token|x-litellm-api-key|private-token|ocp-apim-subscription-key|"
    "x-loop-inspector-token|cookie|set-cookie"
)
_SETTING_NAMES = (
    "password|passwd|client_secret|api_key|apikey|access_token|refresh_token|secret_key|"
    "aws_secret_access_key|aws_session_token"
)
_NOT_DONE = r"(?!\[redacted\]|\[masked\])"


def _words(names: str) -> str:
    """`names` (`a|b|…`) as whole words in any case, spelt so the regex engine can skip
    ahead to their first letters (a pattern opening with a look-behind or a case-blind
    group is tried at every byte: three times slower over a whole file)."""
    words = names.split("|")
    firsts = "".join(sorted({c for word in words for c in (word[0].lower(), word[0].upper())}))
    rests = "|".join(f"(?<={word[0]}){re.escape(word[1:])}" for word in words)
    return rf"[{firsts}](?<![\w-].)(?i:{rests})"


@dataclass(frozen=True, slots=True)
class Shape:
    """One shape of secret. `pattern` may name a `keep` group (text kept before the
    secret, such as the header name) and a `name` group (the label it is counted under).
    A text holds the shape only if it holds one of `hints` (in lowercase where the pattern
    ignores case): a byte scan skips the pattern where none is, as each pattern costs a
    pass over the whole text."""

    label: str
    pattern: str
    hints: tuple[str, ...]

    @property
    def ignores_case(self) -> bool:
        return "(?i" in self.pattern


SHAPES: tuple[Shape, ...] = (
    Shape(
        "PEM private key",
        r"-----BEGIN[A-Z ]{0,40} PRIVATE KEY-----[\s\S]{1,20000}?-----END[A-Z ]{0,40} "
        r"PRIVATE KEY-----",
        ("PRIVATE KEY-----",),
    ),
    Shape(
        "header",
        rf"(?P<keep>(?P<name>{_words(_SECRET_HEADER_NAMES)})[ \t]*:[ \t]*){_NOT_DONE}"
        r"[^\s\"'\\][^\"'\\\n]*",
        ("authorization", "api-key", "-token", "cookie", "subscription-key"),
    ),
    Shape(
        "setting",
        rf"(?P<keep>(?P<name>{_words(_SETTING_NAMES)})[ \t]*[=:][ \t]*){_NOT_DONE}"
        r"[^\s\"'\\,;&)]{4,}",
        ("passw", "client_secret", "api_key", "apikey", "_token", "secret_key"),
    ),
    Shape(
        "AWS secret key",
        r"(?P<keep>[AaSs](?i:(?<=a)ws_?secret_?access_?key|(?<=s)ecret_?access_?key)"
        rf"(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?)[{_B64}]{{40}}(?![{_B64}=])",
        ("access_key", "accesskey"),
    ),
    Shape(
        "bearer token", rf"{_words('bearer')}\s+{_NOT_DONE}[A-Za-z0-9._~+/=-]{{12,}}", ("bearer",)
    ),
    Shape(
        "basic credentials",
        rf"Basic(?<!\wBasic)\s+(?=[{_B64}]*[0-9+/=])[{_B64}]{{8,}}={{0,2}}(?![{_B64}=])",
        ("Basic",),
    ),
    Shape(
        "JWT",
        r"eyJ(?<!\weyJ)[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        ("eyJ",),
    ),
    Shape("sk- API key", r"sk-(?<!\wsk-)[A-Za-z0-9_-]{16,}", ("sk-",)),
    Shape("Stripe key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}", ("k_live_", "k_test_")),
    Shape("Loop Inspector token", r"li_(?<!\wli_)[A-Za-z0-9_-]{32,}", ("li_",)),
    Shape("AWS access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", ("AKIA", "ASIA")),
    Shape(
        "GitHub token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}\b|github_pat_[A-Za-z0-9_]{22,})",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Shape("GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}", ("glpat-",)),
    Shape("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}\b", ("hf_",)),
    Shape("Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b", ("AIza",)),
    Shape("Slack token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}", ("xox",)),
)
"""Checked in this order: a header line is counted by its name before its `Bearer` value."""


def _combined(source: str) -> str:
    """All shapes as one alternation (one pass over the text), each as group `s<i>`,
    with its `keep`/`name` groups renamed `k<i>`/`n<i>`."""
    parts = []
    for index, shape in enumerate(SHAPES):
        body = shape.pattern.replace("(?P<keep>", f"(?P<k{index}>")
        body = body.replace("(?P<name>", f"(?P<n{index}>")
        parts.append(f"(?P<s{index}>{body})")
    return source.join(parts)


SHAPES_TEXT = re.compile(_combined("|"))
"""Every shape in one pattern, for the short texts a page shows (each shape on its own,
in bytes, for whole files: `redact.SHAPE_PATTERNS`, which only a shared server needs)."""


def shape_start(match: re.Match[str]) -> int:
    """Where the secret of a `SHAPES_TEXT` match starts: the `keep` text before it stays."""
    index = int((match.lastgroup or "s0")[1:])
    kept = match.groupdict().get(f"k{index}")
    return match.start() if kept is None else match.end(f"k{index}")
