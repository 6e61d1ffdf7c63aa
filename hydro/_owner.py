"""The lifetime of a grid or renderer (`Owner`: release, context manager, the GL context it was made
on), of a grid that steps (`Simulation`: its clock and guarded attributes), and of the parts a grid
owns that hold GPU objects in named attributes (`Held`)."""
from __future__ import annotations

import dataclasses
import difflib

from . import _validate
from ._gl import HydroGLError
from ._native import current_context, current_function

__all__ = ["Held", "Owner", "Simulation"]


class Held:
    """GPU objects held in the attributes `held` names: objects() lists them, release() frees them."""

    held = ()

    def objects(self) -> list:
        return [obj for obj in (getattr(self, name) for name in self.held) if obj is not None]

    def release(self) -> None:
        for obj in self.objects():
            obj.release()
        for name in self.held:
            setattr(self, name, None)


class Owner:
    """Lifetime of a grid: `release()` frees what `_gpu_objects()` lists, once, and the context too when
    the grid created it; grids are context managers; use after release raises a clear error."""

    _kind = "grid"
    _released = True
    _owns_ctx = False
    _context_handle = None      # the GL context current when it was made (None: not known)

    def _gpu_objects(self):
        raise NotImplementedError

    def _alive(self):
        if self._released:
            raise RuntimeError(f"{self._kind}: used after release()")
        self._check_context()

    def _note_context(self) -> None:
        """Remember the GL context current now, the one this object's GL names live in, where moderngl
        made the context standalone: a game window's context may share its objects with another
        window's (pyglet shares them between its windows), so calls made while that one is current
        work, and are not refused."""
        if getattr(getattr(self.ctx.mglo, "_context", None), "standalone", False):
            self._context_handle = current_context(self.ctx)
            self._current = current_function(self.ctx)      # asked again at every call: found once

    def _check_context(self) -> None:
        """GL calls go to the current context: with another one current they would read its objects and
        overwrite them (GL names coincide between contexts), with no error from the driver."""
        if self._context_handle is not None and self._current() != self._context_handle:
            raise HydroGLError(f"{self._kind}: its GL context is not current (another context was made current "
                               f"since, or none is): make it current first (`with ctx:`, or the game window's "
                               f"switch_to()); GL would otherwise work on the current context's objects")

    def release(self) -> None:
        """Free every GPU resource (idempotent). Programs stay cached with the context."""
        if self._released:
            return
        self._check_context()
        self._released = True
        for obj in self._gpu_objects():
            obj.release()
        if self._owns_ctx:
            self.ctx.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def _not_copied(self, *args):
        """A copy would share the GPU objects (releasing one breaks the other) and the context cannot
        be pickled: both are refused, saying what to save instead."""
        raise TypeError(f"{self._kind}: cannot be copied or pickled: it holds GPU objects of its context. "
                        f"Read its arrays (e.g. water, terrain, flow_x, flow_y, sim_time) and make a new one "
                        f"from them; np.savez writes them to a file")

    __copy__ = __deepcopy__ = __reduce_ex__ = __reduce__ = _not_copied

    # The guard on attributes: once sealed (hydro's own classes, when made), a public name can only be
    # set where the class has a property with a setter.
    _sealed = False

    def _seal(self) -> None:
        # only hydro's own classes: a game's subclass keeps Python's usual attributes for its own state
        self._sealed = type(self).__module__.split(".")[0] == "hydro"

    def __setattr__(self, name, value):
        if name[0] != "_" and self._sealed:
            attr = getattr(type(self), name, None)
            if not (isinstance(attr, property) and attr.fset is not None):
                raise AttributeError(self._refusal(name))
        object.__setattr__(self, name, value)

    def _refusal(self, name) -> str:
        cls, kind = type(self), self._kind
        settable = sorted(n for n in dir(cls) if not n.startswith("_") and isinstance(getattr(cls, n), property)
                          and getattr(cls, n).fset is not None)
        params = getattr(self, "params", None)
        fields = [f.name for f in dataclasses.fields(params)] if dataclasses.is_dataclass(params) else []
        if name in fields:
            return (f"{kind}.{name} cannot be set: it is fixed when the grid is made (grid.params.{name} "
                    f"is {getattr(params, name)!r}); make a new {kind} with {name}=... to change it; the attributes "
                    f"that can be set are {', '.join(settable)}")
        if name in dir(cls) or name in self.__dict__:
            what = "a method" if callable(getattr(cls, name, None)) else "read-only"
            return f"{kind}.{name} is {what}; the attributes that can be set are {', '.join(settable)}"
        known = [n for n in dir(cls) if not n.startswith("_")] + fields
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.75)
        hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
        return f"{kind} has no attribute {name!r}{hint}; the attributes that can be set are {', '.join(settable)}"


class Simulation(Owner):
    """A grid that steps: its clock (`sim_time`, `iteration`), its attributes guarded (Owner). Once the
    grid is made (`_seal()`), a public name can only be set where the class has a property with a
    setter (`water`, `density`, ...), so `grid.frictoin = 0.3` or `grid.friction = 0.3` raises an
    AttributeError that says what is meant instead of silently making an attribute nothing reads.
    A subclass defined outside hydro (a game's own grid with state of its own) is not guarded."""

    _sim_time = 0.0
    _iteration = 0

    @property
    def sim_time(self) -> float:
        """Simulated seconds so far; settable (a loaded game restores it), finite and >= 0."""
        return self._sim_time

    @sim_time.setter
    def sim_time(self, value):
        self._alive()
        self._sim_time = _validate.real("sim_time", value, low=0.0)

    @property
    def iteration(self) -> int:
        """Steps (substeps) advanced so far."""
        return self._iteration

    def _seal(self) -> None:
        self._note_context()
        super()._seal()
