"""Crawling strategies written the way Frontera's users write them (only imports changed)."""
