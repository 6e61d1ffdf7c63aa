"""NumPy float64 twins of every GPU pass, with the same names, for tests and for servers without GL.

    from hydro import reference
    state = reference.water.State(...)
"""
from . import smoke, water

__all__ = ["smoke", "water"]
