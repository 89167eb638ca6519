"""Hidden cases of ex14: read by the judge only, never copied into the sandbox or the release.

Other models (batch norm and dropout, a LoRA-style adapter, a frozen convolution, a layer used twice,
a smaller tied LM, a fully frozen layer), optimizers, parameter widths (1 to 8 bytes) and master
copies; names that must raise; Hessian-vector products on other MLPs, directions of other scales and a
quadratic far from its centre; top eigenvalues of wide and tiny spectra, of other MLPs, and of
Hessians whose negative curvature dominates (every eigenvalue negative, the largest exactly 0, an MLP
minus a concave bowl); divergence just either side of and exactly on the boundary 2 (1 + momentum),
momentum from 0 to 0.99, curvature scales from 1e-2 to 1e3. Everything drawn from the run's ``rng``.
The builders and their checks are public, in
:mod:`gdcourse.grading.assignments.ex14_optimizer_memory_and_curvature`.
"""

from gdcourse.grading.assignments.ex14_optimizer_memory_and_curvature import (
    divergence_case, eigenvalue_case, hvp_case, memory_case, torch_case, unknown_name_case)

# the course's cost model and curvature tools do the exercise's work
REFERENCES = ("gdcourse.cost.memory_footprint", "gdcourse.cost.footprint_table", "gdcourse.cost.state_tensors",
              "gdcourse.cost.bytes_per_parameter", "gdcourse.cost.measured_state_bytes",
              "gdcourse.models.count_parameters", "gdcourse.curvature.hvp", "gdcourse.curvature.hessian_matrix",
              "gdcourse.curvature.top_eigenvalue", "gdcourse.curvature.stable_lr", "gdcourse.curvature.functional_loss")

OPTIMIZERS = ("sgd", "momentum", "adam")
# seeds of the tanh MLPs whose top eigenvalue power iteration (plain, shifted after it, or always
# shifted), Lanczos and the full Hessian all reach within 1e-8 of the spectral radius in the case's
# number of products, from the start vector of seed (seed % 5); checked once, offline. Some seeds are
# left out because |lambda_min| is within a few percent of lambda_max there, and power iteration needs
# thousands of products to tell them apart.
MLP_A = (0, 1, 2, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 21, 22, 23, 24)  # sizes (4, 6, 5, 3), n = 24
MLP_B = (2, 3, 4, 5, 7, 9, 10, 12, 13, 14, 15, 16, 18, 19, 20, 23, 24)  # sizes (6, 7, 2), n = 24
BOWL = (2, 3, 4, 8, 11, 12, 18)  # sizes (5, 8, 3), n = 32, minus |w0|^2; 150 products


def _seed(rng) -> int:
    return int(rng.integers(0, 100_000))


def cases(rng):
    # --- optimizer_memory: other models, optimizers, widths ---------------------------------------
    models = ["mlp_batchnorm_dropout", "adapter", "conv_frozen", "shared_twice", "tied_lm_small"]
    widths = [(4, False), (2, True), (2, False), (8, False), (1, True), (4, True)]
    for model in models:
        pb, mw = widths[int(rng.integers(len(widths)))]
        name = OPTIMIZERS[int(rng.integers(3))]
        yield memory_case(model, name, pb, mw, name=f"another model ({model}), another optimizer and parameter width")
    yield memory_case("all_frozen", "adam", 2, True,
                      name="every parameter frozen: memory for the weights only, nothing else")
    yield unknown_name_case("adamw", name="an optimizer name outside sgd, momentum and adam (adamw) raises ValueError")
    yield unknown_name_case(str(rng.choice(["rmsprop", "lion", ""])),
                            name="another unknown optimizer name raises ValueError")

    # --- the bytes torch holds ------------------------------------------------------------------------
    for model in ("tied_chain", "plain"):
        for name in rng.choice(OPTIMIZERS, size=2, replace=False):
            yield torch_case(model, str(name), name=f"another model ({'a shared weight, a frozen last layer' if model == 'tied_chain' else 'no frozen layer'}): "
                                                    f"the bytes torch holds after one step")

    # --- hessian_vector_product --------------------------------------------------------------------------
    for sizes in ([4, 6, 5, 3], [3, 10, 2]):
        spec = {"kind": "mlp", "seed": _seed(rng), "sizes": sizes, "n": 20}
        for scale in rng.choice([1e-3, 1.0, 50.0], size=2, replace=False):
            yield hvp_case(spec, {"kind": "random", "seed": _seed(rng), "scale": float(scale)},
                           name="another MLP and a direction of another scale: exact, params and v unchanged")
    yield hvp_case({"kind": "quadratic", "seed": _seed(rng), "scale": 1e4,
                    "eigenvalues": [40.0, 3.0, 1.0, 0.5, 0.1, -2.0, -0.3, 0.0, 7.0, 1.5, 2.5, 0.7]},
                   {"kind": "ones"}, name="a quadratic far from its centre (a huge gradient): exactly A v")

    # --- top_hessian_eigenvalue ----------------------------------------------------------------------------
    yield eigenvalue_case({"kind": "quadratic", "seed": _seed(rng), "eigenvalues": [1000.0, 1.0, 0.5, 0.25, 2.0, 3.0, 0.0, 0.1]},
                          seed=_seed(rng), name="one eigenvalue far above the others (1000)")
    yield eigenvalue_case({"kind": "quadratic", "seed": _seed(rng),
                           "eigenvalues": [0.02, 0.01, 0.005, 0.0, 0.001, 0.003, 0.015, 0.0]},
                          seed=_seed(rng), name="a tiny spectrum (the largest eigenvalue 0.02)")
    seed = int(rng.choice(MLP_A))
    yield eigenvalue_case({"kind": "mlp", "seed": seed, "sizes": [4, 6, 5, 3], "n": 24},
                          seed=seed % 5, name="a deeper tanh MLP: the top eigenvalue of the full Hessian")
    seed = int(rng.choice(MLP_B))
    yield eigenvalue_case({"kind": "mlp", "seed": seed, "sizes": [6, 7, 2], "n": 24},
                          seed=seed % 5, name="another tanh MLP: the top eigenvalue of the full Hessian")

    # negative curvature: the largest eigenvalue is the most positive one, with its sign. Shifted by the
    # most negative one, the top two are at most 0.8 apart in ratio: 100 iterations converge from any start
    # (closer ones failed a correct power iteration from one start in a few hundred)
    scale = float(10 ** rng.uniform(-2, 2))
    yield eigenvalue_case({"kind": "quadratic", "seed": _seed(rng),
                           "eigenvalues": [scale * x for x in (-0.5, -3.0, -3.5, -8.0, -4.0, -5.0, -6.0, -7.0)]},
                          seed=_seed(rng), test="test_top_eigenvalue_negative",
                          name="every eigenvalue negative: the largest is the one closest to zero")
    yield eigenvalue_case({"kind": "quadratic", "seed": _seed(rng),
                           "eigenvalues": [scale * x for x in (0.0, -2.0, -2.5, -3.0, -4.0, -3.5, -6.0, -2.8)]},
                          seed=_seed(rng), test="test_top_eigenvalue_negative",
                          name="the largest eigenvalue exactly 0, every other one negative")
    yield eigenvalue_case({"kind": "quadratic", "seed": _seed(rng),
                           "eigenvalues": [scale * x for x in (2.0, -0.8, -1.0, -1.2, -3.0, -4.0, -6.0, -12.0)]},
                          seed=_seed(rng), test="test_top_eigenvalue_negative",
                          name="a negative eigenvalue six times larger in magnitude than the largest one")
    seed = int(rng.choice(BOWL))
    yield eigenvalue_case({"kind": "mlp", "seed": seed, "sizes": [5, 8, 3], "n": 32, "bowl": 1.0},
                          iters=150, seed=seed % 5, test="test_top_eigenvalue_negative",
                          name="not a quadratic: an MLP's loss minus a concave bowl, the negative curvature dominates")

    # --- predict_divergence ------------------------------------------------------------------------------------
    for beta in (0.0, 0.3, 0.95, 0.99):
        lam = float(10 ** rng.uniform(-2, 3))
        for factor in (1 - 1e-6, 1 + 1e-6):
            yield divergence_case(factor * 2 * (1 + beta) / lam, lam, beta,
                                  name="a learning rate within a millionth of the boundary")
    # exactly on the boundary, in numbers exact in binary floating point
    for lr, lam, beta in ((1.0, 2.0, 0.0), (0.75, 4.0, 0.5), (1.0, 2.5, 0.25), (4.0, 0.875, 0.75)):
        yield divergence_case(lr, lam, beta, name="exactly on the boundary lr * lam_max = 2 (1 + momentum): no divergence")
    lam = float(10 ** rng.uniform(-1, 2))
    for times in (1.9, 2.1):
        yield divergence_case(times / lam, lam, None, name="momentum left at its default, 0")
