"""Benchmarks, run by hand (pytest never collects them); a package so that
``tests/plan`` can import the plan bench's world (:mod:`tests.benchmarks.planbench`)."""
