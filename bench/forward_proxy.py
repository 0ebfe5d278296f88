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
from pathlib import Path

import httpx

from bench.proxy import row, timed, verdict
from traces.capture.forward_proxy import ForwardProxyUnavailable, forward_proxy


def process_cpu(pid: int) -> float | None:
    """CPU seconds used so far by a process (None off Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def forward_overhead(
    base: str, upstream: str, folder: Path, calls: int, stream: bool, gap: float
) -> tuple[tuple[list, ...], float | None]:
    """(first byte, total) ms of direct, reverse-proxied and forward-proxied calls, in turn
    (the forward client trusts the local CA and calls the vendor's own host); and
    mitmdump's CPU ms per forwarded call, which the machine's other load does not change."""
    kind = "stream" if stream else "plain"
    direct_url = f"{upstream}/v1/messages"
    reverse_url = f"{base}/proxy/s/bench-forward-{kind}/anthropic/v1/messages"
    vendor_url = "https://api.anthropic.com/v1/messages"
    with forward_proxy(
        server=base, session=f"bench-forward-{kind}", data_dir=folder / "forward"
    ) as proxy:
        trust = ssl.create_default_context(cafile=str(proxy.bundle))
        with (
            httpx.Client(timeout=60, trust_env=False) as client,
            httpx.Client(timeout=60, proxy=proxy.url, verify=trust, trust_env=False) as forward,
        ):
            for _ in range(5):
                timed(client, direct_url, stream)
                timed(client, reverse_url, stream)
                timed(forward, vendor_url, stream)
            found: tuple[list, ...] = ([], [], [], [], [], [])
            cpu_before = process_cpu(proxy.process.pid)
            for _ in range(calls):
                for index, (who, url) in enumerate(
                    ((client, direct_url), (client, reverse_url), (forward, vendor_url))
                ):
                    first, total, _ = timed(who, url, stream)
                    found[2 * index].append(first)
                    found[2 * index + 1].append(total)
                time.sleep(gap)
            cpu_after = process_cpu(proxy.process.pid)
    cpu = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    return found, None if cpu is None else cpu * 1000 / calls


def forward_section(base: str, upstream: str, folder: Path, calls: int, gap: float) -> list:
    """The forward proxy's rows and verdicts (none without mitmdump)."""
    print(f"\nforward proxy: {calls} calls each, direct / reverse / forward in turn, ", end="")
    print(f"{gap * 1000:.0f} ms apart; ms p50 / p95")
    verdicts = []
    try:
        for stream in (False, True):
            found, cpu = forward_overhead(base, upstream, folder, calls, stream, gap)
            d_first, d_total, r_first, r_total, f_first, f_total = found
            direct, reverse, forward = (
                (d_first, r_first, f_first) if stream else (d_total, r_total, f_total)
            )
            label = "first SSE byte" if stream else "latency"
            print(row(f"forward vs direct: {label}", direct, forward))
            print(row(f"reverse vs direct: {label}", direct, reverse))
            print(row(f"forward vs reverse: {label}", reverse, forward))
            if cpu is not None:
                print(f"  mitmdump CPU per forwarded call ({label}): {cpu:.2f} ms")
            verdicts.append(verdict(f"forward {label}", direct, forward))
            verdicts.append(verdict(f"forward hop {label}", reverse, forward))
    except ForwardProxyUnavailable as exc:
        print(f"  not measured: {exc}")
    return verdicts
