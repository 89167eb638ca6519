"""One public module per assignment on the judge, named after it (``ex01-gd-loop`` -> ``ex01_gd_loop``).

Each holds what both sides of the sandbox wall and the student's self-check share:

- ``REFERENCE``: the course's implementation of every graded function, by name. In the
  sandbox, while a case of one function runs, the others are these stand-ins (so a bug
  in ``gradients`` never costs ``fit`` its points); on the trusted side the checks compute
  expected answers with them.
- probes, ``probe(student_fn, *data)``: for a function that takes objects (a model, a loss
  function, a path), build them from data, call the student's function and report what
  it returned and left behind, as data;
- case builders, whose checks run on the trusted side (and in the self-check);
- ``visible()``: the visible cases, the ones a student's test cells and self-check run.

Public by design: the course, its solutions included, is open. What a cohort keeps to
itself is the choice of hidden cases and their inputs, drawn fresh each grading run in
``solutions/<name>/cases.py``. An answer cell that imports from :mod:`gdcourse.grading`
is reference use for the static check, and scores 0.
"""
