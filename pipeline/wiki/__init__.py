"""Wikipedia paragraphs from a CirrusSearch dump or the offline vital-article extracts."""
