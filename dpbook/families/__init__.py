"""The mechanism families, one module each; every one fulfils the contract of :class:`dpbook.Mechanism`."""
