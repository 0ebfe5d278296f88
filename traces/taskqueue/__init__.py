"""The task queue's wiring to Huey: `enqueue` decides where a task runs (Redis workers,
the embedded consumer inside this process, or inline in tests) and `wake` wakes the
embedded consumer's workers when a task is queued instead of letting them poll. The
tasks themselves stay in traces/tasks.py, where Huey's Django integration finds them."""
