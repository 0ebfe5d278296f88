"""Who may do what: per-endpoint rules, cached decisions, cross-site guards, rate limits."""
