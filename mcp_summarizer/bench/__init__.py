"""Benchmarks, run by hand as modules from the project folder: `python -m bench.NAME`
(so they import the test stand-ins from `tests.support`); results in bench/README.md."""
