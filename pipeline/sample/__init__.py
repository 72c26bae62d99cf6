"""Offline stand-ins for the Wayback Machine and a Wikipedia dump (the ``sample`` stage): ``build`` writes
them, ``config`` is their params section. Kept free of imports: the params schema reads ``config``, and every
stage reads the schema."""
