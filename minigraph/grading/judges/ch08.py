"""Chapter 08's judges that hold no answer (``content/ch08.py`` has the exercises): a graph
VJP's values and their gradient, a second derivative's values against given ones, and what a
written PyTorch word means (a reader of words, with no answer in it: which meaning is right is
the reference's, or a hash in the student edition)."""

import re

import numpy as np

from ..toolkit.exercise import Verdict, compare
from ..toolkit.public import fingerprint, stored
from ..toolkit.values import Unreadable, decode


def _not_a_node(got):
    """The verdict for an answer that returned numbers (or anything) instead of a node."""
    return Verdict(False, "a node", got.text if isinstance(got, Unreadable) else "numbers",
                   f"returned {got.type_name if isinstance(got, Unreadable) else 'numbers'}, not a "
                   f"node: build the result from the nodes you are given with minigraph ops "
                   f"(mg.sigmoid, *, +, mg.grad ...), so that it is part of the graph")


def judge_graph_vjp(expected, expected_again, got, named=lambda verdict, value: verdict):
    """A graph VJP's values against ``expected``, then the gradient of its node against
    ``expected_again``; ``named(verdict, value)`` re-words a failing verdict that shows a
    typical mistake."""
    value = decode(got["value"])
    if "again" not in got:
        return _not_a_node(value)
    verdict = named(compare(expected, value), value)
    if not verdict.passed:
        return verdict
    if not compare(expected_again, decode(got["again"])).passed:
        return Verdict(False, "", "", "the values are right, but mg.grad of your VJP is not σ'(x)·g: "
                                      "build it from ops that have a graph VJP of their own")
    return verdict


def judge_stored_graph_vjp(case, got):
    """The student edition's judge: the values and their gradient stored for the public case."""
    known = stored("08.softplus_graph_vjp", case)
    return judge_graph_vjp(decode(known["value"]), decode(known["again"]), got)


NOT_BY_GRAD = ("second_derivative's node was not built by mg.grad (mg.grad starts every gradient it "
               "builds from ones_like(output), and the node has none): differences of f at nearby "
               "points only approximate f''; the exercise asks for the gradient graph, mg.grad of "
               "mg.grad")


def judge_second_values(expected, got, named=lambda verdict, value: verdict):
    """The second derivative's values against ``expected``; ``named(verdict, value)`` re-words a
    failing verdict that shows a typical mistake; a node not built by mg.grad is told so."""
    value = decode(got["value"])
    if not isinstance(value, np.ndarray) or value.shape != np.shape(expected):
        return _not_a_node(value)
    plain = compare(expected, value)
    verdict = named(plain, value)
    if got.get("by_grad") is False and verdict.message == plain.message:    # no mistake named
        return Verdict(False, plain.expected, plain.got, NOT_BY_GRAD)
    return verdict


def judge_stored_second(case, got):
    """The student edition's judge: the values stored for the public case."""
    return judge_second_values(decode(stored("08.second_derivative", case)), got)


NAMES = {                         # the last part of a dotted PyTorch name -> what it means
    "tensor": "a plain tensor", "as_tensor": "a plain tensor", "from_numpy": "a plain tensor",
    "parameter": "an nn.Parameter",
    "forward": "calling the model", "__call__": "calling the model",
    "register_hook": "a tensor's backward hook", "register_full_backward_hook": "a tensor's backward hook",
    "register_backward_hook": "a tensor's backward hook",    # PyTorch's older name for the latter
    "register_forward_hook": "a forward hook",
    "backward": "loss.backward()",
    "step": "optimizer.step()",
    "placeholder": "TensorFlow", "gradients": "TensorFlow",
}
NOT_A_MODEL = {"torch", "nn", "f", "functional", "tf", "tensorflow", "np", "numpy", "mg", "minigraph"}
ARTICLES = {"a", "an", "the"}
def _key(word):
    """A minigraph word as a key: ``"Graph.forward"``, ``"forward"`` -> ``"forward"``;
    ``"backward(wrt=...)"`` -> ``"backward"``."""
    return _without_brackets(str(word).strip().lower()).removesuffix("()").split(".")[-1]


def _without_brackets(text):
    """Arguments become ``()`` and remarks in parentheses go:
    ``"torch.autograd.grad(loss, [W]) (adds into .grad)"`` -> ``"torch.autograd.grad() "``."""
    kept, depth = [], 0
    for char in text:
        if char == "(":
            if depth == 0 and kept and (kept[-1].isalnum() or kept[-1] == "_"):
                kept.append("()")                  # a call: the name before it is called
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif depth == 0:
            kept.append(char)
    return "".join(kept)


def _meaning_of_name(name, called):
    """``torch.nn.Parameter``, ``W.register_hook``, ``model(x)``: a dotted name, maybe called."""
    parts = name.strip(".").split(".")
    if parts[0] in {"tf", "tensorflow"}:
        return "TensorFlow"
    if parts[-1] == "grad" and (parts[-2:-1] == ["autograd"] or called and len(parts) == 1):
        return "autograd.grad"                     # not ``W.grad``, the attribute
    if parts[-1] in NAMES:
        return NAMES[parts[-1]]
    if called and parts[0] not in NOT_A_MODEL:
        return "calling the model"                 # ``net(x)``, ``mlp(batch)``: a model by any name
    return None


def _meaning_of_phrase(words):
    """``calling the model``, ``a tensor with requires_grad=True``, ``a plain tensor you pass in``."""
    if words & {"call", "calls", "calling", "called"} and words & {"model", "module", "network", "net"}:
        return "calling the model"
    if words & {"requires_grad", "parameter", "parameters"}:
        return "an nn.Parameter"
    if "hook" in words:
        return "a forward hook" if "forward" in words else "a tensor's backward hook"
    named = {_meaning_of_name(word, False) for word in words} - {None}
    return named.pop() if len(named) == 1 else None


def _meanings(answer):
    """What each alternative of a written answer means (None: not understood)."""
    text = _without_brackets(re.sub(r"[`*\"']", "", str(answer).lower()))
    found = []
    for alternative in filter(str.strip, re.split(r",|/|;|\bor\b", text)):
        words = [w for w in re.findall(r"[\w.]+", alternative.replace("()", " ")) if w not in ARTICLES]
        called = alternative.strip().endswith("()")
        found.append(_meaning_of_name(words[0], called) if len(words) == 1
                     else _meaning_of_phrase(set(words)) if words else None)
    return found


def judge_meanings(case, got, right, mistake):
    """The PyTorch word given for ``case``'s minigraph word: ``right(meaning)`` says whether a
    meaning is the right one, ``mistake(meaning)`` names a typical wrong one (or None)."""
    if "words" not in got:
        return Verdict(False, "a dict", got.get("type", "?"), "answer with a dict {minigraph word: "
                       "PyTorch word}, one entry per word of the table")
    key = case["inputs"]["word"]
    given = got["words"].get(key, next((v for k, v in got["words"].items() if _key(k) == _key(key)), None))
    if given is None:
        return Verdict(False, "", "—", f"no entry for '{key}'")
    meanings = _meanings(given)
    if meanings and all(meaning is not None and right(meaning) for meaning in meanings):
        return Verdict(True, "", given)
    if "TensorFlow" in meanings:
        return Verdict(False, "", given, f"'{given}' is TensorFlow 1's word: the exercise asks for PyTorch's")
    for meaning in meanings:
        if mistake(meaning):
            return Verdict(False, "", given, mistake(meaning))
    return Verdict(False, "", given, f"'{given}' is not the PyTorch word for {key}")


def judge_hashed_meanings(case, got):
    """The student edition's judge: a meaning is hashed (``public.fingerprint``) and compared
    with the hashes stored for the public case (the right meaning, and the typical wrong ones)."""
    known = stored("08.framework_words", case)
    def hashed(meaning):
        return fingerprint("08.framework_words", str(meaning))
    return judge_meanings(case, got, lambda meaning: hashed(meaning) == known["hash"],
                          lambda meaning: known["mistakes"].get(hashed(meaning)))
