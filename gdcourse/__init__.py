"""gdcourse: the helper library of the course *Gradient descent, engineered*.

One concept per module:

- :mod:`gdcourse.runtime`   seeding, device choice, Colab/CI detection
- :mod:`gdcourse.data`      synthetic data sets
- :mod:`gdcourse.plot`      loss-curve figures
- :mod:`gdcourse.widgets`   interactive explorers (ipywidgets)
- :mod:`gdcourse.book`      glue numbers and figures into the book's prose
- :mod:`gdcourse.check`     a student's self-check against an exercise's visible tests
- :mod:`gdcourse.notebooks` the papermill runner that executes every notebook
- :mod:`gdcourse.grading`   cohort grading over nbgrader
"""

__version__ = "0.1.0"
