"""Bedrock's rows of bench/proxy.py's forward section: the real boto3 `bedrock-runtime`
client, signed calls to the TLS stand-in (tests/capture/bedrock_standin.py, which checks
every SigV4 signature), made in turn straight to it (`endpoint_url`) and to AWS's own
host through the forward proxy (mitmdump, then the reverse proxy's Bedrock route).

Converse and InvokeModel: latency; ConverseStream and InvokeModelWithResponseStream (an
Anthropic Messages stream in `chunk` frames, Claude Code's call): time to the first event
frame, the streamed figure the issue's target names. Both ways pay boto3's own signing
and parsing, so the difference is the proxies'.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from bench.proxy import row, verdict
from tests.capture.bedrock_standin import (
    ACCESS_KEY,
    MODEL,
    SECRET_KEY,
    SESSION_TOKEN,
    BedrockStandIn,
)
from traces.capture.forward_proxy import ForwardProxyUnavailable, forward_proxy

MESSAGES = [{"role": "user", "content": [{"text": "What is the weather in New York?"}]}]


def client(**extra: Any) -> Any:
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        aws_session_token=SESSION_TOKEN,
        **extra,
    )


INVOKE_BODY = json.dumps(
    {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "What is the weather in New York?"}],
    }
)
KINDS = {
    "converse": "Converse latency",
    "converse-stream": "ConverseStream first event",
    "invoke": "InvokeModel latency",
    "invoke-stream": "InvokeModelWithResponseStream first event",
}


def one(bedrock: Any, kind: str) -> float:
    """ms to the answer (Converse, InvokeModel) or to its first event (the streams)."""
    started = time.perf_counter()
    if kind == "converse":
        bedrock.converse(modelId=MODEL, messages=MESSAGES)
        return (time.perf_counter() - started) * 1000
    if kind == "invoke":
        bedrock.invoke_model(modelId=MODEL, body=INVOKE_BODY)["body"].read()
        return (time.perf_counter() - started) * 1000
    if kind == "converse-stream":
        events = iter(bedrock.converse_stream(modelId=MODEL, messages=MESSAGES)["stream"])
    else:
        answer = bedrock.invoke_model_with_response_stream(modelId=MODEL, body=INVOKE_BODY)
        events = iter(answer["body"])
    next(events)
    elapsed = (time.perf_counter() - started) * 1000
    for _ in events:  # the rest read, so the connection goes back to the pool
        pass
    return elapsed


def bedrock_section(base: str, standin: BedrockStandIn, folder: Path, calls: int, gap: float):
    """Bedrock's forward rows and verdicts (none without mitmdump)."""
    print(f"\nBedrock (boto3, SigV4-signed): {calls} calls each, direct / forward in turn; ms")
    verdicts = []
    retries = Config(retries={"max_attempts": 1, "mode": "standard"})
    try:
        with forward_proxy(
            server=base, session="bench-bedrock", data_dir=folder / "forward"
        ) as proxy:
            direct = client(endpoint_url=standin.base, verify=str(standin.cert), config=retries)
            forward = client(
                verify=str(proxy.bundle), config=retries.merge(Config(proxies={"https": proxy.url}))
            )
            for kind, label in KINDS.items():
                for _ in range(5):
                    one(direct, kind)
                    one(forward, kind)
                found: tuple[list[float], list[float]] = ([], [])
                for _ in range(calls):
                    found[0].append(one(direct, kind))
                    found[1].append(one(forward, kind))
                    time.sleep(gap)
                print(row(f"Bedrock forward vs direct: {label}", *found))
                verdicts.append(verdict(f"Bedrock forward {label}", *found))
    except ForwardProxyUnavailable as exc:
        print(f"  not measured: {exc}")
    assert all(call.signature_valid for call in standin.calls), "a signature did not hold"
    return verdicts
