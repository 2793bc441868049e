"""The cuBLAS drop-in (libironkernels_cublas.so under LD_PRELOAD): it exports cuBLAS's DGEMM, ZGEMM
and SGEMM entry points and nothing else; on a GPU, a real cuBLAS client's (PyTorch's, CuPy's, a C
program's) float64, complex128 and float32 products through it equal a direct ironkernels.gemm call
on the same operands (Contract.native()) bit for bit, and the calls it does not serve (small products,
TF32 and other reduced-precision float32 arithmetic, device-side scalars) are cuBLAS's own, unchanged."""
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
EXPORTED = ("cublasDgemm_v2", "cublasDgemm_v2_64", "cublasDgemmStridedBatched", "cublasZgemm_v2", "cublasZgemm_v2_64",
            "cublasZgemmStridedBatched", "cublasSgemm_v2", "cublasSgemm_v2_64", "cublasSgemmStridedBatched",
            "cublasGemmEx")


@needs_preload
def test_exports_the_cublas_entry_points_only():
    lib = ctypes.CDLL(PRELOAD, mode=os.RTLD_LOCAL)
    for name in EXPORTED:
        assert hasattr(lib, name), name
    for hidden in ("cudaMalloc", "cudaMallocAsync", "cudaFreeAsync", "cudaGetDevice", "cublasCgemm_v2", "cublasHgemm"):
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
# the same product, line for line, so the same bits. Each served product is saved beside its direct
# call ("<name>" and "<name>_direct"); the others are compared with a run without the drop-in.
TORCH_CLIENT = """
import sys, numpy as np, torch, ironkernels as ik
out = sys.argv[1]
save = lambda name, x: np.save(f"{out}/{name}.npy", x.cpu().numpy())
g = torch.Generator(device="cuda").manual_seed(1)
randn = lambda *shape, dtype=torch.float64: torch.randn(*shape, dtype=dtype, device="cuda", generator=g)
a, b = randn(1024, 768), randn(768, 512)
save("mm", a @ b)
save("mm_direct", ik.gemm(b.T, a.T).T)
save("mm_t", a.T @ a)  # a transposed operand
save("mm_t_direct", ik.gemm(a.T, a).T)
save("small", a[:64, :64] @ b[:64, :64])
# float32 (cublasSgemm_v2, cublasSgemmStridedBatched): ik.gemm's float32 path
af, bf, cf = a.float(), b.float(), randn(1024, 512, dtype=torch.float32)
save("single", af @ bf)
save("single_direct", ik.gemm(bf.T, af.T).T)
save("single_addmm", torch.addmm(cf, af, bf, beta=-0.5, alpha=1.5))
save("single_addmm_direct", ik.gemm(bf.T, af.T, c=cf.T, alpha=1.5, beta=-0.5).T)
a3, b3 = randn(3, 520, 560, dtype=torch.float32), randn(3, 560, 540, dtype=torch.float32)
save("single_bmm", torch.bmm(a3, b3))
save("single_bmm_direct", torch.stack([ik.gemm(b3[i].T, a3[i].T).T for i in range(3)]))
torch.backends.cuda.matmul.allow_tf32 = True  # TF32 math mode on the handle: cuBLAS's own
save("tf32", af @ bf)
torch.backends.cuda.matmul.allow_tf32 = False
# complex128 (cublasZgemm_v2, cublasZgemmStridedBatched): ik.gemm's complex path
za, zb = randn(640, 520, dtype=torch.complex128), randn(520, 600, dtype=torch.complex128)
zc, zd = randn(520, 640, dtype=torch.complex128), randn(640, 600, dtype=torch.complex128)
save("complex", za @ zb)
save("complex_direct", ik.gemm(zb.T, za.T).T)
save("complex_conj", zc.mH @ zb)  # a conjugate-transposed operand (CUBLAS_OP_C)
save("complex_conj_direct", ik.gemm(zb.T, zc.conj().resolve_conj().T, trans_b=True).T)
save("complex_addmm", torch.addmm(zd, za, zb, beta=-0.5, alpha=1.5))
save("complex_addmm_direct", ik.gemm(zb.T, za.T, c=zd.T, alpha=1.5, beta=-0.5).T)
za3, zb3 = randn(3, 520, 560, dtype=torch.complex128), randn(3, 560, 540, dtype=torch.complex128)
save("complex_bmm", torch.bmm(za3, zb3))
save("complex_bmm_direct", torch.stack([ik.gemm(zb3[i].T, za3[i].T).T for i in range(3)]))
"""
SERVED = ("mm", "mm_t", "single", "single_addmm", "single_bmm", "complex", "complex_conj", "complex_addmm",
          "complex_bmm")


@needs_preload
@pytest.mark.gpu
def test_torch_matmul_through_the_drop_in(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    (tmp_path / "preloaded").mkdir()
    (tmp_path / "plain").mkdir()
    done = run_preloaded(TORCH_CLIENT, str(tmp_path / "preloaded"), IRONKERNELS_CUBLAS_MIN_DIM="500")
    assert done.returncode == 0, done.stderr[-3000:]
    for routine in ("cublasDgemm_v2", "cublasSgemm_v2", "cublasSgemmStridedBatched", "cublasZgemm_v2",
                    "cublasZgemmStridedBatched"):
        assert any(routine in line and "emulated" in line for line in done.stderr.splitlines()), routine
    assert "passed through: below IRONKERNELS_CUBLAS_MIN_DIM" in done.stderr, done.stderr[-3000:]
    assert "passed through: a reduced-precision compute type" in done.stderr, done.stderr[-3000:]
    plain = subprocess.run([sys.executable, "-c", TORCH_CLIENT, str(tmp_path / "plain")], capture_output=True,
                           text=True, timeout=600)
    assert plain.returncode == 0, plain.stderr[-3000:]
    load = lambda which, name: np.load(tmp_path / which / f"{name}.npy")  # noqa: E731
    for name in SERVED:
        np.testing.assert_array_equal(load("preloaded", name), load("preloaded", name + "_direct"), err_msg=name)
    for name in ("small", "tf32"):  # not served: cuBLAS's own bits
        np.testing.assert_array_equal(load("preloaded", name), load("plain", name), err_msg=name)


CUPY_CLIENT = """
import numpy as np, cupy as cp, ironkernels as ik
rng = np.random.default_rng(2)
def same(got, want):
    got, want = cp.asnumpy(got), cp.asnumpy(want)
    assert np.array_equal(got, want), float(np.abs(got - want).max())
normal = lambda *shape: cp.asarray(rng.standard_normal(shape))
a, b = normal(640, 700), normal(700, 600)
same(a @ b, ik.gemm(b.T, a.T).T)  # cublasGemmEx, CUDA_R_64F
za, zb = a + 1j * normal(640, 700), b - 1j * normal(700, 600)
same(za @ zb, ik.gemm(zb.T, za.T).T)  # cublasGemmEx, CUDA_C_64F
af, bf = a.astype(cp.float32), b.astype(cp.float32)
same(af @ bf, ik.gemm(bf.T, af.T).T)  # cublasGemmEx, CUDA_R_32F with CUBLAS_COMPUTE_32F
print("ok")
"""


@needs_preload
@pytest.mark.gpu
def test_cupy_matmul_through_the_drop_in():
    cp = pytest.importorskip("cupy")
    try:
        cp.cuda.runtime.getDeviceCount()
    except Exception:
        pytest.skip("no GPU")
    done = run_preloaded(CUPY_CLIENT, IRONKERNELS_CUBLAS_MIN_DIM="500")
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
    served = [line for line in done.stderr.splitlines() if "cublasGemmEx" in line and "emulated" in line]
    assert len(served) >= 3, done.stderr[-3000:]


# CUPY_TF32=1: CuPy's float32 products ask cublasGemmEx for CUBLAS_COMPUTE_32F_FAST_TF32.
CUPY_TF32_CLIENT = """
import sys, numpy as np, cupy as cp
rng = np.random.default_rng(3)
a, b = (cp.asarray(rng.standard_normal(shape), dtype=cp.float32) for shape in ((640, 700), (700, 600)))
np.save(sys.argv[1], cp.asnumpy(a @ b))
"""


@needs_preload
@pytest.mark.gpu
def test_cupy_tf32_passes_through(tmp_path):
    cp = pytest.importorskip("cupy")
    try:
        cp.cuda.runtime.getDeviceCount()
    except Exception:
        pytest.skip("no GPU")
    done = run_preloaded(CUPY_TF32_CLIENT, str(tmp_path / "preloaded.npy"), IRONKERNELS_CUBLAS_MIN_DIM="500",
                         CUPY_TF32="1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "cublasGemmEx" in done.stderr and "passed through: a reduced-precision compute type" in done.stderr
    assert "emulated" not in done.stderr, done.stderr[-3000:]
    plain = subprocess.run([sys.executable, "-c", CUPY_TF32_CLIENT, str(tmp_path / "plain.npy")],
                           env=dict(os.environ, CUPY_TF32="1"), capture_output=True, text=True, timeout=600)
    assert plain.returncode == 0, plain.stderr[-3000:]
    np.testing.assert_array_equal(np.load(tmp_path / "preloaded.npy"), np.load(tmp_path / "plain.npy"))


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
