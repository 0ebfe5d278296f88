"""Recording without a file: the recording proxy, its socket relay, and the OTLP receiver."""
