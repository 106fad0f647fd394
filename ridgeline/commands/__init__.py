"""The ``ridgeline`` commands, one module each, in the shape the rules have.

- ``options.py``: option sets shared by several commands (``RULE_OPTIONS``, ``STRICT_OPTION``,
  ``TELEMETRY_INPUT_OPTIONS``, ``PROMETHEUS_OPTIONS`` ...), declared once;
- ``common.py``: helpers the commands share (``_emit``, ``_tell``, ``_say``, ``_config``,
  ``_parse_*``, standard input, relabelling, ``_render_analyze``);
- ``analyze.py``, ``roofline.py``, ``report.py``, ``telemetry.py``, ``diff.py``, ``gpus.py``,
  ``rules.py``, ``demo.py``, ``check.py``: one click command each, declared with
  ``@click.command`` and registered on the group by ``ridgeline/cli.py``.

Layering: commands may import every layer below (parsers, analyzer, rules, render, pipeline,
sources); nothing below imports ``ridgeline.commands`` or ``ridgeline.cli``, and no command
module imports ``ridgeline.cli`` (the group finds them, not the other way round). Heavy
libraries are imported inside the command bodies so ``ridgeline --help`` stays instant.
"""
