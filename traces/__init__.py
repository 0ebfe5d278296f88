"""The traces app: storage, services and pages around the pure core in traces.core."""
