"""Chapter 11 (the Transformer): typical wrong answers and different right answers."""

import numpy as np

import minigraph as mg

from . import wrong


# -- answers for 11.split_heads -------------------------------------------------------------------

def split_transpose(x, n_head):
    B, T, C = x.shape
    return x.reshape(B, T, n_head, C // n_head).transpose(0, 2, 1, 3)


def split_swapaxes(x, n_head):
    return np.swapaxes(x.reshape(*x.shape[:-1], n_head, -1), 1, 2)


def split_stack(x, n_head):
    d = x.shape[-1] // n_head
    return np.stack([x[:, :, h * d:(h + 1) * d] for h in range(n_head)], axis=1)


def split_np_split(x, n_head):
    return np.stack(np.split(x, n_head, axis=-1), axis=1)


def split_straight(x, n_head):
    B, T, C = x.shape
    return x.reshape(B, n_head, T, C // n_head)


def split_not_moved(x, n_head):
    B, T, C = x.shape
    return x.reshape(B, T, n_head, C // n_head)


def split_dealt(x, n_head):
    return np.stack([x[:, :, h::n_head] for h in range(n_head)], axis=1)    # every H-th channel


def split_heads_first(x, n_head):
    B, T, C = x.shape
    return x.reshape(B, T, n_head, C // n_head).transpose(2, 0, 1, 3)


def split_wrong_swap(x, n_head):
    B, T, C = x.shape
    return x.reshape(B, T, n_head, C // n_head).transpose(0, 2, 3, 1)


def split_d_times(x, n_head):
    B, T, C = x.shape
    d = C * n_head
    return x.reshape(B, T, n_head, d).transpose(0, 2, 1, 3)


# -- answers for 11.merge_heads -------------------------------------------------------------------

def split_into_int_array(x, n_head):
    """A new array filled head by head: made with np.zeros(..., dtype=int)."""
    B, T, C = x.shape
    d = C // n_head
    out = np.zeros((B, n_head, T, d), dtype=int)
    for h in range(n_head):
        out[:, h] = x[:, :, h * d:(h + 1) * d]
    return out


def split_list_of_heads(x, n_head):
    return np.split(x, n_head, axis=-1)


def merge_into_int_array(x):
    B, H, T, d = x.shape
    out = np.empty((B, T, H * d), dtype=np.int64)
    for h in range(H):
        out[:, :, h * d:(h + 1) * d] = x[:, h]
    return out


def merge_transpose(x):
    B, H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * d)


def merge_concatenate(x):
    return np.concatenate([x[:, h] for h in range(x.shape[1])], axis=-1)


def merge_swapaxes(x):
    return np.swapaxes(x, 1, 2).reshape(x.shape[0], x.shape[2], -1)


def merge_no_transpose(x):
    B, H, T, d = x.shape
    return x.reshape(B, T, H * d)


def merge_interleaved(x):
    B, H, T, d = x.shape
    return np.stack([x[:, h] for h in range(H)], axis=-1).reshape(B, T, H * d)


def merge_along_positions(x):
    return np.concatenate([x[:, h] for h in range(x.shape[1])], axis=1)


def merge_not_joined(x):
    return x.transpose(0, 2, 1, 3)


# -- answers for 11.causal_mask -------------------------------------------------------------------

def mask_compare(T):
    return np.arange(T)[:, None] >= np.arange(T)[None, :]


def mask_loops(T):
    mask = np.zeros((T, T), dtype=bool)
    for i in range(T):
        for j in range(i + 1):
            mask[i, j] = True
    return mask


# -- answers for 11.layer_norm_vjp ----------------------------------------------------------------

def layer_norm_formula(g, ans, x, gamma, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    std = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - mean) / std
    h = g * gamma
    grad_x = (h - h.mean(axis=-1, keepdims=True) - x_hat * (h * x_hat).mean(axis=-1, keepdims=True)) / std
    return grad_x, (g * x_hat).reshape(-1, x.shape[-1]).sum(axis=0)


def layer_norm_step_by_step(g, ans, x, gamma, eps=1e-5):
    """Back through each step of the forward pass: centre, variance, scale, gamma."""
    C = x.shape[-1]
    centered = x - x.mean(axis=-1, keepdims=True)
    variance = (centered ** 2).mean(axis=-1, keepdims=True)
    inv_std = (variance + eps) ** -0.5
    x_hat = centered * inv_std
    d_x_hat = g * gamma
    d_inv_std = (d_x_hat * centered).sum(axis=-1, keepdims=True)
    d_variance = d_inv_std * -0.5 * (variance + eps) ** -1.5
    d_centered = d_x_hat * inv_std + d_variance * 2 * centered / C
    grad_x = d_centered - d_centered.mean(axis=-1, keepdims=True)
    grad_gamma = np.sum(g * x_hat, axis=tuple(range(x.ndim - 1)))
    return grad_x, grad_gamma


def layer_norm_jacobian(g, ans, x, gamma, eps=1e-5):
    """The Jacobian of x̂ for each row, (diag - 1/C - x̂ x̂ᵀ / C) / std, times g·gamma."""
    C = x.shape[-1]
    std = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) / std
    jacobian = (np.eye(C) - 1 / C - x_hat[..., :, None] * x_hat[..., None, :] / C) / std[..., None]
    grad_x = np.einsum("...i,...ij->...j", g * gamma, jacobian)
    return grad_x, (g * x_hat).reshape(-1, C).sum(axis=0)


def layer_norm_constants(g, ans, x, gamma, eps=1e-5):
    std = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) / std
    return g * gamma / std, (g * x_hat).reshape(-1, x.shape[-1]).sum(axis=0)


def layer_norm_without_gamma(g, ans, x, gamma, eps=1e-5):
    std = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) / std
    grad_x = (g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)) / std
    return grad_x, (g * x_hat).reshape(-1, x.shape[-1]).sum(axis=0)


def layer_norm_unbiased(g, ans, x, gamma, eps=1e-5):
    std = np.sqrt(x.var(axis=-1, ddof=1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) / std
    h = g * gamma
    grad_x = (h - h.mean(axis=-1, keepdims=True) - x_hat * (h * x_hat).mean(axis=-1, keepdims=True)) / std
    return grad_x, (g * x_hat).reshape(-1, x.shape[-1]).sum(axis=0)


def layer_norm_gamma_not_summed(g, ans, x, gamma, eps=1e-5):
    grad_x, _ = layer_norm_formula(g, ans, x, gamma, eps)
    std = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    return grad_x, g * (x - x.mean(axis=-1, keepdims=True)) / std


def layer_norm_gamma_keepdims(g, ans, x, gamma, eps=1e-5):
    grad_x, _ = layer_norm_formula(g, ans, x, gamma, eps)
    std = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) / std
    return grad_x, np.sum(g * x_hat, axis=tuple(range(x.ndim - 1)), keepdims=True)


def layer_norm_gamma_from_output(g, ans, x, gamma, eps=1e-5):
    grad_x, _ = layer_norm_formula(g, ans, x, gamma, eps)
    return grad_x, (g * ans).reshape(-1, x.shape[-1]).sum(axis=0)


def layer_norm_no_mean_path(g, ans, x, gamma, eps=1e-5):
    std = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) / std
    h = g * gamma
    return (h - x_hat * (h * x_hat).mean(axis=-1, keepdims=True)) / std, (g * x_hat).reshape(-1, x.shape[-1]).sum(0)


def layer_norm_centered_in_variance(g, ans, x, gamma, eps=1e-5):
    """x − μ where x̂ belongs, in the term of the variance: that term is σ times too large."""
    centered = x - x.mean(axis=-1, keepdims=True)
    std = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = centered / std
    h = g * gamma
    grad_x = (h - h.mean(-1, keepdims=True) - centered * (h * x_hat).mean(-1, keepdims=True)) / std
    return grad_x, (g * x_hat).reshape(-1, x.shape[-1]).sum(axis=0)


def layer_norm_centered_twice_in_variance(g, ans, x, gamma, eps=1e-5):
    """Both x̂ of the variance's term written as x − μ: σ² times too large."""
    centered = x - x.mean(axis=-1, keepdims=True)
    std = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    h = g * gamma
    grad_x = (h - h.mean(-1, keepdims=True) - centered * (h * centered).mean(-1, keepdims=True)) / std
    return grad_x, (g * centered / std).reshape(-1, x.shape[-1]).sum(axis=0)


def layer_norm_x_hat_from_ans(g, ans, x, gamma, eps=1e-5):
    """x̂ recovered from the output, ans / gamma: 0 / 0 where gamma is 0."""
    x_hat = ans / gamma
    h = g * gamma
    std = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    grad_x = (h - h.mean(-1, keepdims=True) - x_hat * (h * x_hat).mean(-1, keepdims=True)) / std
    return grad_x, (g * x_hat).reshape(-1, x.shape[-1]).sum(axis=0)


def layer_norm_no_eps(g, ans, x, gamma, eps=1e-5):
    return layer_norm_formula(g, ans, x, gamma, eps=0.0)


def layer_norm_engine(g, ans, x, gamma, eps=1e-5):
    rule_x, rule_gamma = mg.ops.layer_norm_scaled.opdef.vjps
    return rule_x(g, ans, x, gamma, eps=eps), rule_gamma(g, ans, x, gamma, eps=eps)


def layer_norm_engine_kernels(g, ans, x, gamma, eps=1e-5):
    from minigraph import kernels                 # the same functions, reached through their module
    return kernels.layer_norm_vjp_x(g, ans, x, gamma, eps), kernels.layer_norm_vjp_gamma(g, ans, x, gamma, eps)


WRONG = {
    "11.split_heads": {
        "reshaped straight to (B, H, T, d)": wrong(split_straight, "reshaped straight"),
        "heads' axis never moved": wrong(split_not_moved, "never moved"),
        "channels dealt out in turn": wrong(split_dealt, "dealt out"),
        "heads before the batch": wrong(split_heads_first, "before the batch"),
        "the last two axes swapped too": wrong(split_wrong_swap, "wrong axes"),
        "d computed as C·H": wrong(split_d_times, "d = C / H"),
        "written into an integer array": wrong(split_into_int_array, "integer array", "0.5 becomes 0"),
        "np.split's list of heads": wrong(split_list_of_heads, "list of", "one array"),
    },
    "11.merge_heads": {
        "no transpose": wrong(merge_no_transpose, "without moving"),
        "channels interleaved": wrong(merge_interleaved, "interleaved"),
        "heads added": wrong(lambda x: x.sum(axis=1), "added up"),
        "heads averaged": wrong(lambda x: np.mean(x, axis=1), "averaged"),
        "joined along the positions": wrong(merge_along_positions, "along the positions"),
        "last two axes not joined": wrong(merge_not_joined, "never joined"),
        "written into an integer array": wrong(merge_into_int_array, "integer array", "0.5 becomes 0"),
    },
    "11.causal_mask": {
        "strict lower triangle": wrong(lambda T: np.tril(np.ones((T, T), dtype=bool), k=-1), "diagonal is masked"),
        "upper triangle": wrong(lambda T: np.triu(np.ones((T, T), dtype=bool)), "see the future"),
        "the forbidden places": wrong(lambda T: np.triu(np.ones((T, T), dtype=bool), k=1), "forbidden"),
        "no mask": wrong(lambda T: np.ones((T, T), dtype=bool), "nothing is masked"),
        "the diagonal only": wrong(lambda T: np.eye(T, dtype=bool), "only itself"),
        "a float 0/1 mask": wrong(lambda T: np.tril(np.ones((T, T))), "not booleans"),
        "an additive mask": wrong(lambda T: np.triu(np.full((T, T), -np.inf), k=1), "additive"),
        "the engine's": wrong(mg.causal_mask, "engine's own"),
        "a list of lists": wrong(lambda T: [[j <= i for j in range(T)] for i in range(T)], "list of lists"),
        "one row and column too many": wrong(lambda T: np.tri(T + 1, dtype=bool), "off by one"),
        "the engine's, kept before the check": wrong(lambda T, mask=mg.causal_mask: mask(T), "engine's own"),
    },
    "11.layer_norm_vjp": {
        "mean and variance as constants": wrong(layer_norm_constants, "constants"),
        "no path through the mean": wrong(layer_norm_no_mean_path, "through the mean"),
        "x − μ for x̂ in the variance's term": wrong(layer_norm_centered_in_variance,
                                                    "took the place of one x̂", "lacks a factor 1/σ"),
        "x − μ for both x̂ in the variance's term": wrong(layer_norm_centered_twice_in_variance,
                                                         "took the place of both x̂", "lacks a factor 1/σ²"),
        "gamma left out of grad_x": wrong(layer_norm_without_gamma, "gamma is missing"),
        "unbiased variance": wrong(layer_norm_unbiased, "C − 1"),
        "grad_gamma not summed": wrong(layer_norm_gamma_not_summed, "not summed"),
        "grad_gamma summed with keepdims": wrong(layer_norm_gamma_keepdims, "kept the axes it was summed over",
                                                 "gamma's shape (C,)"),
        "grad_gamma from the output": wrong(layer_norm_gamma_from_output, "used the output"),
        "x̂ recovered as ans / gamma": wrong(layer_norm_x_hat_from_ans, "ans / gamma"),
        "eps left out": wrong(layer_norm_no_eps, "eps was left out"),
        "the engine's rules": wrong(layer_norm_engine, "engine's own"),
        "the engine's rules through kernels": wrong(layer_norm_engine_kernels, "engine's own"),
    },
}

RIGHT = {
    "11.split_heads": {"reshape, transpose": split_transpose, "swapaxes": split_swapaxes,
                       "a stack over heads": split_stack, "np.split": split_np_split},
    "11.merge_heads": {"transpose, reshape": merge_transpose, "concatenate the heads": merge_concatenate,
                       "swapaxes": merge_swapaxes},
    "11.causal_mask": {"np.tri": lambda T: np.tri(T, dtype=bool), "compare indices": mask_compare,
                       "loops": mask_loops},
    "11.layer_norm_vjp": {"the formula": layer_norm_formula, "step by step": layer_norm_step_by_step,
                          "the Jacobian of each row": layer_norm_jacobian},
}
