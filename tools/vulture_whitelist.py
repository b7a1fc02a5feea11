# ruff: noqa
"""Names the dead-code check (vulture, in .ci/run) cannot see used; every other unused name is an error.

Each is called by Python, Sphinx, pytest, matplotlib or a browser driver rather than by our code, or is
public API that only the chapters' notebooks (which vulture does not read) or the doctests use.
"""

# Python's module and import protocols
__getattr__  # dpbook/__init__.py, dpbook/interop/diffprivlib.py: module-level attribute lookup (PEP 562)
__dir__  # dpbook/interop/diffprivlib.py
_.find_spec  # dpbook/_legacy.py: a meta-path finder
_.create_module  # dpbook/_legacy.py: its loader

# Sphinx: a transform's priority and formats, a config value's default
default_priority  # _ext/dpbook_site/latex.py
_.formats  # _ext/dpbook_site/latex.py (SphinxPostTransform)
_.default_value  # _ext/dpbook_site/cache.py

# ctypes structures read by numpy's bit-generator interface
_.lock  # dpbook/interop/secure.py
_.capsule  # dpbook/interop/secure.py

# matplotlib and nbformat attributes set for their readers
_.ignore_existing_data_limits  # dpbook_book/plotting.py
_.draw_text  # dpbook_book/plotting.py: the kept figure's Agg renderer, called by matplotlib's Text.draw
_.nbformat_minor  # tools/student_edition.py, tests/book/test_classroom.py

# public API used by the chapters and the doctests only
_.of_data_sets  # dpbook.Neighbours
STUDY2_EPSILONS  # dpbook_book/data.py, Chapter 5

# pytest and the site test's browser and HTTP server
pytestmark  # tests/test_wheel.py
_opendp_features  # tests/interop/test_interop.py: an autouse fixture
_.log_message  # tests/test_site.py: http.server's logging hook
_.binary_location  # tests/test_site.py: selenium's Chrome options
_.timeout  # tests/test_site.py: the HTTP server's per-request timeout
_.clear_before_next_output  # _ext/dpbook_site/nbval_cache.py: nbclient's state, set as its execute_cell does
NbvalCache  # _ext/dpbook_site/nbval_cache.py: registered by the root conftest.py
_.pytest_runtest_setup  # _ext/dpbook_site/nbval_cache.py: pytest hooks
_.pytest_runtest_call
_.pytest_runtest_logreport
_.pytest_runtest_teardown
available  # _ext/dpbook_site/nbval_cache.py: called by the root conftest.py
