"""`vnetbench monitor`: campaigns run on a schedule for days (issue 16).

One monitored campaign is one campaign in the store; run n is repetition n of its measurements, so
its time series is one campaign. Modules: schedule (when), runs (which steps run n measures and
which run is next, from the store), locks (perfSONAR's one-throughput-test-at-a-time rule), alerts
(rules, episodes, webhook), metrics (Prometheus), web (/metrics, /health, /api/alerts next to the
dashboard), service (the loop, restart-safe, SIGTERM), cli (the command).
"""
