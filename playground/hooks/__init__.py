"""Where the playground meets other apps without importing them: gate rules on labels
(`gates`, a registry `changes` fills), and the playground's entries in other apps' registries
(`references` for textstore_gc, `related` for the question page)."""
