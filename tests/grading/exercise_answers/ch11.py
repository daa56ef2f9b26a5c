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
    d = x.shape[-1] // n_head
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


WRONG = {
    "11.split_heads": {
        "reshaped straight to (B, H, T, d)": wrong(split_straight, "reshaped straight"),
        "heads' axis never moved": wrong(split_not_moved, "never moved"),
        "channels dealt out in turn": wrong(split_dealt, "dealt out"),
        "heads before the batch": wrong(split_heads_first, "before the batch"),
        "the last two axes swapped too": wrong(split_wrong_swap, "wrong axes"),
        "d computed as C·H": wrong(split_d_times, "d = C / H"),
    },
    "11.merge_heads": {
        "no transpose": wrong(merge_no_transpose, "without moving"),
        "channels interleaved": wrong(merge_interleaved, "interleaved"),
        "heads added": wrong(lambda x: x.sum(axis=1), "added up"),
        "heads averaged": wrong(lambda x: np.mean(x, axis=1), "averaged"),
        "joined along the positions": wrong(merge_along_positions, "along the positions"),
        "last two axes not joined": wrong(merge_not_joined, "never joined"),
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
        "the engine's, kept before the check": wrong(lambda T, mask=mg.causal_mask: mask(T), "engine's own"),
    },
}

RIGHT = {
    "11.split_heads": {"reshape, transpose": split_transpose, "swapaxes": split_swapaxes,
                       "a stack over heads": split_stack, "np.split": split_np_split},
    "11.merge_heads": {"transpose, reshape": merge_transpose, "concatenate the heads": merge_concatenate,
                       "swapaxes": merge_swapaxes},
    "11.causal_mask": {"np.tri": lambda T: np.tri(T, dtype=bool), "compare indices": mask_compare,
                       "loops": mask_loops},
}
