"""Print the environment under which this machine computes like another one.

    env $(python tools/other_machine.py) jupyter ...      # numbers as another machine makes them

Three things decide the last bits of a numpy program's numbers, and each differs between the
machines a course runs on:

* the BLAS kernel OpenBLAS picks for the processor (Haswell, SkylakeX, Zen, ...), which orders
  the sums of a matrix product its own way and may fuse multiply-adds;
* the widest SIMD numpy's own loops use (AVX-512, AVX2, SSE), whose ``exp``, ``tanh`` and sums
  round differently in the last bit;
* the number of BLAS threads.

This prints ``OPENBLAS_CORETYPE``, ``NPY_DISABLE_CPU_FEATURES`` and ``OPENBLAS_NUM_THREADS``
set to values that differ from this machine's on all three: another BLAS kernel the processor
can run, numpy one SIMD level down, and one thread where the default is more (two where it is
one). ``make test`` runs the notebooks once more under them: a stored number that holds on
this machine only fails there. The kernel is checked in a fresh Python: if OpenBLAS ignores
the setting (a build without its dynamic kernels), the script says so on stderr and exits 1.
"""

import json
import os
import subprocess
import sys

import numpy._core._multiarray_umath as umath
from threadpoolctl import threadpool_info

PROBE = ("import json, threadpoolctl; print(json.dumps([i.get('architecture') for i in "
         "threadpoolctl.threadpool_info() if i['internal_api'] == 'openblas']))")


def openblas_kernels():
    """The kernel names of the OpenBLAS libraries loaded in this process."""
    return [i.get("architecture") for i in threadpool_info() if i["internal_api"] == "openblas"]


def another_kernel(current, has_avx):
    """An OpenBLAS kernel this processor can run that is not ``current``."""
    choices = ["Sandybridge", "Nehalem"] if has_avx else ["Nehalem", "Prescott"]
    return next(k for k in choices if k.lower() != str(current).lower())


def simd_one_level_down(dispatch, present):
    """numpy's dispatch targets to turn off so that it runs one SIMD level below its widest:
    all present targets but the narrowest, or that one when it is the only one."""
    present = [f for f in dispatch if present.get(f)]
    return present[1:] if len(present) > 1 else present


def settings():
    numpy_uses = umath.__cpu_features__
    current = (openblas_kernels() or [None])[0]
    threads = os.cpu_count() or 1
    return {"OPENBLAS_CORETYPE": another_kernel(current, numpy_uses.get("AVX")),
            "NPY_DISABLE_CPU_FEATURES": ",".join(simd_one_level_down(umath.__cpu_dispatch__, numpy_uses)),
            "OPENBLAS_NUM_THREADS": "1" if threads > 1 else "2"}


def main():
    chosen = {k: v for k, v in settings().items() if v}
    probe = subprocess.run([sys.executable, "-c", PROBE], env={**os.environ, **chosen},
                           capture_output=True, text=True, check=True)
    kernels = json.loads(probe.stdout)
    if kernels and any(k.lower() != chosen["OPENBLAS_CORETYPE"].lower() for k in kernels):
        print(f"other_machine: OpenBLAS ignored OPENBLAS_CORETYPE={chosen['OPENBLAS_CORETYPE']} "
              f"(it runs {kernels}): this build has one kernel only", file=sys.stderr)
        sys.exit(1)
    print(" ".join(f"{k}={v}" for k, v in chosen.items()))


if __name__ == "__main__":
    main()
