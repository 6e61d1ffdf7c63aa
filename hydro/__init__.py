"""hydro: GPU water and smoke for Python games, on moderngl compute shaders.

    import hydro
    ctx = hydro.create_context()                 # or a game window's moderngl context
    grid = hydro.WaterGrid(ctx, terrain)         # terrain: (ny, nx) heights
    grid.step(1 / 60)
"""
from ._gl import HydroGLError, ShaderError, create_context
from .params import Erosion, WaterParams
from .water import WaterGrid
from .hex import HexWaterGrid
from .smoke import SmokeGrid
from .smoke_params import SmokeParams
from . import render

__all__ = ["create_context", "WaterGrid", "HexWaterGrid", "SmokeGrid", "SmokeParams", "WaterParams", "Erosion", "render", "HydroGLError", "ShaderError"]
__version__ = "0.1.0"
