"""litecrawl."""
