"""defop (minigraph/opdef.py): the arguments after an op's inputs are its attributes, named by
its forward's parameters; more of them than it takes are refused, not dropped."""

import numpy as np
import pytest

import minigraph as mg


def test_arguments_after_the_inputs_are_attributes_not_constants():
    x = mg.Parameter(np.arange(6.0).reshape(2, 3), name="x")
    total, flat = mg.sum(x, 0), mg.reshape(x, (6,))
    assert total.attrs == {"axis": 0} and flat.attrs == {"shape": (6,)}
    assert total.inputs == (x,) and flat.inputs == (x,)
    assert np.allclose(mg.Graph(total).forward(), [3.0, 5.0, 7.0])


def test_too_many_positional_arguments_are_refused_not_dropped():
    x = mg.Input("x")
    with pytest.raises(TypeError, match="add takes 2 input\\(s\\); it was given 3"):
        mg.add(x, x, x)
    with pytest.raises(TypeError, match="reshape takes 1 input\\(s\\) and then the attributes shape"):
        mg.reshape(x, (2,), 5)
    assert mg.max(x, 1, True).attrs == {"axis": 1, "keepdims": True}
