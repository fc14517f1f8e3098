"""What the service needs beyond its own process and whether it answers: each Redis
connection's outages (`redis_guard`, on deadlines that measure Redis rather than this
process's busy event loop: `loop_clock`), and what /health and /metrics say of them
(`dependencies`)."""
