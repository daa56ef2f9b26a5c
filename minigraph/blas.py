"""One BLAS thread for the course's model calls.

numpy hands a matrix product to a BLAS library (OpenBLAS), which starts as many threads as
the machine has cores. For the small matrices of a character model, one sample or one
evaluation, those threads mostly wait for one another, and on a busy 2-core machine they wait
for the other programs too, so that sampling with two threads can take many times as long as
with one. So every sampler and model call of ``minigraph.charlm``, ``minigraph.gpt`` and
``minigraph.translate`` runs under ``one_thread``, and the answers do not depend on how many
threads a machine would pick.

    @one_thread
    def mean_loss(model, ids): ...      # runs with one BLAS thread, then restores the setting
"""

import functools

from threadpoolctl import threadpool_limits


def one_thread(function):
    """``function``, run with BLAS limited to one thread (the previous limit comes back after)."""
    @functools.wraps(function)
    def limited(*args, **kwargs):
        with threadpool_limits(1, user_api="blas"):
            return function(*args, **kwargs)
    return limited
