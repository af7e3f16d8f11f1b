"""The plan bench's simulated world and policies (``tests/benchmarks/bench_plan.py``).

:mod:`.world` draws the sites and their change events, :mod:`.server` serves them on
loopback, :mod:`.policies` holds the fetch model and the four baselines,
:mod:`.auditor_policy` drives ``auditor.plan`` / ``auditor.record_fetches`` with weekly
audits, and :mod:`.measure` computes freshness and calibration.
"""
