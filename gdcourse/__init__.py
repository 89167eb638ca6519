"""gdcourse: the helper library of the course *Gradient descent, engineered*.

One concept per module; the README's "Where things live" maps each module to what it
is for and the chapters that use it (a test keeps that map in step with the code).
"""

__version__ = "1.0.0"
