"""dpbook: range-adherent Laplace mechanisms for bounded and nonnegative statistics.

The library behind the dpbook textbook.  One module per idea of the book:

=================  ==========================================================================
``laplace``        the Laplace law and mechanism, :func:`laplace_scale`
``mechanism``      the interface every mechanism family shares
``clamping``       :class:`BIT` — Liu Def. 2(b); McGlinchey–Mason (4), (5)
``truncation``     :class:`Truncated` — Liu Def. 2(a); McGlinchey–Mason (8), Cor. 1
``postprocessing`` :class:`TranslatedRamp`, :class:`PostProcessed`, α*, the Prop. 5 constant
``restriction``    :class:`Restricted` and the quantile coupling of McGlinchey–Mason Prop. 6
``multiplicative`` :class:`LogLaplace` — McGlinchey–Mason §3.1
``normalization``  :class:`Normalized`, :class:`CroftLaplace` and Croft–Sack–Shi's scales
``optimal``        linear programs for the best nonnegative post-processing, verified exactly
``privacy``        the exact auditor :func:`privacy_loss` and :func:`truncated_scale`
``sensitivity``    global sensitivities of bounded-data statistics (Liu's supplement)
``studies``        Higham's projection, the universal-histogram tree, combining rules
=================  ==========================================================================

``import dpbook`` imports numpy and scipy and nothing else.  The book's own support code (its
interactive views, figure style, exercise answers, peer-library adapters and worked examples) is the
separate package :mod:`dpbook_book`, which the core never imports.

Every name below is importable from ``dpbook`` directly.
"""

from . import (
    clamping,
    laplace,
    mechanism,
    multiplicative,
    normalization,
    optimal,
    postprocessing,
    privacy,
    restriction,
    sensitivity,
    studies,
    truncation,
)
from .clamping import *  # noqa: F401,F403
from .laplace import Laplace, laplace_scale
from .mechanism import Mechanism
from .multiplicative import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .optimal import *  # noqa: F401,F403
from .postprocessing import *  # noqa: F401,F403
from .privacy import *  # noqa: F401,F403
from .restriction import *  # noqa: F401,F403
from .sensitivity import *  # noqa: F401,F403
from .studies import *  # noqa: F401,F403
from .truncation import *  # noqa: F401,F403

__all__ = ["Laplace", "Mechanism", "laplace_scale"]
for _module in (clamping, truncation, postprocessing, restriction, multiplicative, normalization, optimal, privacy, sensitivity, studies):
    __all__ += list(_module.__all__)
del _module

__version__ = "0.1.0"
