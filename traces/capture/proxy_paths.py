"""Wrong proxy URLs explained: a doubled or missing API version, or another vendor's path.

The SDKs join their base URL and the endpoint differently: the OpenAI SDKs (and the AI
SDK's providers) want `/v1` in the base URL, the Anthropic SDK adds `/v1` itself, the
Gemini SDKs add their version (`/v1beta`). A base URL set the other way gives
`/proxy/openai/v1/v1/chat/completions` or `/proxy/anthropic/messages`, which the vendor
would answer with a bare 404; pointing one vendor's SDK at the other's route gives
`/proxy/openai/v1/messages`. OpenRouter takes OpenAI's shapes under its own `/api/v1`
(`/proxy/openrouter/v1/…` misses the `api`). `misdirected` names the URL to use instead,
and the proxy answers it in the error shape of the SDK that made the call
(`traces.capture.vendor_errors`: the other vendor's, when the path is another vendor's)
without calling the upstream.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

VENDORS = ("anthropic", "openai", "gemini", "openrouter", "bedrock")


@dataclass(frozen=True)
class Misdirection:
    """A URL that cannot be the one meant: whose SDK sent it (its error shape) and why."""

    vendor: str
    message: str


@dataclass(frozen=True)
class Route:
    label: str
    base: str
    """The base URL to set, under `/proxy/` (or `/proxy/s/<session>/`)."""
    versions: tuple[str, ...]
    adds: str
    """What the vendor's SDK puts between the base URL and the endpoint."""
    fixed: str = ""
    """The path the route's URL pattern holds before the version (OpenRouter's `api/`)
    and, for the OpenAI-shaped vendors, the version itself: what `relay` takes off."""
    speaks: str = ""
    """The vendor whose endpoints this one's API has (OpenRouter: OpenAI's); '' itself."""

    @property
    def dialect(self) -> str:
        return self.speaks or self.label.lower()


ROUTES = MappingProxyType(
    {
        "anthropic": Route("Anthropic", "anthropic", ("v1",), "/v1"),
        "openai": Route("OpenAI", "openai/v1", ("v1",), "", "v1/"),
        "gemini": Route("Gemini", "gemini", ("v1beta", "v1", "v1alpha"), "its API version"),
        "openrouter": Route("OpenRouter", "openrouter/api/v1", ("v1",), "", "api/v1/", "openai"),
        # Reached through the forward proxy only (its calls are signed for AWS's host).
        "bedrock": Route("Bedrock", "bedrock/<region>", (), "nothing"),
    }
)

ANTHROPIC_ENDPOINTS = ("messages", "complete")
OPENAI_ENDPOINTS = ("chat/completions", "responses", "completions", "embeddings")


def owner_of(endpoint: str) -> str | None:
    """The vendor whose API has this endpoint (the path after the version), if only one
    has it; None when it is shared (`models`) or unknown."""
    if endpoint.startswith(ANTHROPIC_ENDPOINTS) and not endpoint.startswith("completions"):
        return "anthropic"
    if endpoint.startswith(OPENAI_ENDPOINTS):
        return "openai"
    head = endpoint.split("/", 2)
    if len(head) >= 2 and head[0] in ("models", "tunedModels") and ":" in head[1]:
        return "gemini"
    return None


def misdirected(vendor: str, path: str, prefix: str = "/proxy/") -> Misdirection | None:
    """Why this proxied path cannot be the one meant, and the URL to use; None when it
    may be right. `path` follows `/proxy/<vendor>/` (for OpenAI: including its `v1/`).
    Bedrock's paths are the forward proxy's own (`capture.bedrock_route` checks them)."""
    if vendor == "bedrock":
        return None
    route = ROUTES[vendor]
    parts = [p for p in path.split("/") if p]
    head = [p for p in route.fixed.split("/") if p and p not in route.versions]
    if parts[: len(head)] != head:
        return Misdirection(
            vendor,
            f"{prefix}{vendor}/{path} is not under {prefix}{route.base}: set the "
            f"{route.label} base URL to {prefix}{route.base}.",
        )
    parts = parts[len(head) :]
    versions = []
    while parts and parts[0] in route.versions:
        versions.append(parts.pop(0))
    endpoint = "/".join(parts)
    owner = owner_of(endpoint)
    if owner is not None and owner != route.dialect:
        other = ROUTES[owner]
        version = other.versions[0]
        return Misdirection(
            owner,
            f"{prefix}{vendor}/{path} is a path of the {other.label} API, and this route is "
            f"{route.label}'s: point the {other.label} SDK at the base URL "
            f"{prefix}{other.base} (this call would be {prefix}{owner}/{version}/{endpoint}).",
        )
    if len(versions) == 1 or (vendor == "gemini" and parts[:1] == ["upload"]):
        return None
    version = versions[0] if versions else route.versions[0]
    fixed = f"{prefix}{vendor}/{'/'.join([*head, version])}/{endpoint}"
    problem = f"/{version} twice" if len(versions) > 1 else f"no /{version}"
    adds = f" (the SDK adds {route.adds} itself)" if route.adds else f" (with /{version})"
    return Misdirection(
        vendor,
        f"{prefix}{vendor}/{path} has {problem}: set the {route.label} base URL to "
        f"{prefix}{route.base}{adds}, and this call goes to {fixed}.",
    )


def unknown_path(rest: str) -> tuple[str | None, str]:
    """The vendor a path under `/proxy/` that no route took seems meant for (None: none
    named), and what to say: the URL to use, or the routes there are."""
    parts = rest.split("/")
    prefix = "/proxy/"
    if len(parts) >= 3 and parts[0] == "s":
        prefix = f"/proxy/s/{parts[1]}/"
        parts = parts[2:]
    vendor = parts[0] if parts and parts[0] in VENDORS else None
    if vendor is not None:
        hint = misdirected(vendor, "/".join(parts[1:]), prefix)
        if hint is not None:
            return hint.vendor, hint.message
    return vendor, (
        f"Unknown proxy path {'/proxy/' + rest}. Point the SDKs at /proxy/anthropic "
        "(Anthropic Messages), /proxy/openai/v1 (OpenAI Chat Completions and Responses), "
        "/proxy/gemini (Gemini generateContent) or /proxy/openrouter/api/v1 (OpenRouter); "
        "name a session with /proxy/s/<session>/anthropic, /proxy/s/<session>/openai/v1, "
        "/proxy/s/<session>/gemini or /proxy/s/<session>/openrouter/api/v1."
    )
