"""The playground's pages, a module per concept: prompts, versions, labels, sharing, and the
public pages a share link opens (common.py: what they share). Runs have theirs in
playground/runs/views.py."""
