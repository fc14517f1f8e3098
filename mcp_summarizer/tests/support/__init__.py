"""The stand-ins the tests and the benchmarks share: the test LLM, a local web site, a Redis
server, markdown strategies, the server launcher and the system packages some tests need."""
