"""The version tree: its layout in lanes and rows (`layout`), its markup (`markup`), and the
badges other apps put beside its versions (`badges`, a registry)."""
