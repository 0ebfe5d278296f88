"""Loop lint: one module per rule; `registry.run_rules` applies them to a trace."""
