"""The one vocabulary of neighbouring inputs: :class:`Neighbours`.

Differential privacy compares a mechanism's laws at *neighbouring* inputs.  The book meets two kinds:

* neighbouring **data sets**, which decide a statistic's sensitivity (Liu §2.1):
  ``SUBSTITUTION`` (one record replaced) and ``ADD_REMOVE`` (one record added or removed);
* neighbouring **true values**, which the privacy auditor compares given a sensitivity ``Δ``:
  ``ADDITIVE`` (``|q1 - q2| <= Δ``), ``LOG`` (``|log q1 - log q2| <= Δ``) and ``RELATIVE``
  (``q2 <= (1 + Δ) q1`` and back; McGlinchey–Mason's multiplicative sensitivity).

Every function that takes a relation accepts a member or its string value (``"substitution"``,
``"additive"``, ...), and refuses any other with a ``ValueError`` that names the parameter and lists
the members that apply there.
"""

from __future__ import annotations

import enum

__all__ = ["Neighbours"]


class Neighbours(str, enum.Enum):
    """How two inputs are neighbours: of data sets (sensitivity) or of true values (the auditor).

    Examples
    --------
    >>> from dpbook import Neighbours
    >>> Neighbours("add_remove") is Neighbours.ADD_REMOVE
    True
    >>> Neighbours.ADDITIVE == "additive", Neighbours.ADDITIVE.of_data_sets
    (True, False)
    """

    SUBSTITUTION = "substitution"
    ADD_REMOVE = "add_remove"
    ADDITIVE = "additive"
    LOG = "log"
    RELATIVE = "relative"

    def __str__(self):
        return self.value

    def __format__(self, spec):
        return format(self.value, spec)

    @property
    def of_data_sets(self):
        """True for a relation between data sets, False for one between true values."""
        return self in (Neighbours.SUBSTITUTION, Neighbours.ADD_REMOVE)

    @classmethod
    def parse(cls, name, value, allowed):
        """``value`` as a member of ``allowed``, or a ``ValueError`` naming ``name`` and the members allowed."""
        try:
            member = cls(value)
        except ValueError:
            member = None
        if member not in allowed:
            choices = ", ".join(repr(m.value) for m in allowed)
            raise ValueError(
                f"{name} must be one of {choices} (or the dpbook.Neighbours member), got {value!r}"
            )
        return member


#: the relations between data sets (Liu §2.1), for sensitivities
DATA_SETS = (Neighbours.SUBSTITUTION, Neighbours.ADD_REMOVE)
#: the relations between true values, for the auditor
TRUE_VALUES = (Neighbours.ADDITIVE, Neighbours.LOG, Neighbours.RELATIVE)
