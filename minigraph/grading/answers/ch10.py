"""Chapter 10's reference answers and typical mistakes (``content/ch10.py`` has the exercises)."""

import numpy as np

from ..content.ch10 import softmax


def attention(Q, K, V, mask=None, *, divisor=lambda Q, K: np.sqrt(Q.shape[-1]), axis=-1,
               fill=-np.inf, inverted=False, after=False, transposed=False):
    """softmax(Q Kᵀ / √d) V over the keys; the keywords switch on the typical mistakes."""
    scores = Q @ np.swapaxes(K, -1, -2) / divisor(Q, K)
    allowed = None if mask is None else np.asarray(mask, dtype=bool) != inverted
    if allowed is not None and not after:
        scores = np.where(allowed, scores, fill)
    weights = softmax(scores, axis)
    if allowed is not None and after:
        weights = weights * allowed
    return (np.swapaxes(weights, -1, -2) if transposed else weights) @ V


ATTENTION_MISTAKES = {
    "It looks like the scores were not scaled: divide Q Kᵀ by √d, d being the length of a query "
    "(the last axis of Q).": lambda *a: attention(*a, divisor=lambda Q, K: 1.0),
    "It looks like the scores were divided by d: divide them by √d, the square root of a "
    "query's length.": lambda *a: attention(*a, divisor=lambda Q, K: Q.shape[-1]),
    "It looks like the scores were divided by the square root of the number of keys: d is the "
    "length of a query (the last axis of Q), not how many keys there are.":
        lambda *a: attention(*a, divisor=lambda Q, K: np.sqrt(K.shape[-2])),
    "It looks like the scores were divided by √d_v, the values' length: divide them by √d, d "
    "being the length of a query and a key (the last axis of Q and K).":
        lambda Q, K, V, mask=None: attention(Q, K, V, mask, divisor=lambda Q, K: np.sqrt(V.shape[-1])),
    "It looks like the softmax ran over the queries (axis -2): each query's weights over the "
    "keys (the last axis of the scores) sum to 1.": lambda *a: attention(*a, axis=-2),
    "It looks like the mask was applied after the softmax: the weights a query keeps no longer "
    "sum to 1; mask the scores before the softmax.": lambda *a: attention(*a, after=True),
    "It looks like masked scores were set to 0 instead of −∞: e⁰ = 1, so a masked key still "
    "gets weight; give masked scores −∞ (or a very large negative number).":
        lambda *a: attention(*a, fill=0.0),
    "It looks like the mask was read the wrong way round: True marks the keys a query MAY "
    "attend to.": lambda *a: attention(*a, inverted=True),
    "It looks like the weights were transposed before multiplying V: row i of the output mixes "
    "the rows of V with query i's weights, (weights) @ V.": lambda *a: attention(*a, transposed=True),
    "It looks like the attention weights were returned: the output is the weights times V.":
        lambda Q, K, V, mask=None: attention(Q, K, np.eye(K.shape[-2]), mask),
}


def softmax_vjp(g, ans, x, axis=-1):
    return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))


SOFTMAX_VJP_MISTAKES = {
    "only the diagonal of the Jacobian was used (g·y·(1 − y), as for sigmoid): every output of a "
    "softmax depends on every input along its axis, which subtracts a sum over that axis":
        lambda g, ans, x, axis=-1: g * ans * (1 - ans),
    "that is exp's rule (g·y): the normalisation by the sum adds a term":
        lambda g, ans, x, axis=-1: g * ans,
    "the sum ran over axis 0: it runs along the axis the softmax normalised (axis)":
        lambda g, ans, x, axis=-1: softmax_vjp(g, ans, x, axis=0),
    "the axis was ignored (the sum always ran over the last axis): use the rule's axis, the "
    "axis the softmax normalised": lambda g, ans, x, axis=-1: softmax_vjp(g, ans, x),
    "the sum lost its axis (keepdims): it broadcast along the wrong axis; keep the summed axis "
    "so that each row subtracts its own sum":
        lambda g, ans, x, axis=-1: ans * (g - np.sum(g * ans, axis=axis)),
    "the sum ran over every entry: each slice along the axis is a softmax of its own":
        lambda g, ans, x, axis=-1: ans * (g - np.sum(g * ans)),
    "the sum is of g alone: weight g by the softmax's output before summing":
        lambda g, ans, x, axis=-1: ans * (g - np.sum(g, axis=axis, keepdims=True)),
    "the sign is flipped": lambda g, ans, x, axis=-1: -softmax_vjp(g, ans, x, axis),
}
