"""Offline lint of the text a server gives the model (docs/findings.md, "Lint").

A layer beside `check`: it reads what a probe kept (the snapshot and the listings) and imports
only lower layers (client, safety, findings). Never a network call, never a model: the rules are
data (`rules.py`), each a code, a predicate, a severity and the reason it exists.
"""
