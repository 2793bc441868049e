"""ironkernels.torch: fwt, fwt_ (in place), fwt_quantize and gemm as torch.library custom ops — each
op's schema, fake implementation and autograd registration through torch.library.opcheck; results
equal to the package's calls; gradients against finite differences (gradcheck) and torch's own
matmul; torch.compile(fullgraph=True) equal to eager; on a GPU, a linear → rotate-and-quantise →
FP8 scaled matmul module compiled whole."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
ikt = pytest.importorskip("ironkernels.torch")

import ironkernels as ik  # noqa: E402
from torch.library import opcheck  # noqa: E402

from test_fwt_rotations import paley_one  # noqa: E402

OPS = torch.ops.ironkernels
PALEY_12 = torch.from_numpy(paley_one(11).astype(np.int8))  # not symmetric: the gradient needs Hᵀ
SIGNS_48 = torch.from_numpy(ik.rademacher_signs(48, 5))


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_opcheck_every_op(device):
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no GPU")
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(4, 48, dtype=torch.float64, generator=gen)
    cases = [
        (OPS.fwt.default, (x, -1, None, True, "natural", 0, False, None, None)),
        (OPS.fwt.default, (x, -1, 0.5, False, "natural", 16, True, None, None)),
        (OPS.fwt.default, (x, -1, None, True, "natural", 12, False, SIGNS_48, PALEY_12)),
        (OPS.fwt.default, (torch.randn(32, 3, generator=gen), 0, None, False, "sequency", 0, False, None, None)),
        (OPS.fwt_.default, (torch.randn(4, 32, generator=gen), -1, None, False, "dyadic", 0, False, None, None)),
        (OPS.fwt_quantize.default, (torch.randn(4, 64, generator=gen), "mxfp4", 32, 0,
                                    torch.tensor([1, -1] * 32, dtype=torch.int8), True, "row-major", None, 0.0)),
        (OPS.fwt_quantize.default, (torch.randn(3, 64, generator=gen), "nvfp4", 16, 0, None, True, "swizzled-128x4",
                                    None, 0.0)),
        (OPS.fwt_quantize.default, (torch.randn(3, 64, generator=gen), "nvfp4", 16, 0, None, True, "row-major",
                                    None, 3.0)),
        (OPS.fwt_quantize.default, (torch.randn(3, 96, generator=gen), "int8", 24, 24, None, True, "row-major",
                                    PALEY_12, 0.0)),
        (OPS.gemm.default, (torch.randn(5, 7, dtype=torch.float64, generator=gen),
                            torch.randn(7, 3, dtype=torch.float64, generator=gen), False, False, 0, "norm", 0.0)),
        (OPS.gemm.default, (torch.randn(7, 5, dtype=torch.float64, generator=gen),
                            torch.randn(3, 7, dtype=torch.float64, generator=gen), True, True, 15, "accurate", 0.0)),
    ]
    for op, args in cases:
        args = tuple(a.to(device) if isinstance(a, torch.Tensor) and a.dtype != torch.int8 else a for a in args)
        result = opcheck(op, args)
        assert all(v == "SUCCESS" for v in result.values()), (op, result)


@pytest.mark.parametrize("kw", [{}, {"normalized": True}, {"block": 16, "scale": 0.25}, {"order": "sequency"},
                                {"order": "dyadic", "inverse": True}])
def test_fwt_equals_the_package_and_differentiates(kw):
    x = torch.randn(3, 64, dtype=torch.float64, requires_grad=True)
    y = ikt.fwt(x, **kw)
    assert torch.equal(y.detach(), ik.fwt(x.detach(), **kw))
    assert torch.autograd.gradcheck(lambda v: ikt.fwt(v, **kw), (x,))


@pytest.mark.parametrize("kw", [{"signs": 7}, {"hadamard": PALEY_12, "normalized": True},
                                {"hadamard": PALEY_12, "signs": 3, "block": 24, "scale": -0.5},
                                {"hadamard": PALEY_12, "signs": 3, "inverse": True}])
def test_fwt_rotations_equal_the_package_and_differentiate(kw):
    """Signs and a non-symmetric caller's matrix: the gradient is the transposed transform."""
    x = torch.randn(3, 48, dtype=torch.float64, requires_grad=True)
    y = ikt.fwt(x, **kw)
    assert torch.equal(y.detach(), ik.fwt(x.detach(), **kw))
    assert torch.autograd.gradcheck(lambda v: ikt.fwt(v, **kw), (x,))


def test_fwt_factor_lengths_and_other_axes_differentiate():
    x = torch.randn(24, 3, dtype=torch.float64, requires_grad=True)  # N = 12·2 along axis 0
    assert torch.autograd.gradcheck(lambda v: ikt.fwt(v, axis=0, normalized=True), (x,))


def test_fwt_in_place():
    x = torch.randn(4, 32)
    want = ik.fwt(x, normalized=True)
    assert ikt.fwt_(x, normalized=True) is x
    assert torch.equal(x, want)


@pytest.mark.parametrize("to", ["float8_e4m3fn", "int8", "int4", "mxfp4", "nvfp4"])
def test_fwt_quantize_equals_the_package(to):
    x = torch.randn(5, 256)
    kw = dict(to=to, block=128, signs=3, **({} if to in ("mxfp4", "nvfp4") else {"group": 64}))
    got, want = ikt.fwt_quantize(x, **kw), ik.fwt_quantize(x, **kw)
    assert torch.equal(got[0], want[0])
    flat = lambda s: s if isinstance(s, tuple) else (s,)  # noqa: E731
    for g, w in zip(flat(got[1]), flat(want[1])):
        assert torch.equal(g, w)


def test_gemm_equals_the_package_and_differentiates():
    a = torch.randn(20, 30, dtype=torch.float64, requires_grad=True)
    b = torch.randn(30, 10, dtype=torch.float64, requires_grad=True)
    for contract in (None, ik.Contract(rtol=1e-8), ik.Contract(moduli=15, scaling="accurate")):
        c = ikt.gemm(a, b, contract=contract)
        assert torch.equal(c.detach(), ik.gemm(a.detach(), b.detach(), contract=contract or ik.Contract.native()))
    for ta in (False, True):
        for tb in (False, True):
            x = (a.detach().T.contiguous() if ta else a.detach()).requires_grad_()
            y = (b.detach().T.contiguous() if tb else b.detach()).requires_grad_()
            ikt.gemm(x, y, trans_a=ta, trans_b=tb).sin().sum().backward()
            x2, y2 = x.detach().clone().requires_grad_(), y.detach().clone().requires_grad_()
            ((x2.T if ta else x2) @ (y2.T if tb else y2)).sin().sum().backward()
            torch.testing.assert_close(x.grad, x2.grad, rtol=1e-12, atol=1e-12)
            torch.testing.assert_close(y.grad, y2.grad, rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="contract must be an ironkernels.Contract"):
        ikt.gemm(a, b, contract="native")


def test_compiled_whole_equals_eager():
    x = torch.randn(8, 128)
    a, b = torch.randn(16, 24, dtype=torch.float64), torch.randn(12, 24, dtype=torch.float64)

    def body(v, p, q):
        r = ikt.fwt(v, block=32, normalized=True) * 2 + 1
        codes, scales = ikt.fwt_quantize(r, to="int8", group=64)
        s = ikt.fwt_(r.clone(), order="sequency")
        return r, codes, scales, s, ikt.gemm(p, q, trans_b=True) + 1

    compiled = torch.compile(body, fullgraph=True)
    for got, want in zip(compiled(x, a, b), body(x, a, b)):
        assert torch.equal(got, want)


@pytest.mark.gpu
def test_linear_rotate_quantise_scaled_mm_compiles_on_the_gpu():
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    if not hasattr(torch, "_scaled_mm"):
        pytest.skip("this PyTorch has no torch._scaled_mm")
    gen = torch.Generator(device="cuda").manual_seed(3)
    linear = torch.nn.Linear(256, 512, device="cuda")
    w = torch.randn(128, 512, device="cuda", generator=gen)
    qw, sw = ikt.fwt_quantize(w, to="float8_e4m3fn", block=128)  # one scale per row of w
    fw = qw.view(torch.float8_e4m3fn)

    def module(x):
        h = linear(x)
        q, s = ikt.fwt_quantize(h, to="float8_e4m3fn", block=128)
        return torch._scaled_mm(q.view(torch.float8_e4m3fn), fw.t(), scale_a=s, scale_b=sw.t(), out_dtype=torch.bfloat16)

    x = torch.randn(64, 256, device="cuda", generator=gen)
    with torch.no_grad():
        eager, compiled = module(x), torch.compile(module, fullgraph=True)(x)
        assert torch.equal(compiled, eager)
        exact = linear(x) @ w.t()  # the rotation is orthonormal along the product's k
        assert ((eager.float() - exact).norm() / exact.norm()).item() < 0.05
