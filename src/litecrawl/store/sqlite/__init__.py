"""The SQLite backend: one file holds frontier, hosts, index, vectors and run records."""
