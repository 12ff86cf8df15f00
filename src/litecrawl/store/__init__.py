"""Storage backends: one package per database, the same names on each side."""
