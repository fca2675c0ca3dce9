"""Who may read a prompt and how a reader gets to it: the access rule (`access`), share links
opened from a request (`links`), and the hot read of one version by id or label (`fetch`)."""
