"""Hidden cases of ex16: read by the judge only, never copied into the sandbox or the release.

init_fan_in on other architectures (two to four layers of 64 to 384 units, other activations, a layer
of 1024 inputs and 16 outputs and its mirror image, a single layer), layers without a bias, float64
models and other unknown schemes; expected_initial_loss for other class counts (GPT-2's 50257 tokens
among them), batches that miss classes, two to 5000 targets, one to five outputs, means from -50 to 50
and spreads from 0.1 to 20 (exactly so: the draws are standardised); update_to_weight_ratio on other
models (a LayerNorm among them), SGD with and without (Nesterov) momentum, Adam, AdamW and RMSprop with
their state warmed up, learning rates from 1e-4 to 0.3, stale gradients. Everything drawn from the run's
``rng``. The builders and their checks are public, in
:mod:`gdcourse.grading.assignments.ex16_init_and_monitoring`.
"""

import math

import numpy as np

from gdcourse.grading.assignments.ex16_init_and_monitoring import (
    KURTOSIS_MIN, SCHEMES, classification_case, distribution_case, in_place_case, ratio_case, regression_case,
    scale_case, step_case, unknown_scheme_case)

# the course's monitor measures these ratios around a step; numpy_mlp draws He-scaled weights
REFERENCES = ("gdcourse.monitor.update_ratios", "gdcourse.numpy_mlp.init")

WIDTHS = (64, 96, 128, 192, 256, 320, 384)
ACTIVATIONS = ("relu", "tanh", "gelu", "sigmoid", "identity")


def _seed(rng) -> int:
    return int(rng.integers(0, 100_000))


def _mlp(rng, depth, widths=WIDTHS, no_bias=False):
    """``depth`` linear layers of widths drawn from ``widths``, each but the last followed by an activation;
    ``no_bias``: one of them without a bias."""
    sizes = [int(x) for x in rng.choice(widths, size=depth + 1)]
    plain = int(rng.integers(depth)) if no_bias else -1
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(("linear", a, b, False) if i == plain else ("linear", a, b))
        if i < depth - 1:
            layers.append((str(rng.choice(ACTIVATIONS)),))
    return layers


def _targets(rng, shape):
    """Targets of ``shape``, each column of a mean drawn from [-50, 50] and a spread (its population standard
    deviation, exactly) from [0.1, 20], log-uniform: standardised normal draws, so that no draw puts the
    targets nearly on top of each other (with two targets, a plain draw can), where the variance is tiny next
    to the squared mean and E[y^2] - E[y]^2, a right formula, would lose its digits to cancellation."""
    k = shape[1] if len(shape) > 1 else 1
    means, spreads = rng.uniform(-50, 50, size=k), 10 ** rng.uniform(-1, math.log10(20), size=k)
    z = rng.standard_normal((shape[0], k))
    z = (z - z.mean(axis=0)) / z.std(axis=0)
    return (means + spreads * z).reshape(shape)


def _big_enough(layers):
    return any(s[0] == "linear" and s[1] * s[2] >= KURTOSIS_MIN for s in layers)


def cases(rng):
    # --- init_fan_in ----------------------------------------------------------------------------------
    for scheme in SCHEMES:
        yield scale_case(_mlp(rng, int(rng.integers(2, 5))), scheme, _seed(rng),
                         name=f"{scheme}: another architecture, every layer's scale")
    scheme = str(rng.choice(["lecun", "he"]))
    yield scale_case([("linear", 1024, 16)], scheme, _seed(rng),
                     name="one layer of 1024 inputs and 16 outputs: the scale follows fan_in")
    yield scale_case([("linear", 16, 1024), ("relu",), ("linear", 1024, 8)], str(rng.choice(SCHEMES)), _seed(rng),
                     name="16 inputs widened to 1024, then 8 outputs")
    for scheme in rng.choice(SCHEMES, size=2, replace=False):
        layers = _mlp(rng, int(rng.integers(2, 5)), no_bias=True)
        while not _big_enough(layers):
            layers = _mlp(rng, int(rng.integers(2, 5)), no_bias=True)
        yield distribution_case(layers, str(scheme), _seed(rng),
                                name="another architecture, one layer without a bias: normal weights, zero biases")
    yield in_place_case(_mlp(rng, 3), str(rng.choice(SCHEMES)), _seed(rng),
                        name="another architecture: the model returned, its parameters initialised in place")
    yield in_place_case(_mlp(rng, 2, widths=(16, 32, 48)), str(rng.choice(SCHEMES)), _seed(rng), dtype="float64",
                        name="another float64 model stays float64")
    yield unknown_scheme_case(str(rng.choice(["orthogonal", "he_uniform", "uniform", ""])),
                              name="another unknown scheme raises ValueError")

    # --- expected_initial_loss --------------------------------------------------------------------------
    for c in rng.choice([3, 5, 7, 100, 50257], size=2, replace=False):
        yield classification_case(int(c), name="another number of classes (up to GPT-2's 50257 tokens)")
    c = int(rng.integers(6, 30))
    present = rng.choice(c, size=int(rng.integers(2, c - 2)), replace=False)
    yield classification_case(c, y=rng.choice(present, size=3 * len(present)),
                              name="a batch that misses some of the classes")
    for n in (2, int(rng.integers(3, 40)), 5000):
        yield regression_case(_targets(rng, (n,)),
                              name=f"{'two' if n == 2 else 'other'} targets, another mean and spread")
    yield regression_case(_targets(rng, (int(rng.integers(5, 60)), int(rng.integers(2, 6)))),
                          name="several outputs, each with its own mean and spread")
    yield regression_case(_targets(rng, (int(rng.integers(3, 30)), 1)), name="one output as a column (n, 1)")

    # --- update_to_weight_ratio ---------------------------------------------------------------------------
    for name, spec in _ratio_specs(rng):
        yield ratio_case(spec, name=name)
    for name, spec in _ratio_specs(rng, stale_always=True)[:3]:
        yield step_case(spec, name=name)


def _optimizers(rng):
    lr = lambda lo, hi: float(10 ** rng.uniform(lo, hi))
    return [
        ("plain SGD", {"name": "sgd", "lr": lr(-3, -0.5)}),
        ("SGD with momentum", {"name": "sgd", "lr": lr(-3, -1.5), "momentum": float(rng.uniform(0.5, 0.99))}),
        ("SGD with Nesterov momentum", {"name": "sgd", "lr": lr(-3, -1.5), "momentum": float(rng.uniform(0.5, 0.95)),
                                        "nesterov": True}),
        ("Adam", {"name": "adam", "lr": lr(-4, -1.5), "betas": [float(rng.uniform(0.8, 0.95)), 0.999]}),
        ("AdamW with weight decay", {"name": "adamw", "lr": lr(-4, -1.5), "weight_decay": float(rng.uniform(0.01, 0.5))}),
        ("RMSprop", {"name": "rmsprop", "lr": lr(-4, -2)}),
    ]


def _ratio_specs(rng, stale_always=False):
    specs = []
    for label, optimizer in _optimizers(rng):
        sizes = [int(x) for x in rng.choice([8, 12, 16, 24, 32, 48], size=int(rng.integers(3, 5)))]
        layers = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(("linear", a, b))
            if i < len(sizes) - 2:
                if rng.random() < 0.3:
                    layers.append(("layernorm", b))
                layers.append((str(rng.choice(["relu", "tanh", "gelu"])),))
        warm = 0 if label == "plain SGD" else int(rng.integers(1, 5))
        stale = float(10 ** rng.uniform(-1, 1)) if stale_always or rng.random() < 0.3 else None
        name = f"{label}{' after warm-up steps' if warm else ''}{', stale gradients on entry' if stale else ''}: another model"
        specs.append((name, {"layers": layers, "seed": _seed(rng), "n": int(rng.integers(16, 80)),
                             "loss": str(rng.choice(["mse", "ce"])), "optimizer": optimizer, "warm": warm,
                             "stale": stale}))
    order = rng.permutation(len(specs))
    return [specs[i] for i in order]
