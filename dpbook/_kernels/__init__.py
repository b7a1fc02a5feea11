"""Private numeric kernels: nothing here validates its input or is part of the public API.

``validation``      the checks the public edge runs once (``ValueError`` naming the parameter)
``arrays``          result conversion, broadcast compaction, the exact search over the doubles
``laplace``         the Laplace law's tails and logs, inverse cdf, piece masses, truncated moments
``exact_sampling``  exact discrete Laplace noise from random integers (Canonne–Kamath–Steinke)
"""
