"""The daily replay bench (``tests/benchmarks/bench_daily.py``): a real site's daily
snapshots read from a data folder (:mod:`.snapshots`), served on loopback and read by the
plan bench's baselines (:mod:`.site`), and auditor's plans driven over them with the
reason of every fetch (:mod:`.auditor_run`).
"""
