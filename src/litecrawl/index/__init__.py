"""The index: documents per URL, resources shared by near-duplicates, full-text search."""
