"""Designing a release: calibration, sensitivities, least-bias programs and universal optimality."""
