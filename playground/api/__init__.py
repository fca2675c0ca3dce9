"""Playground HTTP API (docs/api.md), one module per concept."""
