"""gdcourse: the helper library of the course *Gradient descent, engineered*.

One concept per module:

- :mod:`gdcourse.runtime`   seeding, device choice, Colab/CI detection
- :mod:`gdcourse.data`      synthetic data sets and sklearn's bundled digits, split without leakage
- :mod:`gdcourse.models`    small PyTorch models (an MLP with dropout and batch norm)
- :mod:`gdcourse.linear`    least squares in closed form (Hessian, stable step)
- :mod:`gdcourse.diagnostics` reading a run: loss checks, the learning-rate range test
- :mod:`gdcourse.optim`     NumPy reference optimizers (one contract, PyTorch's rules)
- :mod:`gdcourse.schedules` learning-rate schedules as functions of the step
- :mod:`gdcourse.clipping`  gradient clipping as torch.nn.utils does it
- :mod:`gdcourse.precision` floating-point facts, bfloat16 rounding, stable softmax
- :mod:`gdcourse.train`     early stopping, atomic checkpoints, exact resume (RNG states)
- :mod:`gdcourse.monitor`   watching a torch run: gradient norms, the first non-finite module, LR range test
- :mod:`gdcourse.preflight` the executable pre-flight checklist for a model, loader and optimizer
- :mod:`gdcourse.curvature` Hessian-vector products, λmax, sharpness, gradient noise scale (torch.func)
- :mod:`gdcourse.cost`      what training costs: bytes per step, memory of parameters, gradients, state and activations, timing
- :mod:`gdcourse.distributed` spawn a data-parallel worker from a notebook or script
- :mod:`gdcourse.plot`      loss-curve figures
- :mod:`gdcourse.widgets`   interactive explorers (ipywidgets)
- :mod:`gdcourse.book`      glue numbers and figures into the book's prose
- :mod:`gdcourse.check`     a student's self-check against an exercise's visible tests
- :mod:`gdcourse.notebooks` the papermill runner that executes every notebook, and their Colab setup cell
- :mod:`gdcourse.site`      a Sphinx extension: what each page of the built book loads
- :mod:`gdcourse.grading`   cohort grading: a judge (sandboxed notebook, verdict computed outside it) over nbgrader's format and gradebook
"""

__version__ = "1.0.0"
