"""The fleet job: telemetry reduced to windows (telemetry, partitions, slices), the fleet ranking
(summary), per-workload groups (groups), stragglers, health evidence and clock events (health,
throttle)."""
