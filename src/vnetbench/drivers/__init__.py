"""Tool drivers: build a tool's command line and parse its output — nothing else."""
