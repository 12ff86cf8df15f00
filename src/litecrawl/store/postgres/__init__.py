"""The PostgreSQL backend: the same tables as the SQLite file, in a server many workers share."""
