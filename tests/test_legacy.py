"""The names of earlier releases (``dpbook/_legacy.py``): each still works for this release, says where it
moved with a ``DeprecationWarning``, and gives the very object of its new home."""

import importlib
import sys

import pytest

import dpbook
import dpbook_book.studies
from dpbook.families import clamping, normalization


def _fresh_import(monkeypatch, name):
    """``import dpbook.<name>`` as a first import would run it (the alias is made on first import)."""
    monkeypatch.delitem(sys.modules, f"dpbook.{name}", raising=False)
    if name in vars(dpbook):
        monkeypatch.delattr(dpbook, name)
    return importlib.import_module(f"dpbook.{name}")


def test_an_old_module_name_warns_and_reads_the_new_modules(monkeypatch):
    with pytest.warns(
        DeprecationWarning,
        match="dpbook.clamping has moved to dpbook.families.clamping",
    ):
        old = _fresh_import(monkeypatch, "clamping")
    assert old.BIT is clamping.BIT is dpbook.BIT
    with pytest.warns(DeprecationWarning, match="dpbook.normalization has moved"):
        old = _fresh_import(monkeypatch, "normalization")
    assert old.Normalized is normalization.Normalized
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        old.nothing  # noqa: B018


def test_setting_a_name_on_an_old_module_is_refused(monkeypatch):
    """A patch of the alias would reach no code (the sampler reads its own module): it raises instead."""
    with pytest.warns(DeprecationWarning):
        old = _fresh_import(monkeypatch, "normalization")
    with pytest.raises(
        AttributeError, match="set '_BLOCK' on the module that defines it"
    ):
        monkeypatch.setattr(old, "_BLOCK", 1000)
    assert normalization._BLOCK == 2**15


@pytest.mark.parametrize(
    "old, new",
    [
        ("max_sample_variance", dpbook_book.studies.max_sample_variance),
        ("simulate_proportions", dpbook_book.studies.simulate_proportions),
        ("BiasVerification", dpbook.BiasCertificate),
        ("CountBiasVerification", dpbook.BiasCertificate),
    ],
)
def test_a_moved_or_renamed_name_warns_and_is_the_new_object(old, new):
    with pytest.warns(DeprecationWarning, match=f"dpbook.{old} has moved"):
        assert getattr(dpbook, old) is new


def test_a_name_that_never_existed_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'clamp_everything'"):
        dpbook.clamp_everything  # noqa: B018
