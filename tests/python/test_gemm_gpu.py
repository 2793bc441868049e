"""gemm on CUDA: bit for bit the CPU reference (which the CPU tests check against long double), run to
run identical, every layout, edge case and error; outputs poisoned before each run."""
import numpy as np
import pytest

import ironkernels
from ironkernels import Contract, gemm
from ironkernels.reference import gemm_family

from device_arrays import get

pytestmark = pytest.mark.gpu


def assert_bitwise(got, want):
    got = get(got)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint64), np.asarray(want).view(np.uint64))


SHAPES = [(1, 1, 1), (1, 7, 3), (5, 1, 9), (17, 33, 1), (33, 70, 45), (128, 128, 128), (257, 96, 300), (512, 512, 512)]
PRODUCTS = {"auto": ("cublasGemmEx", "cublasLt", "wgmma"), "mma": ("mma.sync",), "wgmma": ("wgmma",),
            "cublas": ("cublasGemmEx", "cublasLt")}


def skip_unavailable(engine):
    from ironkernels import _core

    if engine != "auto" and not _core.gemm_engine_available(engine, 0):
        pytest.skip(f"the {engine} engine does not run on this GPU / build")


@pytest.mark.parametrize("m, n, k", SHAPES)
@pytest.mark.parametrize("scaling", ["fast", "accurate", "norm"])
@pytest.mark.parametrize("engine", ["auto", "mma", "wgmma"])
def test_bitwise_equal_to_cpu(dev, rng, m, n, k, scaling, engine):
    skip_unavailable(engine)
    # two moduli: fast keeps fewer bits than accurate's magnitude bounds resolve (accurate keeps fast's)
    for phi, moduli in ((0.5, 14), (2.0, 16), (4.0, 20), (1.0, 2)):
        a, b = gemm_family(rng, (m, k), phi), gemm_family(rng, (k, n), phi)
        contract = Contract(moduli=moduli, scaling=scaling)
        want, rep_cpu = gemm(a, b, contract=contract, report=True)
        out = dev.poisoned((m, n))
        got, rep = gemm(dev.put(a), dev.put(b), contract=contract, out=out, report=True, engine=engine)
        assert got is out
        assert_bitwise(got, want)
        for key in ("moduli", "bits_a", "bits_b", "nonfinite_elements"):
            assert rep[key] == rep_cpu[key], key
        assert rep["backend"] == "cuda" and rep["products_ms"] >= 0 and rep["products"] in PRODUCTS[engine]


@pytest.mark.parametrize("m, n, k", [(130, 270, 200), (300, 129, 1040), (16, 20, 70000), (600, 650, 700), (2300, 300, 64)])
@pytest.mark.parametrize("scaling", ["fast", "accurate", "norm"])
@pytest.mark.parametrize("engine", ["mma", "wgmma"])
def test_own_products_bitwise_equal_to_cpu_and_cublas(dev, rng, m, n, k, scaling, engine):
    """The library's engines past their tiles' edges (m, n not multiples of 128 / 256, k of 64 /
    128), K past one chunk (2^16), more tiles than SMs (600 × 650 and 2300 × 300 under 16 moduli:
    the mma engine's blocks run several tiles each), under every scaling (accurate's bound product
    has k / 4 positions): the CPU's bits, and the cuBLAS engine's."""
    skip_unavailable(engine)
    a, b = gemm_family(rng, (m, k), 1.0), gemm_family(rng, (k, n), 1.0)
    contract = Contract(moduli=16, scaling=scaling)
    want = gemm(a, b, contract=contract)
    ga, gb = dev.put(a), dev.put(b)
    for products in (engine, "cublas"):
        assert_bitwise(gemm(ga, gb, contract=contract, out=dev.poisoned((m, n)), engine=products), want)


@pytest.mark.parametrize("scaling", ["fast", "accurate", "norm"])
@pytest.mark.parametrize("engine", ["cublas", "wgmma"])
def test_column_blocks_bitwise_equal_to_cpu(dev, rng, scaling, engine):
    """Wide C with k in one chunk: cuBLAS runs it in column slabs (n = 12280: two slabs of 6144, the
    last one ragged), each reconstructed from its own INT32 products; the wgmma engine writes residue
    planes. Both also in forced column blocks (inside a slab for cuBLAS)."""
    from ironkernels import _core

    skip_unavailable(engine)
    m, n, k = 19, 12280, 40
    a, b = gemm_family(rng, (m, k), 2.0), gemm_family(rng, (k, n), 2.0)
    contract = Contract(moduli=15, scaling=scaling)
    want = gemm(a, b, contract=contract)
    got = gemm(dev.put(a), dev.put(b), contract=contract, out=dev.poisoned((m, n)), engine=engine)
    assert_bitwise(got, want)
    plan = _core.GemmPlan(m, n, k, False, False, 15, scaling, 0, engine)
    ws = dev.empty((plan.workspace_bytes,), "uint8")
    stream = dev.current_stream()
    plan.tune(ws, stream, columns_per_call=2048)
    blocked = dev.poisoned((m, n))
    plan.run(dev.put(a), dev.put(b), blocked, 1.0, 0.0, ws, stream)
    assert plan.report(ws, stream)["product_column_blocks"] == 6
    assert_bitwise(blocked, want)


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("order", ["C", "F"])
def test_layouts_alpha_beta(dev, rng, trans_a, trans_b, order):
    m, n, k = 37, 29, 61
    a = gemm_family(rng, (k, m) if trans_a else (m, k), 1.0)
    b = gemm_family(rng, (n, k) if trans_b else (k, n), 1.0)
    c = gemm_family(rng, (m, n), 1.0)
    kw = dict(trans_a=trans_a, trans_b=trans_b, alpha=-1.5, beta=0.25, contract=Contract(moduli=15))
    want = gemm(a, b, c=c, **kw)
    got = gemm(dev.put(a, order), dev.put(b, order), c=dev.put(c, order), **kw)
    assert_bitwise(got, want)
    c_gpu = dev.put(c, order)
    gemm(dev.put(a, order), dev.put(b, order), c=c_gpu, out=c_gpu, **kw)  # in place on c
    assert_bitwise(c_gpu, want)


def test_strided_views(dev, rng):
    a, b = gemm_family(rng, (40, 90), 1.0), gemm_family(rng, (60, 90), 1.0)  # views: 20x30 and 30x45
    want = gemm(a[::2, 1::3], b[::2, ::2], contract=Contract(moduli=14))
    got = gemm(dev.put(a)[::2, 1::3], dev.put(b)[::2, ::2], contract=Contract(moduli=14))
    assert_bitwise(got, want)


def test_run_to_run_identical(dev, rng):
    a, b = dev.put(gemm_family(rng, (300, 400), 2.0)), dev.put(gemm_family(rng, (400, 350), 2.0))
    first = gemm(a, b)
    for _ in range(3):
        assert_bitwise(gemm(a, b), get(first))


def test_nonfinite_zero_lines_subnormals_and_overflow(dev, rng):
    m, n, k = 24, 19, 50
    a, b = gemm_family(rng, (m, k), 1.0), gemm_family(rng, (k, n), 1.0)
    a[3, 7], a[5, :] = np.inf, 0.0  # an Inf row, a zero row
    b[2, 4], b[:, 6] = np.nan, 0.0  # a NaN column, a zero column
    a[9] *= 1e-310 / np.abs(a[9]).max()  # a subnormal row
    a[11] *= 1e300  # products near overflow
    b[:, 8] *= 1e10
    for scaling in ("fast", "accurate", "norm"):
        want, rep_cpu = gemm(a, b, contract=Contract(moduli=16, scaling=scaling), report=True)
        got, rep = gemm(dev.put(a), dev.put(b), contract=Contract(moduli=16, scaling=scaling), report=True)
        assert_bitwise(got, want)
        assert rep["nonfinite_elements"] == rep_cpu["nonfinite_elements"] == n + m - 1


def test_long_k_takes_several_chunks(dev, rng):
    m, n, k = 6, 5, 70_001  # more than 2^16: INT32 products in two chunks
    a, b = gemm_family(rng, (m, k), 0.5), gemm_family(rng, (k, n), 0.5)
    for scaling in ("fast", "accurate", "norm"):
        want = gemm(a, b, contract=Contract(moduli=18, scaling=scaling))
        got = gemm(dev.put(a), dev.put(b), contract=Contract(moduli=18, scaling=scaling))
        assert_bitwise(got, want)


@pytest.mark.parametrize("k", [1024, 65536 + 1000])
def test_tuned_products_give_the_same_bits(dev, rng, k):
    """tune() may move the INT8 products to a cuBLASLt algorithm or to column blocks; the INT32
    products are exact, so the result must not change by a bit (shapes of 2^30 multiply-adds and more
    are timed; with k over 2^16 both product shapes, the full and the last chunk, are)."""
    from ironkernels import _core

    m = n = 1024
    a = dev.put(rng.standard_normal((m, k)))
    b = dev.put(rng.standard_normal((k, n)), "F")  # column-major
    plan = _core.GemmPlan(m, n, k, False, False, 14, "accurate", 0, "cublas")
    ws = dev.empty((plan.workspace_bytes,), "uint8")
    stream = dev.current_stream()
    untuned, tuned = dev.poisoned((m, n)), dev.poisoned((m, n))
    plan.run(a, b, untuned, 1.0, 0.0, ws, stream)
    assert not plan.tuned and plan.report(ws, stream)["products"] == "cublasGemmEx"
    plan.tune(ws, stream)
    plan.run(a, b, tuned, 1.0, 0.0, ws, stream)
    assert plan.tuned and plan.report(ws, stream)["products"] in ("cublasGemmEx", "cublasLt")
    assert_bitwise(tuned, get(untuned))
    # The products in column blocks (tune() tries ~8192-column blocks on wide C; forced here).
    blocked = dev.poisoned((m, n))
    plan.tune(ws, stream, columns_per_call=256)
    plan.run(a, b, blocked, 1.0, 0.0, ws, stream)
    assert plan.report(ws, stream)["product_column_blocks"] == 4
    assert_bitwise(blocked, get(untuned))
    with pytest.raises(ValueError, match="columns_per_call"):
        plan.tune(ws, stream, columns_per_call=100)
    public = gemm(a, b, contract=Contract(moduli=14, scaling="accurate"))  # tunes its own plan on first use
    assert_bitwise(public, get(untuned))


def test_plans_are_shared_tuned_once_and_evicted(dev, rng):
    """gemm_plan: one plan per key (tuning it through one holder tunes it for all), a new one once
    kGemmPlanCacheSize other keys came after it (the old one lives on with its holder); gemm() runs
    the cached plan and tunes it on its first call."""
    from ironkernels import _core

    _core.gemm_plan_cache_clear()
    key = (1024, 1024, 1024, False, False, 14, "fast", 0, "cublas", False)
    first, again = _core.gemm_plan(*key), _core.gemm_plan(*key)
    assert not first.tuned and not again.tuned
    ws = dev.empty((first.workspace_bytes,), "uint8")
    stream = dev.current_stream()
    again.tune_once(ws, stream)
    assert first.tuned
    for n in range(16, 16 * 9, 16):
        _core.gemm_plan(64, n, 64, False, False, 14, "fast", 0, "cublas", False)
    assert not _core.gemm_plan(*key).tuned and first.tuned
    a = dev.put(rng.standard_normal((1024, 1024)))
    gemm(a, a, contract=Contract(moduli=14, scaling="fast"), engine="cublas")
    assert _core.gemm_plan(*key).tuned


def test_threads_share_a_plan(dev, rng):
    """Four threads, each on its own stream, call gemm on one shape (one cached plan, its cuBLAS
    handle taken in turn, tuned by whichever comes first): every result is the CPU reference's."""
    import threading

    from ironkernels import _core

    _core.gemm_plan_cache_clear()
    inputs = [(gemm_family(rng, (96, 1200), 1.0), gemm_family(rng, (1200, 80), 1.0)) for _ in range(4)]
    want = [gemm(a, b) for a, b in inputs]
    got, errors = [None] * len(inputs), []
    streams = [dev.stream() for _ in inputs]

    def work(i):
        _, current, _ = streams[i]
        try:
            with current:
                a, b = dev.put(inputs[i][0]), dev.put(inputs[i][1])
                outs = [gemm(a, b, engine="cublas") for _ in range(5)]
                got[i] = [get(out) for out in outs]
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for outs, w in zip(got, want):
        for out in outs:
            assert_bitwise(out, w)


def test_beta_zero_ignores_nan_in_c_and_empty_shapes(dev, rng):
    a, b = gemm_family(rng, (4, 3), 1.0), gemm_family(rng, (3, 5), 1.0)
    c = dev.poisoned((4, 5))
    got = gemm(dev.put(a), dev.put(b), c=c, beta=0.0)
    assert_bitwise(got, gemm(a, b))
    assert get(gemm(dev.put(np.zeros((3, 0))), dev.put(np.zeros((0, 2))))).shape == (3, 2)
    assert (get(gemm(dev.put(np.zeros((3, 0))), dev.put(np.zeros((0, 2))))) == 0).all()
    assert get(gemm(dev.put(np.zeros((0, 4))), dev.put(np.zeros((4, 2))))).shape == (0, 2)
    empty, rep = gemm(dev.put(np.zeros((3, 4))), dev.put(np.zeros((4, 0))), report=True)
    assert get(empty).shape == (3, 0) and rep["product_column_blocks"] == 1


def test_streams(dev, rng):
    a, b = gemm_family(rng, (64, 80), 1.0), gemm_family(rng, (80, 48), 1.0)
    want = gemm(a, b)
    _, current, handle = dev.stream()
    with current:
        ad, bd = dev.put(a), dev.put(b)
        got = gemm(ad, bd)  # the current stream
    dev.synchronize()
    assert_bitwise(got, want)
    got = gemm(dev.put(a), dev.put(b), stream=handle)
    dev.synchronize()
    assert_bitwise(got, want)


def test_cupy_in_cupy_out(rng):
    a, b = gemm_family(rng, (64, 80), 1.0), gemm_family(rng, (80, 48), 1.0)
    want = gemm(a, b)
    cupy = pytest.importorskip("cupy")
    got = gemm(cupy.asarray(a), cupy.asarray(b))
    assert isinstance(got, cupy.ndarray)
    assert_bitwise(cupy.asnumpy(got), want)


def test_errors_leave_out_untouched(dev, rng):
    a, b = dev.put(np.ones((4, 3))), dev.put(np.ones((3, 5)))
    out = dev.full((4, 5), 7.0)
    with pytest.raises(ValueError, match="one device"):
        gemm(a, np.ones((3, 5)), out=out)
    with pytest.raises(TypeError, match="float64"):
        gemm(dev.put(np.ones((4, 3), np.float32)), dev.put(np.ones((3, 5), np.float32)), out=out)
    with pytest.raises(ValueError, match="no implicit transfers"):
        gemm(a, b, out=out, backend="cpu")
    sq = dev.put(np.ones((4, 4)))
    with pytest.raises(ValueError, match="overlaps"):
        gemm(sq, dev.copy(sq), out=sq)
    assert (get(sq) == 1.0).all() and (get(out) == 7.0).all()


REPORT_KEYS = ("moduli", "path", "bits_a", "bits_b", "rtol", "native_rows", "native_cols", "native_row_indices",
               "native_col_indices", "native_elements", "nonfinite_elements")


def assert_report_matches_cpu(rep, rep_cpu, k):
    """The decisions are the CPU's; so is the verdict where no finite element went native (the GPU's
    native elements are cuBLAS DGEMM's, within γ_k, the CPU's a compensated dot product's)."""
    for key in REPORT_KEYS:
        assert rep[key] == rep_cpu[key], (key, rep[key], rep_cpu[key])
    if rep["native_elements"] == rep["nonfinite_elements"]:
        assert (rep["certified"], rep["bound"]) == (rep_cpu["certified"], rep_cpu["bound"])
    else:
        gamma = max(k, 1) * 2.0**-53 / (1 - max(k, 1) * 2.0**-53)
        assert rep["certified"] == (gamma <= rep["rtol"]) and rep["bound"] == max(rep["rtol"], gamma)


def assert_matches_cpu(got, want, rep, a, b):
    """The elements outside the report's native lines bit for bit the CPU's; those inside (cuBLAS
    DGEMM on the GPU, one fma per position on the CPU) equal in NaN-ness and infinities, and where
    finite both within DGEMM's worst-case bound γ_k·(|A||B|)_ij of each other's exact product."""
    got = get(got)
    emulated = np.ones(want.shape, bool)
    emulated[rep["native_row_indices"], :] = False
    emulated[:, rep["native_col_indices"]] = False
    np.testing.assert_array_equal(got[emulated].view(np.uint64), want[emulated].view(np.uint64))
    k = a.shape[1]
    gamma = k * 2.0**-53 / (1 - k * 2.0**-53)
    with np.errstate(invalid="ignore", over="ignore"):
        scale = np.abs(a) @ np.abs(b)
        native = ~emulated & np.isfinite(want) & np.isfinite(scale)
        assert (np.abs(got - want)[native] <= 2.1 * gamma * scale[native]).all()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("trans", [False, True])
def test_certified_contract_on_gpu_matches_cpu(dev, rng, order, trans):
    """Certified contracts on the GPU (either memory order, so both of the spread pass's layouts;
    transposed operands; a NaN row and a zero row; lines spanning most of the exponent range, whose
    squares underflow; subnormal columns) decide as the CPU does, from the same lines' statistics and
    the same lower-bound product: the same count, native lines and bits, and the emulated elements
    are the CPU's to the bit."""
    m, n, k = 70, 45, 3000
    a, b = gemm_family(rng, (m, k), 2.0), gemm_family(rng, (k, n), 0.5)
    a[4, 9], a[5] = np.nan, 0.0
    a[8] *= np.ldexp(1.0, rng.integers(-900, 100, size=k))
    b[:, 3] *= 2.0**-1070
    b[:, 6] *= np.ldexp(1.0, rng.integers(-1000, 0, size=k))
    ga = dev.put(np.ascontiguousarray(a.T) if trans else a, order)
    gb = dev.put(np.ascontiguousarray(b.T) if trans else b, order)
    for contract in (Contract.native(), Contract(rtol=1e-10), Contract(rtol=1e-6)):
        want, rep_cpu = gemm(a, b, contract=contract, report=True)
        got, rep = gemm(ga, gb, trans_a=trans, trans_b=trans, contract=contract, out=dev.poisoned((m, n)),
                        report=True)
        assert_report_matches_cpu(rep, rep_cpu, k)
        assert 4 in rep["native_row_indices"]  # the NaN row
        assert_matches_cpu(got, want, rep, a, b)


@pytest.mark.parametrize("engine", ["cublas", "mma", "wgmma"])
@pytest.mark.parametrize("m, n, k", [(200, 300, 1500), (40, 30, 70_001)])
def test_certificate_on_every_engine(dev, rng, engine, m, n, k):
    """The certificate's lower-bound product runs on the plan's engine: constant lines just below a
    power of two (the fewest moduli), φ = 0.5 and a row of one large element among 2^-40 ones that
    meet B's mass (more moduli, or that row natively) give the CPU's decisions and bits with every
    engine, also over two K chunks; the whole call natively (φ = 8) too."""
    skip_unavailable(engine)
    a, b = gemm_family(rng, (m, k), 0.5), gemm_family(rng, (k, n), 0.5)
    wide = a.copy()
    wide[3], wide[3, 7] = 2.0**-40, 1.0
    near_one = 1 - 2.0**-8
    heavy = gemm_family(rng, (m, k), 8.0), gemm_family(rng, (k, n), 8.0)
    reports = []
    for x, y in ((np.full((m, k), near_one), np.full((k, n), -near_one)), (a, b), (wide, b), heavy):
        want, rep_cpu = gemm(x, y, report=True)
        got, rep = gemm(dev.put(x), dev.put(y), out=dev.poisoned((m, n)), report=True, engine=engine)
        assert_report_matches_cpu(rep, rep_cpu, k)
        assert rep["moduli_set"] == rep_cpu["moduli_set"]
        assert_matches_cpu(got, want, rep, x, y)
        reports.append(rep)
    assert reports[0]["moduli"] < reports[1]["moduli"] and reports[0]["path"] == "emulated"
    assert reports[2]["moduli"] > reports[1]["moduli"] or 3 in reports[2]["native_row_indices"]
    assert reports[3]["path"] == "native" and reports[3]["native_rows"] == m


def test_certified_contract_refuses_a_graph_capture(rng):
    """A certified contract waits for its certificate on the host, which a CUDA graph capture cannot
    hold: refused with a message that says what to use, before anything is enqueued."""
    torch = pytest.importorskip("torch", reason="the capture is PyTorch's (torch.cuda.graph)")
    a = torch.from_numpy(gemm_family(rng, (64, 96), 1.0)).cuda()
    b = torch.from_numpy(gemm_family(rng, (96, 48), 1.0)).cuda()
    out = torch.full((64, 48), 7.0, dtype=torch.float64, device="cuda")
    gemm(a, b, out=torch.empty_like(out))  # the plan made and tuned outside the capture
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(ValueError, match="captured.*Contract\\(moduli"):
        with torch.cuda.graph(graph):
            gemm(a, b, out=out)
    torch.cuda.synchronize()
    assert bool((out == 7.0).all())


def test_complex_products_on_the_gpu_equal_the_cpu(dev, rng):
    """ZGEMM on CUDA arrays: the two real products' bits are the CPU's, so the complex result is too,
    transposed operands and a side stream included."""
    if dev.name == "ironkernels' own":
        pytest.skip("complex gemm takes NumPy, PyTorch or CuPy arrays (their .real / .imag parts)")
    a = gemm_family(rng, (70, 90), 1.0) + 1j * gemm_family(rng, (70, 90), 1.0)
    b = gemm_family(rng, (90, 40), 1.0) + 1j * gemm_family(rng, (90, 40), 1.0)
    got, rep = gemm(dev.put(a), dev.put(b), report=True)
    want = gemm(a, b)
    np.testing.assert_array_equal(get(got), want)
    assert rep["backend"] == "cuda" and rep["certified"]
    side, _, handle = dev.stream()
    at, bt = dev.put(np.ascontiguousarray(a.T)), dev.put(np.ascontiguousarray(b.T))
    dev.synchronize()
    got = gemm(at, bt, trans_a=True, trans_b=True, stream=handle)  # stacking, products, combination on `side`
    side.synchronize()
    np.testing.assert_array_equal(get(got), want)


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (33, 17, 129), (130, 300, 260), (16, 33000, 24)])
@pytest.mark.parametrize("trans_a, trans_b", [(False, False), (True, True), (False, True)])
@pytest.mark.parametrize("contract", [Contract.native(), Contract(moduli=9), Contract(moduli=18), Contract(rtol=1e-6)],
                         ids=repr)
def test_complex_karatsuba_bitwise_equal_to_cpu(dev, rng, m, k, n, trans_a, trans_b, contract):
    """ZGEMM on the wgmma engine, Re and Im from three INT8 products per modulus (Karatsuba): past
    every tile's edge and past one K chunk (2k > 2^16), with a row and a column far from the rest in
    magnitude (lines a certificate may send native) and an Inf: the real product [Re | Im] matches
    the CPU's as a real call does (the same decisions; emulated elements bit for bit), on the
    cuBLAS engine (four products' worth over 2k) too. 18 moduli: the residue sets in two groups."""
    from ironkernels._gemm_complex import stacked_operands

    skip_unavailable("wgmma")
    if dev.name == "ironkernels' own":
        pytest.skip("complex gemm takes NumPy, PyTorch or CuPy arrays (their .real / .imag parts)")
    a = gemm_family(rng, (m, k), 2.0) + 1j * gemm_family(rng, (m, k), 2.0)
    b = gemm_family(rng, (k, n), 2.0) + 1j * gemm_family(rng, (k, n), 2.0)
    if m > 2 and n > 2:
        a[1] *= 2.0**300
        b[:, 2] *= 2.0**-300
        b[0, 1] = complex(np.inf, 1.0)
    want, rep_cpu = gemm(a, b, contract=contract, report=True)
    x, y = stacked_operands(a, b, False, False, "numpy")
    parts = lambda z: np.hstack([z.real, z.imag])  # noqa: E731
    ga = dev.put(np.ascontiguousarray(a.T) if trans_a else a)
    gb = dev.put(np.ascontiguousarray(b.T) if trans_b else b)
    for engine in ("wgmma", "cublas"):
        got, rep = gemm(ga, gb, trans_a=trans_a, trans_b=trans_b, contract=contract, engine=engine, report=True)
        assert_report_matches_cpu(rep, rep_cpu, 2 * k)
        assert_matches_cpu(parts(get(got)), parts(want), rep, x, y)



@pytest.mark.parametrize("trans_b", [False, True], ids=["b", "bT"])
@pytest.mark.parametrize("rows, cols", [(1, 1), (1, 300), (37, 1), (64, 200), (257, 513)])
def test_complex_columns_in_one_pass_equal_the_stacking(dev, rng, rows, cols, trans_b):
    """The one-kernel op(y) of a CUDA b with contiguous rows (a slice of wider rows too) bit for bit the
    NumPy stacking, signed zeros, Inf and NaN included; a b whose rows are not contiguous is stacked
    by the framework's copies, equally."""
    from ironkernels import _core
    from ironkernels._gemm_complex import _rows_contiguous, stacked_operands

    if dev.name not in ("PyTorch's", "CuPy's"):
        pytest.skip("the one-pass stacking serves PyTorch and CuPy arrays")
    wide = gemm_family(rng, (rows, cols + 3), 1.0) + 1j * gemm_family(rng, (rows, cols + 3), 1.0)
    wide[0, 0] = complex(-0.0, 0.0)
    if cols > 1:
        wide[-1, 1] = complex(np.inf, np.nan)
    for b in (wide[:, :cols], np.ascontiguousarray(wide[:, :cols].T)):
        a = np.ones((2, b.shape[1] if trans_b else b.shape[0]), complex)  # op(a): 2 × k
        gb = dev.put(wide)[:, :cols] if b.shape == (rows, cols) else dev.put(np.ascontiguousarray(b.T)).T
        fw = "torch" if dev.name == "PyTorch's" else "cupy"
        assert _rows_contiguous(gb, fw) == (b.shape == (rows, cols) or 1 in b.shape)
        _, want = stacked_operands(a, b, False, trans_b, "numpy")
        _, got = stacked_operands(dev.put(a), gb, False, trans_b, fw)
        assert_bitwise(got, want)
    with pytest.raises(ValueError, match="y must be a row-major float64 array of shape"):
        _core.gemm_complex_columns(dev.put(wide), trans_b, dev.zeros((1, 1)), 0)


def test_torch_streams_of_raw_handles_are_those_streams():
    """The NULL stream's handle (0) gives the NULL stream, not a fresh pooled one (which
    torch.cuda.ExternalStream(0) gives): c's copy into out and the batched native products run in
    order with the call's kernels."""
    torch = pytest.importorskip("torch")
    from ironkernels._interop import torch_stream

    dev = torch.device("cuda", torch.cuda.current_device())
    assert torch_stream(0, dev).cuda_stream == 0
    side = torch.cuda.Stream()
    assert torch_stream(side.cuda_stream, dev).cuda_stream == side.cuda_stream
    a = torch.randn(1024, 1024, dtype=torch.float64, device=dev)
    c = torch.randn(1024, 1024, dtype=torch.float64, device=dev)
    out = torch.empty_like(c)
    ironkernels.gemm(a, a, c=c, beta=1.0, out=out)
    want = ironkernels.gemm(a.cpu().numpy(), a.cpu().numpy(), c=c.cpu().numpy(), beta=1.0)
    np.testing.assert_allclose(out.cpu().numpy(), want, rtol=0, atol=1e-12 * np.abs(want).max())
