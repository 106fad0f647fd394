"""RL9xx: rules on the data itself: missing counters, roofs from the datasheet, clocks, values above
a roof (one rule per module)."""
