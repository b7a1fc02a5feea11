"""The chapters' table helper (dpbook_book.tables): one formatting, three displays."""

import doctest
import re

import pytest

from dpbook_book import tables
from dpbook_book.tables import table


def _example():
    return table(
        [(0.1, 0.031249, "BIT"), (10.0, -0.2, "a < b")],
        columns=("b", "bias", "mechanism"),
        formats=("g", "+.4f", None),
        caption="Biases at q = 0.2.",
    )


def test_html_is_a_scrolling_table_with_the_formatted_cells():
    html = _example()._repr_html_()
    assert html.startswith('<div class="dpbook-table"><table>') and html.endswith(
        "</table></div>"
    )
    assert "<caption>Biases at q = 0.2.</caption>" in html
    assert re.findall(r"<th[^>]*>([^<]*)</th>", html) == ["b", "bias", "mechanism"]
    assert re.findall(r"<td[^>]*>([^<]*)</td>", html) == [
        "0.1",
        "+0.0312",
        "BIT",
        "10",
        "-0.2000",
        "a &lt; b",
    ]
    # numbers right-aligned, text left-aligned
    assert re.findall(r'<td style="text-align: (\w+)">', html)[:3] == [
        "right",
        "right",
        "left",
    ]


def test_markdown_and_text_show_the_same_digits():
    md = _example()._repr_markdown_()
    assert md.splitlines()[:3] == [
        "| b | bias | mechanism |",
        "|---:|---:|:---|",
        "| 0.1 | +0.0312 | BIT |",
    ]
    text = repr(_example())
    assert text.splitlines()[0] == "Biases at q = 0.2."
    assert text.splitlines()[3].split() == ["0.1", "+0.0312", "BIT"]
    assert text.splitlines()[4].split() == ["10", "-0.2000", "a", "<", "b"]


def test_a_pipe_in_a_cell_does_not_break_the_markdown_row():
    md = table([("x|y",)], columns=("v",))._repr_markdown_()
    assert md.splitlines()[-1] == "| x\\|y |"


def test_callable_and_default_formats():
    t = table(
        [(3, 0.5, 1e-7)],
        columns=("n", "p", "tail"),
        formats=(None, lambda v: f"{100 * v:.0f}%", None),
    )
    assert t.cells == (("3", "50%", "1e-07"),)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(rows=[(1, 2)], columns=("a",)), "rows[0]"),
        (dict(rows=[(1,)], columns=("a",), formats=(".2f", ".2f")), "formats"),
        (dict(rows=[], columns=()), "columns"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=re.escape(name)):
        table(**kwargs)


def test_docstring_example():
    assert doctest.testmod(tables).failed == 0


def test_markdown_renders_each_cell_literally():
    """Parsed as MyST parses it (tables, dollar math), each cell is its text: no emphasis, math or code."""
    import html as html_lib

    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    texts = ("ε_j and b_k", "B* and *x*", "$x$ or `y`", "a | b", "[link](z) <i>")
    md = table([texts], columns=[f"c{i}" for i in range(len(texts))])._repr_markdown_()
    rendered = (
        MarkdownIt("commonmark").enable("table").use(dollarmath_plugin).render(md)
    )
    cells = [html_lib.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", rendered)]
    assert cells == list(texts)


def test_a_value_that_rounds_to_zero_prints_as_zero():
    t = table(
        [(-1e-12, -1e-12, -0.5, 3)],
        columns=("a", "b", "c", "d"),
        formats=("+.4f", ".6f", "+.2f", "d"),
    )
    assert list(t.cells) == [("+0.0000", "0.000000", "-0.50", "3")]
    # a fill and an alignment before the sign, and a spec with no sign
    t = table([(-1e-12, -1e-12)], columns=("a", "b"), formats=("*>+9.3f", ".1e"))
    assert list(t.cells) == [("***+0.000", "-1.0e-12")]
