"""Review desk HTTP API (DESIGN.md §8), one module per concept."""
