"""Chapter 10 (attention): typical wrong answers and different right answers."""

import numpy as np
import scipy.special

import minigraph as mg

from . import wrong


# -- answers for 10.attention ---------------------------------------------------------------------

def stable_softmax(scores):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def attention_where(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return stable_softmax(scores) @ V


def attention_einsum_large_negative(Q, K, V, mask=None):
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores + np.where(mask, 0.0, -1e9)
    return np.einsum("...qk,...kd->...qd", stable_softmax(scores), V)


def attention_loops(Q, K, V, mask=None):
    """One query at a time, for each sequence of the batch."""
    allowed = np.ones(Q.shape[:-1] + K.shape[-2:-1], dtype=bool) if mask is None else \
        np.broadcast_to(mask, Q.shape[:-1] + K.shape[-2:-1])
    out = np.zeros(Q.shape[:-1] + V.shape[-1:])
    for batch in np.ndindex(Q.shape[:-2]):
        q, k, v = Q[batch], K[batch], V[batch]
        for i in range(q.shape[0]):
            scores = [np.dot(q[i], k[j]) / np.sqrt(len(q[i])) for j in range(k.shape[0])]
            keep = [j for j in range(k.shape[0]) if allowed[batch][i, j]]
            top = max(scores[j] for j in keep)
            weights = {j: np.exp(scores[j] - top) for j in keep}
            total = sum(weights.values())
            out[batch][i] = sum(weights[j] / total * v[j] for j in keep)
    return out


def attention_scipy_masked_array(Q, K, V, mask=None):
    scores = Q @ K.swapaxes(-1, -2) / Q.shape[-1] ** 0.5
    if mask is not None:
        scores[~np.broadcast_to(mask, scores.shape)] = -np.inf
    return scipy.special.softmax(scores, axis=-1) @ V


def attention_unshifted(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True) @ V


def attention_one_max_for_the_batch(Q, K, V, mask=None):
    """Every score shifted by the largest of the whole batch (a row's softmax is unchanged by
    a shift, but a row far below that maximum underflows)."""
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
    scores = scores if mask is None else np.where(mask, scores, -np.inf)
    weights = np.exp(scores - np.max(scores))
    return (weights / weights.sum(axis=-1, keepdims=True)) @ V


def attention_max_before_masking(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    scores = scores - scores.max(axis=-1, keepdims=True)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True) @ V


def attention_mask_times_infinity(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores + ~mask * -np.inf
    return stable_softmax(scores) @ V


def attention_unscaled(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return stable_softmax(scores) @ V


def attention_by_d(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return stable_softmax(scores) @ V


def attention_over_queries(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return scipy.special.softmax(scores, axis=-2) @ V


def attention_mask_after(Q, K, V, mask=None):
    weights = stable_softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    if mask is not None:
        weights = weights * mask
    return weights @ V


def attention_by_root_dv(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(V.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return stable_softmax(scores) @ V


def attention_mask_after_renormalised(Q, K, V, mask=None):
    """The weights masked after the softmax, then made to sum to 1 again: right while no
    masked key dominates."""
    weights = stable_softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    if mask is not None:
        weights = weights * mask
        weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V


def attention_mask_zero(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores * mask
    return stable_softmax(scores) @ V


def attention_mask_inverted(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    return stable_softmax(scores) @ V


def attention_transposed_weights(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return np.swapaxes(stable_softmax(scores), -1, -2) @ V


def attention_weights_only(Q, K, V, mask=None):
    return attention_where(Q, K, np.eye(K.shape[-2]), mask)


def attention_engine_matmul(Q, K, V, mask=None):
    scores = mg.matmul.opdef.forward(Q, np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
    return stable_softmax(scores) @ V


def attention_engine_graph(Q, K, V, mask=None):
    scores = mg.Constant(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return mg.Graph(mg.softmax(scores, axis=-1)).forward() @ V


# -- answers for 10.softmax_vjp -------------------------------------------------------------------

def softmax_vjp_keepdims(g, ans, x, axis=-1):
    return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))


def softmax_vjp_expand_dims(g, ans, x, axis=-1):
    inner = np.expand_dims((g * ans).sum(axis=axis), axis)
    return ans * g - ans * inner


def softmax_vjp_jacobian(g, ans, x, axis=-1):
    """The whole Jacobian diag(y) - y yᵀ of each slice, multiplied by g."""
    y, up = np.moveaxis(ans, axis, -1), np.moveaxis(g, axis, -1)
    jacobian = y[..., :, None] * np.eye(y.shape[-1]) - y[..., :, None] * y[..., None, :]
    return np.moveaxis(np.einsum("...i,...ij->...j", up, jacobian), -1, axis)


def softmax_vjp_from_x(g, ans, x, axis=-1):
    y = scipy.special.softmax(x, axis=axis)
    return y * (g - (g * y).sum(axis=axis, keepdims=True))


def softmax_vjp_log_softmax_rule(g, ans, x, axis=-1):
    return mg.log_softmax.opdef.vjps[0](g * ans, np.log(ans), x, axis=axis)


WRONG = {
    "10.attention": {
        "no scale": wrong(attention_unscaled, "not scaled"),
        "divided by d": wrong(attention_by_d, "divided by d"),
        "divided by √d_v": wrong(attention_by_root_dv, "√d_v"),
        "mask after the softmax, renormalised": wrong(attention_mask_after_renormalised,
                                                      "mask was applied after the softmax"),
        "softmax over the queries": wrong(attention_over_queries, "over the queries"),
        "mask after the softmax": wrong(attention_mask_after, "after the softmax"),
        "masked with 0": wrong(attention_mask_zero, "set to 0 instead of −∞"),
        "mask inverted": wrong(attention_mask_inverted, "wrong way round"),
        "no max subtracted: overflows": wrong(attention_unshifted, "overflow"),
        "one max for the whole batch": wrong(attention_one_max_for_the_batch, "one maximum for the whole batch"),
        "the max taken before masking": wrong(attention_max_before_masking, "before masking"),
        "the mask multiplied by −∞": wrong(attention_mask_times_infinity, "multiplying the mask by −∞"),
        "weights transposed before V": wrong(attention_transposed_weights, "transposed before multiplying V"),
        "the weights returned": wrong(attention_weights_only, "weights were returned"),
        "the engine's matrix product": wrong(attention_engine_matmul, "engine's own"),
        "the engine's softmax in a graph": wrong(attention_engine_graph, "engine's own"),
    },
    "10.softmax_vjp": {
        "the diagonal only": wrong(lambda g, ans, x, axis=-1: g * ans * (1 - ans), "diagonal"),
        "exp's rule": wrong(lambda g, ans, x, axis=-1: g * ans, "exp's rule"),
        "sum over axis 0": wrong(lambda g, ans, x, axis=-1: ans * (g - (g * ans).sum(axis=0, keepdims=True)),
                                 "axis 0"),
        "axis ignored": wrong(lambda g, ans, x, axis=-1: ans * (g - (g * ans).sum(-1, keepdims=True)),
                              "axis was ignored"),
        "no keepdims": wrong(lambda g, ans, x, axis=-1: ans * (g - np.sum(g * ans, axis=axis)), "keepdims"),
        "sum over everything": wrong(lambda g, ans, x, axis=-1: ans * (g - np.sum(g * ans)), "every entry"),
        "sum of g alone": wrong(lambda g, ans, x, axis=-1: ans * (g - g.sum(axis=axis, keepdims=True)),
                                "g alone"),
        "sign flipped": wrong(lambda g, ans, x, axis=-1: ans * ((g * ans).sum(axis=axis, keepdims=True) - g),
                              "sign"),
        "the engine's log_softmax rule": wrong(softmax_vjp_log_softmax_rule, "engine's own"),
        "the engine's rule": wrong(mg.softmax.opdef.vjps[0], "engine's own"),
    },
}

RIGHT = {
    "10.attention": {"np.where with −∞": attention_where,
                     "einsum, a large negative number": attention_einsum_large_negative,
                     "explicit loops": attention_loops,
                     "scipy's softmax, masked in place": attention_scipy_masked_array},
    "10.softmax_vjp": {"keepdims": softmax_vjp_keepdims, "expand_dims": softmax_vjp_expand_dims,
                       "the whole Jacobian": softmax_vjp_jacobian,
                       "softmax recomputed from x": softmax_vjp_from_x},
}
