"""The frontier's policies that are not storage (what a lost claim means: :mod:`.lost`); the
frontier's storage is :mod:`litecrawl.store.frontier`, opened by
:func:`litecrawl.store.backends.open_frontier`."""
