"""Rules: one module per rule (``rlNNN_<slug>.py``), discovered and run by :mod:`ridgeline.rules.engine`.

Import the engine functions from ``ridgeline.rules.engine``: ``all_rules``, ``run_rules``,
``load_config``, ``severity_at_least``. Rules read only normalized columns (see
``ridgeline.analyzer.schema``), never vendor metric names.
"""
