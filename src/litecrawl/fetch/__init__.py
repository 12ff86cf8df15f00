"""Fetchers: plain HTTP (aiohttp) and rendering (Playwright)."""
