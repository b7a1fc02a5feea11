"""Inference from a release: exact confidence intervals (:mod:`.intervals`) and the release card (:mod:`.reporting`)."""
