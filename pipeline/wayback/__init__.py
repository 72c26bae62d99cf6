"""Access to web archives: the live Wayback Machine or a local pywb serving WARC files."""
