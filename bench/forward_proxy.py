"""The forward proxy's rows of bench/proxy.py (`--forward-only` for these alone).

The same Messages call made three ways in turn, on one machine in one run: straight to the
fake upstream, through the reverse proxy, and to https://api.anthropic.com through the
forward proxy (mitmdump from its own environment, TLS to the local CA, then the reverse
proxy). Wall-clock figures on a loaded machine count its scheduling three processes
deep; mitmdump's CPU time per call, read from /proc, does not.
"""

from __future__ import annotations

import os
import ssl
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

from bench.proxy import row, timed, verdict
from traces.capture.forward_proxy import ADDON, ForwardProxyUnavailable, forward_proxy

ADDON_IN_TREE = Path("traces/capture/forward_addon.py")


def process_cpu(pid: int) -> float | None:
    """CPU seconds used so far by a process (None off Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def forward_overhead(
    base: str,
    upstream: str,
    folder: Path,
    calls: int,
    stream: bool,
    gap: float,
    before: tuple[str, Path] | None = None,
) -> tuple[dict[str, tuple[list, list]], dict[str, float | None]]:
    """(first byte, total) ms of direct, reverse-proxied and forward-proxied calls, in turn
    (the forward client trusts the local CA and calls the vendor's own host), by name; and
    each mitmdump's CPU ms per forwarded call, which the machine's other load does not
    change. `before`: (the previous tree's daphne, that tree): its forward proxy (its
    addon, to its daphne) is measured in the same rounds, as "forward before"."""
    kind = "stream" if stream else "plain"
    direct_url = f"{upstream}/v1/messages"
    reverse_url = f"{base}/proxy/s/bench-forward-{kind}/anthropic/v1/messages"
    vendor_url = "https://api.anthropic.com/v1/messages"
    with ExitStack() as stack:
        client = stack.enter_context(httpx.Client(timeout=60, trust_env=False))
        proxies = {}
        servers = {"forward": (base, ADDON, False), "forward one hop": (base, ADDON, True)}
        if before is not None:
            servers = {"forward before": (before[0], before[1] / ADDON_IN_TREE, False), **servers}
        for name, (server, addon, one_hop) in servers.items():
            proxy = stack.enter_context(
                forward_proxy(
                    server=server,
                    session=f"bench-forward-{kind}",
                    data_dir=folder / name.replace(" ", "-"),
                    addon=addon,
                    one_hop=one_hop,
                )
            )
            trust = ssl.create_default_context(cafile=str(proxy.bundle))
            forward = stack.enter_context(
                httpx.Client(timeout=60, proxy=proxy.url, verify=trust, trust_env=False)
            )
            proxies[name] = (proxy, forward)
        ways = [("direct", client, direct_url), ("reverse", client, reverse_url)]
        ways += [(name, forward, vendor_url) for name, (_, forward) in proxies.items()]
        for _ in range(5):
            for _, who, url in ways:
                timed(who, url, stream)
        found: dict[str, tuple[list, list]] = {name: ([], []) for name, _, _ in ways}
        cpu_before = {name: process_cpu(p.process.pid) for name, (p, _) in proxies.items()}
        for _ in range(calls):
            for name, who, url in ways:
                first, total, _ = timed(who, url, stream)
                found[name][0].append(first)
                found[name][1].append(total)
            time.sleep(gap)
        cpu: dict[str, float | None] = {}
        for name, (proxy, _) in proxies.items():
            after, start = process_cpu(proxy.process.pid), cpu_before[name]
            cpu[name] = None if after is None or start is None else (after - start) * 1000 / calls
    return found, cpu


def forward_section(
    base: str,
    upstream: str,
    folder: Path,
    calls: int,
    gap: float,
    before: tuple[str, Path] | None = None,
) -> list:
    """The forward proxy's rows and verdicts (none without mitmdump); with `before`, the
    previous tree's forward proxy in the same rounds."""
    print(f"\nforward proxy: {calls} calls each, direct / reverse / forward in turn, ", end="")
    print(f"{gap * 1000:.0f} ms apart; ms p50 / p95")
    verdicts = []
    try:
        for stream in (False, True):
            found, cpu = forward_overhead(base, upstream, folder, calls, stream, gap, before)
            pick = 0 if stream else 1
            direct, reverse = found["direct"][pick], found["reverse"][pick]
            label = "first SSE byte" if stream else "latency"
            for name in (n for n in found if n.startswith("forward")):
                forward = found[name][pick]
                print(row(f"{name} vs direct: {label}", direct, forward))
                print(row(f"{name} vs reverse: {label}", reverse, forward))
                if cpu.get(name) is not None:
                    print(f"  mitmdump CPU per call ({name}, {label}): {cpu[name]:.2f} ms")
                verdicts.append(verdict(f"{name} {label}", direct, forward))
            print(row(f"reverse vs direct: {label}", direct, reverse))
    except ForwardProxyUnavailable as exc:
        print(f"  not measured: {exc}")
    return verdicts
