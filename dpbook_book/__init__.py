"""dpbook_book: the textbook's own support code, beside the :mod:`dpbook` library.

The chapters import the library, :mod:`dpbook`, for every formula, sampler and audit; this package holds
what belongs to the book rather than to the library:

=================  ==========================================================================
``widgets``        the chapters' interactive views (one module per part of the book)
``plotting``       the shared figure style, one colour per mechanism
``choosing``       Chapter 13's comparison of every mechanism at the same audited ε
``peers``          Part IV's adapters to IBM's diffprivlib, float forensics (imported when used)
``exercises``      the exercises read from the chapters; ``answer`` records a solution's value
``classroom``      the checker for the exercises' numeric answers (never shows the answer)
``data``           the worked examples and study settings of the chapters
``tables``         the chapters' printed tables: ``table(rows, columns, formats, caption)``
=================  ==========================================================================

Arrows point one way: this package imports :mod:`dpbook`; :mod:`dpbook` never imports this one.
Its extra dependencies are the ``book`` extra (matplotlib, ipywidgets) and, for Part IV, the ``peers``
extra (diffprivlib, OpenDP).
"""
