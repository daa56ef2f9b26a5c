"""tools/other_machine.py: the settings under which `make test` runs the notebooks a second time
differ from this machine's in each of the three things it claims, and numpy and OpenBLAS obey them."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy._core._multiarray_umath as umath
from threadpoolctl import threadpool_info

TOOL = Path(__file__).resolve().parents[1] / "tools" / "other_machine.py"
spec = importlib.util.spec_from_file_location("other_machine", TOOL)
other_machine = importlib.util.module_from_spec(spec)
spec.loader.exec_module(other_machine)

# what a fresh Python started with those settings runs
PROBE = """
import json
import numpy._core._multiarray_umath as umath
from threadpoolctl import threadpool_info
blas = [i for i in threadpool_info() if i["internal_api"] == "openblas"]
print(json.dumps({"kernel": blas[0].get("architecture"), "threads": blas[0]["num_threads"],
                  "features": {k: v for k, v in umath.__cpu_features__.items()}}))
"""


def settings():
    out = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True, check=True).stdout
    return dict(item.split("=", 1) for item in out.split())


def run_with(env):
    out = subprocess.run([sys.executable, "-c", PROBE], env={**os.environ, **env},
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def test_the_other_machine_differs_in_blas_kernel_simd_level_and_threads():
    env = settings()
    assert set(env) == {"OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES", "OPENBLAS_NUM_THREADS"}
    here = [i for i in threadpool_info() if i["internal_api"] == "openblas"][0]
    other = run_with(env)
    assert other["kernel"].lower() == env["OPENBLAS_CORETYPE"].lower() != here["architecture"].lower()
    assert other["threads"] == int(env["OPENBLAS_NUM_THREADS"]) != run_with({})["threads"]
    disabled = env["NPY_DISABLE_CPU_FEATURES"].split(",")
    assert disabled and all(umath.__cpu_features__[f] for f in disabled)        # present here...
    assert not any(other["features"][f] for f in disabled)                      # ...and off there


def test_one_simd_level_down_keeps_the_narrowest_target_unless_it_is_the_only_one():
    another_kernel, simd_one_level_down = other_machine.another_kernel, other_machine.simd_one_level_down
    dispatch = ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]
    avx512 = {"X86_V3": True, "X86_V4": True, "AVX512_ICL": True, "AVX512_SPR": False}
    assert simd_one_level_down(dispatch, avx512) == ["X86_V4", "AVX512_ICL"]
    assert simd_one_level_down(dispatch, {"X86_V3": True}) == ["X86_V3"]
    assert simd_one_level_down(dispatch, {}) == []
    assert another_kernel("SkylakeX", True) == "Sandybridge"
    assert another_kernel("Sandybridge", True) == "Nehalem"
    assert another_kernel("Nehalem", False) == "Prescott"
