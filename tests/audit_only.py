"""A base for test families written for the privacy auditor alone."""

import dpbook


class AuditOnly(dpbook.Mechanism):
    """A family written for the auditor alone: the law's kernels it does not need say so when called."""

    def _not_needed(self, *args):
        raise NotImplementedError("the auditor reads privacy_description() only")

    _bias = _variance = _cdf = _logpdf = _sample = _not_needed
