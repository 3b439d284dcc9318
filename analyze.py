"""Thin entry point: ``python analyze.py DIR [DIR ...]`` (see graphnetz.cli.analyze)."""

from graphnetz.cli.analyze import main

raise SystemExit(main())
