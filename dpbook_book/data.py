"""The chapters' worked examples and study settings: data of the book, not of the library.

The papers' simulation settings did not all survive in their extracted text, so where a number here
is the book's own choice the comment says so.
"""

from __future__ import annotations

import numpy as np

#: Chapter 4 (Liu's §4.1, the book's choices: the numbers did not survive in the paper's text):
#: standard deviations, the clipping bound, correlations and sample sizes of the covariance study
COVARIANCE_SETTINGS = {
    "sd": (1.0, 2.0),
    "bound": 4.0,
    "rho": (0.0, -0.5, 0.9),
    "n": (50, 100, 200, 400, 800),
}

#: Chapter 5 (Liu's §4.2, the book's choices): true proportions, sample sizes and budgets
STUDY2_PI = np.array([0.05, 0.15, 0.3, 0.5])
STUDY2_N = (50, 100, 200, 500, 1000, 2000)
STUDY2_EPSILONS = (0.1, 0.5, 5.0)

#: Chapter 12: the days (counted from 1 January) on which the clinic is open; closed in between
CLINIC = ((-np.inf, 58.0), (66.0, 195.0), (227.0, 350.0), (360.0, np.inf))
#: Chapter 12: the mean age of ``n`` people, each aged between these bounds
AGE_BOUNDS = (18.0, 90.0)
