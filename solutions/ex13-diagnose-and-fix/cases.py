"""Hidden cases of ex13: read by the judge only, never copied into the sandbox or the release.

The right cause of each run; each fixed run trained on other seeds, data sizes, step counts, epoch
counts and batch sizes (a last batch that is smaller, one epoch only), drawn from the run's fresh
``rng``; runs A and C called twice with the same seed; run D at temperatures from 1 down to 1/1000,
where the logits reach hundreds to thousands from the first step, so a literal softmax overflows and a
floored probability is hit. The builders and their checks are public, in
:mod:`gdcourse.grading.assignments.ex13_diagnose_and_fix`.
"""

from gdcourse.grading.assignments.ex13_diagnose_and_fix import (
    RIGHT, cause_case, fix_a_case, fix_b_case, fix_c_case, fix_d_case)

# the course's numerically stable softmax and cross-entropy do run D's work
REFERENCES = ("gdcourse.precision.softmax", "gdcourse.precision.logsumexp",
              "gdcourse.precision.cross_entropy_from_logits")


def _seed(rng) -> int:
    return int(rng.integers(1, 100_000))


def cases(rng):
    for name in RIGHT:
        yield cause_case(name, right=True)

    # run A: other sizes and seeds (150 houses or more: 100 steps train every sound fix there)
    for n in rng.choice([150, 250, 400], size=2, replace=False):
        yield fix_a_case(int(n), _seed(rng), name="house prices of another size and seed: finite, in dollars, "
                                                   "RMSE below three quarters of the spread")
    yield fix_a_case(int(rng.choice([200, 300])), _seed(rng), steps=150,
                     name="150 steps: one entry per step, predictions in dollars")
    yield fix_a_case(200, _seed(rng), repeat=2, name="deterministic: two calls with the same seed agree")

    # run B: compared with a correct run step by step
    n, bs = int(rng.choice([300, 500])), int(rng.choice([24, 48]))
    yield fix_b_case(n, _seed(rng), epochs=int(rng.integers(3, 7)), batch_size=bs,
                     name="other size, seed and batch size (a smaller last batch): the gradients of a correct run")
    yield fix_b_case(int(rng.choice([240, 360])), _seed(rng), epochs=1, batch_size=16,
                     name="one epoch: gradients cleared before every backward pass, also within the first epoch")

    # run C: the rate at every step, with other numbers of batches per epoch
    yield fix_c_case(int(rng.choice([300, 500])), _seed(rng), epochs=int(rng.choice([5, 7])),
                     batch_size=int(rng.choice([20, 48])),
                     name="another number of batches per epoch: the rate follows the plan at every step")
    yield fix_c_case(int(rng.choice([200, 280])), _seed(rng), epochs=1, batch_size=16,
                     name="one epoch: every step at the starting rate 0.1")
    yield fix_c_case(400, _seed(rng), epochs=2, batch_size=64, repeat=2,
                     name="deterministic: two calls with the same seed agree, the second epoch at 0.08")

    # run D: other seeds and temperatures, down to where a literal softmax breaks at once
    yield fix_d_case(int(rng.choice([300, 500])), _seed(rng), epochs=5, temperature=float(rng.choice([1 / 25, 1 / 40])),
                     name="another seed and a sharp temperature: the losses and the model of a correct run")
    yield fix_d_case(int(rng.choice([200, 300])), _seed(rng), epochs=3, temperature=1.0,
                     name="temperature 1: the losses and the model of a correct run")
    for t in (100, 300, 1000):
        yield fix_d_case(int(rng.choice([120, 160])), _seed(rng), epochs=1,
                         temperature=1 / (t * float(rng.uniform(1.0, 1.5))),
                         name=f"temperature below 1/{t}: logits in the {'hundreds' if t < 300 else 'thousands'}, "
                              f"the losses stay finite and match a correct run's")
