"""The same GPT written in PyTorch, as nanoGPT writes it, reading a ``GPT``'s weights.

The tests check that both give the same loss and gradients; ``bench/gpt_step.py`` times both.
Weights keep this package's layout ((in, out) matrices, ``x @ W``; nanoGPT's ``nn.Linear``
stores the transpose and computes ``x @ Wᵀ``, the same numbers). PyTorch is imported when a
function here is called: the rest of the package does not need it.

One difference from nanoGPT, on purpose: GELU is the tanh form here (``approximate="tanh"``,
the form ``minigraph.gelu`` computes), where nanoGPT's ``model.py`` uses the exact one
(``nn.GELU()``, with erf). The shipped GPT's weights loaded into nanoGPT's own ``model.py``
score the held-out split 6e-6 nats per character away from this reference's score (1.9014 both
ways, to four decimals); with the tanh form put into nanoGPT's model, the two agree to 1e-16.
"""

import numpy as np


def torch_weights(model, dtype="float32"):
    """``{name: tensor}``: a leaf tensor (requires_grad) for each of the model's Parameters."""
    import torch
    return {p.name: torch.tensor(np.asarray(p.value), dtype=getattr(torch, dtype), requires_grad=True)
            for p in model.parameters}


def torch_logits(weights, ids, n_layer, n_head):
    """(B, T, vocabulary) logits of (B, T) ids: nanoGPT's ``GPT.forward`` (bias=False, no dropout)."""
    import torch
    import torch.nn.functional as F
    ids = torch.as_tensor(np.asarray(ids))
    B, T = ids.shape
    wte = weights["wte"]
    C = wte.shape[1]

    def norm(x, name):
        return F.layer_norm(x, (C,), weights[name], None, 1e-5)

    x = wte[ids] + weights["wpe"][:T]
    for i in range(n_layer):
        q, k, v = (norm(x, f"h{i}.ln_1.g") @ weights[f"h{i}.attn.W_qkv"]).split(C, dim=2)
        q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + y.transpose(1, 2).contiguous().view(B, T, C) @ weights[f"h{i}.attn.W_proj"]
        hidden = F.gelu(norm(x, f"h{i}.ln_2.g") @ weights[f"h{i}.mlp.W_fc"], approximate="tanh")
        x = x + hidden @ weights[f"h{i}.mlp.W_proj"]
    return norm(x, "ln_f.g") @ wte.T


def torch_loss(weights, ids, targets, n_layer, n_head):
    """The mean cross-entropy of predicting ``targets`` (B, T) from ``ids`` (B, T)."""
    import torch
    import torch.nn.functional as F
    logits = torch_logits(weights, ids, n_layer, n_head)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           torch.as_tensor(np.asarray(targets)).reshape(-1))


def torch_adamw(weights, config):
    """nanoGPT's optimizer (``configure_optimizers``): AdamW, weight decay on the 2-D weights only."""
    import torch
    groups = [{"params": [w for w in weights.values() if w.dim() >= 2], "weight_decay": config.weight_decay},
              {"params": [w for w in weights.values() if w.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=config.lr, betas=(config.beta1, config.beta2))
