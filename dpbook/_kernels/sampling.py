"""Private sampling helper: draws from one uniform each, mapped block by block in cache-sized pieces.

A sampler that is a chain of numpy passes over its uniforms (a logarithm, a copysign, a fold, a step
map ...) spends as much time moving 8-byte arrays through memory as computing once the draws outnumber
the cache.  :func:`_uniform_blocks` draws the uniforms of each block of ``_BLOCK`` draws into the output
itself and runs the chain on that block at once, while it and its temporaries are in the cache.  A
Generator's uniforms are one stream, however they are asked for, and every pass is elementwise, so the
draws are the very same as the chain's on the whole array of ``rng.random(shape)``.
"""

from __future__ import annotations

import numpy as np

#: draws per block (temporaries of 128 kB)
_BLOCK = 2**14


def _uniform_blocks(rng, shape, q, draw):
    """Draws of shape ``shape``: ``rng.random(shape)`` mapped by ``draw(u, q)`` block by block.

    ``draw`` takes a 1-D block of uniforms in ``[0, 1)`` (its own to overwrite) and the true values of
    that block (a float when ``q`` holds one value, else a 1-D array of the block's length), and returns
    the block's draws (possibly ``u`` itself).  ``q`` broadcasts to ``shape``.
    """
    u = np.empty(shape if shape != () else (1,))
    flat = u.reshape(-1)
    q = np.asarray(q, dtype=float)
    if q.size == 1:
        scalar = float(q.reshape(-1)[0])
        pick = lambda i: scalar
    else:
        qs = np.broadcast_to(q, u.shape).reshape(-1)
        pick = lambda i: qs[i : i + _BLOCK]
    for i in range(0, flat.size, _BLOCK):
        block = flat[i : i + _BLOCK]
        rng.random(out=block)
        out = draw(block, pick(i))
        if out is not block:
            block[...] = out
    return u if shape != () else u.reshape(())
