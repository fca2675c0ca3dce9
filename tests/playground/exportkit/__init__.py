"""Helpers for the export tests: a fake provider server, the case matrix, and runners."""
