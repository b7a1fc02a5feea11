"""The chapters' printed tables: one small helper that a notebook displays as a real table.

A chapter builds its rows as plain values and lets :func:`table` format and lay them out::

    table([(0.1, 0.0312), (1.0, 0.2154)], columns=("b", "bias"), formats=("g", ".4f"),
          caption="The BIT bias at q = 0.2.")

The result shows as an HTML ``<table>`` in a notebook and on the site, wrapped in a
``<div class="dpbook-table">`` that the site's style lets scroll sideways on a phone; as a Markdown
pipe table where Markdown is rendered (the print edition); and as aligned plain text in a terminal
(``repr``).  Every cell is formatted once, by ``formats``, so the three show the same digits.
"""

from __future__ import annotations

import html
import numbers
import re

__all__ = ["Table", "table"]


def _format(value, spec):
    if callable(spec):
        return str(spec(value))
    if isinstance(value, str):
        return value
    if spec is None:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return str(value)
        if isinstance(value, numbers.Real):
            return f"{value:g}"
        return str(value)
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        # a value that rounds to zero prints as zero, never "-0.0000" ("z", Python 3.11)
        return format(value, _SIGN.sub(r"\g<head>z", spec, count=1))
    return format(value, spec)


#: a format spec up to its sign (``[[fill]align][sign]``), where the "z" option goes
_SIGN = re.compile(r"^(?P<head>(?:.?[<>=^])?[+\- ]?)(?!z)(?=[#0-9.,_a-zA-Z%]|$)")


def _escape_markdown(text):
    """``text`` as literal Markdown (MyST): no emphasis, math, code or column break."""
    for char in "\\`*_$|[]<":
        text = text.replace(char, "\\" + char)
    return text


class Table:
    """A formatted table: ``columns`` (header strings), ``cells`` (rows of strings) and ``caption``.

    Built by :func:`table`; displayed by IPython through ``_repr_html_`` (a ``<table>`` in a
    scrolling ``<div class="dpbook-table">``), ``_repr_markdown_`` and ``__repr__``.
    """

    def __init__(self, columns, cells, caption=None, align=None):
        self.columns = tuple(columns)
        self.cells = tuple(tuple(r) for r in cells)
        self.caption = caption
        self.align = (
            tuple(align) if align is not None else tuple("left" for _ in self.columns)
        )

    def _repr_html_(self):
        esc = html.escape
        parts = ['<div class="dpbook-table"><table>']
        if self.caption:
            parts.append(f"<caption>{esc(self.caption)}</caption>")
        parts.append("<thead><tr>")
        parts += [
            f'<th style="text-align: {a}">{esc(c)}</th>'
            for c, a in zip(self.columns, self.align)
        ]
        parts.append("</tr></thead><tbody>")
        for row in self.cells:
            parts.append(
                "<tr>"
                + "".join(
                    f'<td style="text-align: {a}">{esc(v)}</td>'
                    for v, a in zip(row, self.align)
                )
                + "</tr>"
            )
        parts.append("</tbody></table></div>")
        return "".join(parts)

    def _repr_markdown_(self):
        def line(values):
            return "| " + " | ".join(_escape_markdown(v) for v in values) + " |"

        rule = (
            "|"
            + "|".join(
                ":---:" if a == "center" else "---:" if a == "right" else ":---"
                for a in self.align
            )
            + "|"
        )
        text = "\n".join([line(self.columns), rule] + [line(r) for r in self.cells])
        return f"{text}\n\n{_escape_markdown(self.caption)}" if self.caption else text

    def __repr__(self):
        rows = [self.columns] + list(self.cells)
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.columns))]

        def line(values):
            return "  ".join(
                v.rjust(w) if a == "right" else v.ljust(w)
                for v, w, a in zip(values, widths, self.align)
            ).rstrip()

        out = [line(self.columns), "  ".join("-" * w for w in widths)] + [
            line(r) for r in self.cells
        ]
        return "\n".join(([self.caption] if self.caption else []) + out)


def table(rows, columns, formats=None, caption=None):
    """A table of ``rows`` under the headers ``columns``, each cell formatted by its column's format.

    Parameters
    ----------
    rows : iterable of sequences
        One sequence of values per row, as many as ``columns``.
    columns : sequence of str
        The column headers: a name and, where there is one, a unit.
    formats : sequence, optional
        One format per column: a ``format()`` spec (``".4f"``, ``"+.3e"``), a callable returning
        the cell's text, or None (integers as they are, other numbers with ``"g"``, strings as
        they are).  A string value is shown as it is whatever the spec.
    caption : str, optional
        A sentence shown above the table.

    Returns
    -------
    Table
        Numeric columns are right-aligned, the others left-aligned.

    Examples
    --------
    >>> t = table([("BIT", 0.03125), ("truncated", 0.0625)], columns=("mechanism", "bias"),
    ...           formats=(None, ".4f"))
    >>> print(repr(t))
    mechanism    bias
    ---------  ------
    BIT        0.0312
    truncated  0.0625
    """
    columns = tuple(str(c) for c in columns)
    if not columns:
        raise ValueError(
            f"columns must name at least one column, got columns={columns!r}"
        )
    rows = [tuple(r) for r in rows]
    if formats is None:
        formats = (None,) * len(columns)
    formats = tuple(formats)
    if len(formats) != len(columns):
        raise ValueError(
            f"formats must have one entry per column ({len(columns)}), got formats={formats!r}"
        )
    for k, row in enumerate(rows):
        if len(row) != len(columns):
            raise ValueError(
                f"rows[{k}] has {len(row)} values for {len(columns)} columns: rows[{k}]={row!r}"
            )
    cells = [tuple(_format(v, f) for v, f in zip(row, formats)) for row in rows]
    numeric = [
        bool(rows)
        and all(
            isinstance(r[i], numbers.Real) and not isinstance(r[i], bool) for r in rows
        )
        for i in range(len(columns))
    ]
    align = ["right" if n else "left" for n in numeric]
    return Table(columns, cells, caption=caption, align=align)
