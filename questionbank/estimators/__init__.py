"""Back-of-envelope estimators for the questions that turn on numbers.

Pure functions over numbers (`batching`, `checkpoint`, `storage`) with seeded, deterministic
simulations; `plots` draws SVG; one `*_panel` module per question ties inputs, presets, formulas
and practice targets together; `registry.ESTIMATORS` lists them by question slug; `page` builds
what a question page shows. Nothing here touches the database.
"""
