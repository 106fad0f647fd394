"""RL1xx: rules on the KERNEL table (one rule per module, discovered by ridgeline.rules.engine)."""
