"""dpbook: range-adherent Laplace mechanisms for bounded and nonnegative statistics.

The library behind the dpbook textbook.  Each module holds one idea of the book:

- :mod:`dpbook.laplace` — the Laplace law and mechanism, :func:`laplace_scale`
"""

from .laplace import Laplace, laplace_scale
from .mechanism import Mechanism

__all__ = ["Laplace", "Mechanism", "laplace_scale"]

__version__ = "0.1.0"
