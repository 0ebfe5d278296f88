"""Provider message dialects: how each vendor shapes messages, streams and usage."""
