"""The in-memory channel layer's cost per broadcast: one trace's batch to 200 viewers.

bench/live.py times the whole path through daphne; on a loaded machine its figures are
the machine's. This one times the layer alone, in this process, as CPU time (steadier
on a shared machine than wall time): `--viewers` channels in one group, each waiting in
`receive` as a viewer's consumer does, then `--batches` group sends of one batch's
NDJSON text (`--events` events of about 600 bytes) and every viewer receiving each.
Channels' own `InMemoryChannelLayer` is the baseline, measured in the same run, the two
taking turns `--rounds` times; medians are printed, and the ratio.

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/live_fanout.py [--viewers 200]
        [--batches 50] [--events 250] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import os  # noqa: E402
import tempfile  # noqa: E402

import django  # noqa: E402
from channels.layers import InMemoryChannelLayer  # noqa: E402

# traces.live imports the models: settings on a throwaway database (never opened here).
FOLDER = tempfile.mkdtemp(prefix="live-fanout-")
os.environ.update(
    DJANGO_SETTINGS_MODULE="inspector.settings",
    DATABASE_URL=f"sqlite:///{FOLDER}/unused.sqlite3",
    INSPECTOR_DATA_DIR=f"{FOLDER}/data",
    REDIS_URL="",
)
django.setup()

from traces.live.memory_layer import FanOutMemoryLayer  # noqa: E402


async def fan_out(layer: InMemoryChannelLayer, viewers: int, batches: int, text: str) -> float:
    """CPU seconds for `batches` group sends and every viewer's receive of each."""
    channels = [await layer.new_channel() for _ in range(viewers)]
    for channel in channels:
        await layer.group_add("trace.bench", channel)
    got = [0] * viewers

    async def viewer(position: int, channel: str) -> None:
        while got[position] < batches:
            await layer.receive(channel)
            got[position] += 1

    listeners = [asyncio.create_task(viewer(i, c)) for i, c in enumerate(channels)]
    await asyncio.sleep(0)
    started = time.process_time()
    for seq in range(batches):
        message = {"type": "trace.events", "first": seq, "last": seq, "text": text}
        await layer.group_send("trace.bench", message)
        await asyncio.sleep(0)  # the viewers take it, as the event loop would run them
    await asyncio.gather(*listeners)
    return time.process_time() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--viewers", type=int, default=200)
    parser.add_argument("--batches", type=int, default=50)
    parser.add_argument("--events", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    event = '{"type":"call","seq":1,"data":{"index":1,"text":"' + "x" * 560 + '"}}'
    text = "\n".join([event] * args.events)
    layers = {
        "channels' InMemoryChannelLayer": InMemoryChannelLayer,
        "FanOutMemoryLayer": FanOutMemoryLayer,
    }
    seconds: dict[str, list[float]] = {name: [] for name in layers}
    for _ in range(args.rounds):
        for name, kind in layers.items():
            layer = kind(capacity=args.batches + 1)
            seconds[name].append(asyncio.run(fan_out(layer, args.viewers, args.batches, text)))
    print(
        f"{args.batches} broadcasts of {len(text) / 1000:.0f} kB to {args.viewers} viewers, "
        f"CPU time, median of {args.rounds} rounds (the machine is shared: CPU time, not wall)"
    )
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    per = args.batches * args.viewers
    for name, value in medians.items():
        print(
            f"  {name:32} {value * 1000:8.1f} ms   {value / per * 1e6:6.1f} µs per viewer-message"
        )
    old, new = medians.values()
    print(f"  ratio FanOutMemoryLayer / channels' own: {new / old:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
