"""Hidden cases of ex18: read by the judge only, never copied into the sandbox or the release.

Newton-Schulz on random, rank-deficient, ill-conditioned, tall, wide and square matrices with entries
from 1e-2 to 1e6 (every ||G||_F at least 0.1) and 1 to 10 steps; its behaviour (the band, the row and
column spaces) on others; Muon over 3 to 8 steps on tall, wide and square matrices with other rates,
momenta, decays, nesterov=False and other ns_steps; ZeRO bytes for every optimizer, stage and width on
1 to 1024 ranks, counts the ranks do not divide; names and stages that must raise; the largest model
that fits. Everything drawn from the run's ``rng``; the builders are public, in
:mod:`gdcourse.grading.assignments.ex18_orthogonalised_updates`.
"""

from gdcourse.grading.assignments.ex18_orthogonalised_updates import (
    OPTIMIZERS, largest_case, matrix, memory_case, muon_case, ns_case, raises_case, spectrum_case)

REFERENCES = ("gdcourse.optim.newton_schulz", "gdcourse.optim.Muon", "gdcourse.cost.memory_footprint",
              "gdcourse.cost.shard", "gdcourse.cost.state_tensors")
FORBIDDEN = ("torch",)  # the statement asks for NumPy only


def _shape(rng, kind):
    m, n = int(rng.integers(2, 24)), int(rng.integers(2, 24))
    m, n = (max(m, n), min(m, n)) if kind == "tall" else (min(m, n), max(m, n)) if kind == "wide" else (m, m)
    if kind != "square" and m == n:
        m += 1 if kind == "tall" else 0
        n += 1 if kind == "wide" else 0
    return m, n


def cases(rng):
    for kind in ("tall", "wide", "square"):
        yield ns_case(matrix(rng, _shape(rng, kind)), name=f"a random {kind} matrix")
        shape = _shape(rng, kind)
        yield ns_case(matrix(rng, shape, rank=int(rng.integers(1, min(shape)))), name=f"a rank-deficient {kind} matrix")
        yield ns_case(matrix(rng, _shape(rng, kind), condition=float(10 ** rng.uniform(1, 3))),
                      steps=int(rng.integers(1, 11)), name=f"an ill-conditioned {kind} matrix, another number of steps")
    for scale in (0.3, 1e3, 1e6):  # about ||G||_F: at least 0.1, where both eps guards agree
        shape = _shape(rng, str(rng.choice(["tall", "wide"])))
        yield ns_case(matrix(rng, shape, scale=scale / (shape[0] * shape[1]) ** 0.5), name="a badly scaled matrix")
    yield ns_case(matrix(rng, (9, 4), rank=2), eps=1e-9, name="another eps")
    for kind in ("tall", "wide"):
        shape = _shape(rng, kind)
        yield spectrum_case(matrix(rng, shape, condition=float(rng.uniform(5, 60))),
                            name=f"a {kind} matrix, singular values spread: the band")
        yield spectrum_case(matrix(rng, shape, rank=1 + int(rng.integers(0, min(shape) - 1))),
                            name=f"a rank-deficient {kind} matrix keeps its rank and its spaces")
    for kind, kw in (("tall", dict(lr=0.02)), ("wide", dict(lr=0.05, momentum=0.8, weight_decay=0.3)),
                     ("square", dict(lr=0.1, nesterov=False)), ("tall", dict(lr=0.03, ns_steps=3, weight_decay=0.0)),
                     ("tall", dict(lr=0.08, momentum=0.9, weight_decay=0.2, nesterov=False))):
        shape = _shape(rng, kind)
        steps = int(rng.integers(3, 9))
        yield muon_case(0.3 * rng.standard_normal(shape), [rng.standard_normal(shape) for _ in range(steps)], kw,
                        name=f"{steps} Muon steps on a {kind} matrix, other settings")
    for optimizer in OPTIMIZERS:
        stage, W = int(rng.integers(0, 4)), int(rng.choice([1, 2, 3, 7, 64, 1024]))
        n = int(rng.integers(1, 10 ** 9))
        pb, mw = [(4, False), (2, True), (2, False), (1, True), (8, False)][int(rng.integers(5))]
        yield memory_case(n, optimizer, param_bytes=pb, master_weights=mw, stage=stage, world_size=W,
                          name="another optimizer, stage, width and number of ranks")
    for stage in (1, 2, 3):
        yield memory_case(int(rng.integers(10 ** 6, 10 ** 9)) * 7 + 3, "adamw", param_bytes=2, master_weights=True,
                          stage=stage, world_size=7, name=f"mixed-precision AdamW, ZeRO-{stage}, a count 7 ranks do not divide")
    yield raises_case(1000, str(rng.choice(["lion", "rmsprop", "Adam"])), name="an unknown optimizer raises ValueError")
    yield raises_case(1000, "adam", stage=int(rng.choice([4, -1])), name="a stage outside 0-3 raises ValueError")
    for stage in (0, 1, 2, 3):
        W = int(rng.choice([2, 3, 8, 24, 1000]))
        yield largest_case(int(rng.integers(10 ** 6, 10 ** 11)), str(rng.choice(list(OPTIMIZERS))),
                           param_bytes=2, master_weights=bool(rng.integers(2)), stage=stage, world_size=W,
                           name=f"the largest model under ZeRO-{stage}")
