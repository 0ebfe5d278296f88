"""Rule tests: hand-written loops per rule, the corpus, and the rule documentation."""
