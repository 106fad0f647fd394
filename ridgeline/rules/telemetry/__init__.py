"""RL2xx: rules on telemetry windows and groups (one rule per module; common: shared wording)."""
