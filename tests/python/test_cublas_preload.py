"""The cuBLAS drop-in (libironkernels_cublas.so under LD_PRELOAD): it exports cuBLAS's DGEMM entry
points and nothing else; on a GPU, a real cuBLAS client's (PyTorch's, CuPy's, a C program's) float64
products through it equal a direct ironkernels.gemm call under Contract.native() bit for bit, and the
calls it does not serve (float32, complex128, small products, device-side scalars) are cuBLAS's own,
unchanged."""
import ctypes
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import ironkernels as ik

PRELOAD = ik.cublas_preload()
needs_preload = pytest.mark.skipif(PRELOAD is None, reason="a CPU-only build has no cuBLAS drop-in")
EXPORTED = ("cublasDgemm_v2", "cublasDgemm_v2_64", "cublasGemmEx", "cublasDgemmStridedBatched")


@needs_preload
def test_exports_the_cublas_entry_points_only():
    lib = ctypes.CDLL(PRELOAD, mode=os.RTLD_LOCAL)
    for name in EXPORTED:
        assert hasattr(lib, name), name
    for hidden in ("cudaMalloc", "cudaMallocAsync", "cudaGetDevice", "cublasSgemm_v2", "cublasZgemm_v2"):
        assert not hasattr(lib, hidden), f"{hidden} must not be exported (it would replace the program's)"
    if shutil.which("nm"):
        names = subprocess.run(["nm", "-D", "--defined-only", PRELOAD], capture_output=True, text=True).stdout.split()
        exported = {n for n in names if n.startswith("cublas")}
        assert exported == set(EXPORTED)
        assert not [n for n in names if n.startswith("cuda") or n.startswith("_ZN11ironkernels")]


def run_preloaded(script: str, *args: str, **env) -> subprocess.CompletedProcess:
    environ = dict(os.environ, LD_PRELOAD=PRELOAD, IRONKERNELS_CUBLAS_REPORT="1", **env)
    return subprocess.run([sys.executable, "-c", script, *args], env=environ, capture_output=True, text=True,
                          timeout=600)


# A client's X @ Y on row-major arrays reaches cuBLAS as the column-major Yᵀ·Xᵀ: ik.gemm(Y.T, X.T).T is
# the same product, line for line, so the same bits.
TORCH_CLIENT = """
import sys, numpy as np, torch, ironkernels as ik
out = sys.argv[1]
g = torch.Generator(device="cuda").manual_seed(1)
a = torch.randn(1024, 768, dtype=torch.float64, device="cuda", generator=g)
b = torch.randn(768, 512, dtype=torch.float64, device="cuda", generator=g)
np.save(out + "/mm.npy", (a @ b).cpu().numpy())
np.save(out + "/mm_t.npy", (a.T @ a).cpu().numpy())  # a transposed operand
np.save(out + "/direct.npy", ik.gemm(b.T, a.T).T.cpu().numpy())
np.save(out + "/direct_t.npy", ik.gemm(a.T, a).T.cpu().numpy())
np.save(out + "/small.npy", (a[:64, :64] @ b[:64, :64]).cpu().numpy())
np.save(out + "/single.npy", (a.float() @ b.float()).cpu().numpy())
np.save(out + "/complex.npy", (a[:512, :512].to(torch.complex128) @ b[:512].to(torch.complex128)).cpu().numpy())
"""


@needs_preload
@pytest.mark.gpu
def test_torch_float64_matmul_through_the_drop_in(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    (tmp_path / "preloaded").mkdir()
    (tmp_path / "plain").mkdir()
    done = run_preloaded(TORCH_CLIENT, str(tmp_path / "preloaded"), IRONKERNELS_CUBLAS_MIN_DIM="500")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "emulated" in done.stderr and "passed through" in done.stderr, done.stderr[-3000:]
    plain = subprocess.run([sys.executable, "-c", TORCH_CLIENT, str(tmp_path / "plain")], capture_output=True,
                           text=True, timeout=600)
    assert plain.returncode == 0, plain.stderr[-3000:]
    load = lambda which, name: np.load(tmp_path / which / f"{name}.npy")  # noqa: E731
    np.testing.assert_array_equal(load("preloaded", "mm"), load("preloaded", "direct"))
    np.testing.assert_array_equal(load("preloaded", "mm_t"), load("preloaded", "direct_t"))
    for name in ("small", "single", "complex"):  # not served: cuBLAS's own bits
        np.testing.assert_array_equal(load("preloaded", name), load("plain", name))


CUPY_CLIENT = """
import numpy as np, cupy as cp, ironkernels as ik
rng = np.random.default_rng(2)
a, b = cp.asarray(rng.standard_normal((640, 700))), cp.asarray(rng.standard_normal((700, 600)))
got, want = cp.asnumpy(a @ b), cp.asnumpy(ik.gemm(b.T, a.T).T)
assert np.array_equal(got, want), float(np.abs(got - want).max())
print("ok")
"""


@needs_preload
@pytest.mark.gpu
def test_cupy_float64_matmul_through_the_drop_in():
    cp = pytest.importorskip("cupy")
    try:
        cp.cuda.runtime.getDeviceCount()
    except Exception:
        pytest.skip("no GPU")
    done = run_preloaded(CUPY_CLIENT, IRONKERNELS_CUBLAS_MIN_DIM="500")
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
    assert "emulated" in done.stderr


C_CLIENT = os.path.join(os.path.dirname(__file__), "..", "cpp", "cublas_client.cu")


@needs_preload
@pytest.mark.gpu
def test_a_c_program_through_the_drop_in(tmp_path):
    """A small C program linked against cuBLAS (tests/cpp/cublas_client.cu): its DGEMM (with beta,
    transposes and leading dimensions larger than the rows), its strided-batched DGEMM, and a
    device-pointer-mode call it must pass through; the program writes its results for the check."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("no nvcc to build the C client")
    exe = tmp_path / "cublas_client"
    built = subprocess.run([nvcc, "-O2", C_CLIENT, "-o", str(exe), "-lcublas"], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    plain = subprocess.run([str(exe), str(tmp_path / "plain")], capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0, plain.stderr
    environ = dict(os.environ, LD_PRELOAD=PRELOAD, IRONKERNELS_CUBLAS_REPORT="1", IRONKERNELS_CUBLAS_MIN_DIM="300")
    done = subprocess.run([str(exe), str(tmp_path / "preloaded")], env=environ, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "cublasDgemm_v2" in done.stderr and "emulated" in done.stderr and "device memory" in done.stderr
    read = lambda name, which: np.fromfile(tmp_path / f"{which}.{name}", dtype=np.float64)  # noqa: E731
    m, n, k, lda, ldb, ldc = 400, 350, 300, 420, 310, 410
    # Column-major storage: A is k × m (op(A) = Aᵀ), B k × n, C m × n, each with its leading dimension.
    op_a = lambda a: a.reshape(m, lda)[:, :k]  # noqa: E731
    op_b = lambda b: b.reshape(n, ldb)[:, :k].T  # noqa: E731
    as_c = lambda c: c.reshape(n, ldc)[:, :m].T  # noqa: E731
    want = ik.gemm(op_a(read("a", "plain")), op_b(read("b", "plain")), c=as_c(read("c0", "plain")).copy(), alpha=1.5,
                   beta=-0.5)
    np.testing.assert_array_equal(as_c(read("c", "preloaded")), want)
    np.testing.assert_array_equal(read("c_device_scalars", "preloaded"), read("c_device_scalars", "plain"))
    a_b, b_b, c_b = (read(name, "preloaded").reshape(3, -1) for name in ("a_batched", "b_batched", "c_batched"))
    for i in range(3):
        np.testing.assert_array_equal(as_c(c_b[i]), ik.gemm(op_a(a_b[i]), op_b(b_b[i])))
