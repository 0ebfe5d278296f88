"""The product's brain: pure Python, no Django. One folder per stage of the data's path.

`reading/` (bytes -> exchanges), `analysis/` (exchanges -> a trace: loops, tool runs,
accounting, lint, what-if), `outputs/` (the trace -> report, exports, drawings). The
modules at this level are the shared base every stage uses: the domain model (`model`),
the report's types (`report_types`), lenient JSON readers (`coerce`), one formatter per
quantity (`formatting`), stored messages, labels and the GC pause. An import-linter
`layers` contract keeps the order: outputs above analysis above reading above the base.
"""
