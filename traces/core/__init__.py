"""The product's brain: pure Python, no Django. Formats, loop rebuilding, reports."""
