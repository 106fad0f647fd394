"""RL4xx: rules on timelines and ranks (one rule per module; common: shared wording)."""
