"""The demo's props over the water: the floating log and the water wheel, drawn simply as lit boxes
(a unit cube placed by a model matrix each) with the game's view-projection, depth-tested against the
terrain and water the renderer drew before them.

    props = Props(ctx)
    props.draw(view_projection, framebuffer, [(box(centre, axes, size), colour), ...])
"""
from __future__ import annotations

import moderngl
import numpy as np

VERTEX = """#version 330
uniform mat4 u_mvp;
uniform mat3 u_turn;
in vec3 in_pos;
in vec3 in_normal;
out vec3 v_normal;
void main() { gl_Position = u_mvp * vec4(in_pos, 1.0); v_normal = u_turn * in_normal; }
"""
FRAGMENT = """#version 330
uniform vec3 u_colour;
in vec3 v_normal;
out vec4 f_colour;
void main() { f_colour = vec4(u_colour * (0.5 + 0.5 * max(dot(normalize(v_normal), vec3(-0.6, 0.3, 0.74)), 0.0)), 1.0); }
"""


def _cube() -> np.ndarray:
    """A unit cube centred at 0: 36 vertices of (position, normal), two triangles a face."""
    rows = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            n, a, b = np.eye(3)[axis] * sign, np.eye(3)[(axis + 1) % 3], np.eye(3)[(axis + 2) % 3]
            corners = [0.5 * (n + da * a + db * b) for da, db in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
            rows += [np.concatenate([corners[k], n]) for k in (0, 1, 2, 0, 2, 3)]
    return np.array(rows, np.float32)


def box(centre, axes, size) -> np.ndarray:
    """The model matrix (math layout) of a box at `centre` (world), its edges along the columns of
    `axes` (3 x 3, orthonormal) and `size` long along each."""
    model = np.identity(4)
    model[:3, :3] = np.asarray(axes, float) * np.asarray(size, float)
    model[:3, 3] = centre
    return model


class Props:
    """Lit boxes drawn into a framebuffer after the renderer, with depth testing; the enable flags are
    moderngl's again afterwards."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.program = ctx.program(vertex_shader=VERTEX, fragment_shader=FRAGMENT)
        self.vbo = ctx.buffer(_cube().tobytes())
        self.vao = ctx.vertex_array(self.program, [(self.vbo, "3f 3f", "in_pos", "in_normal")])

    def draw(self, view_projection, framebuffer, boxes) -> None:
        """Draw `boxes`, (model matrix, RGB colour) pairs, into `framebuffer` (None: the screen)."""
        scope = self.ctx.scope(framebuffer, enable_only=moderngl.DEPTH_TEST)
        try:
            with scope:
                for model, colour in boxes:
                    turn = np.linalg.inv(model[:3, :3]).T            # normals stay normal to the faces
                    self.program["u_mvp"].write((view_projection @ model).T.astype(np.float32).tobytes())
                    self.program["u_turn"].write(turn.T.astype(np.float32).tobytes())
                    self.program["u_colour"].value = tuple(float(c) for c in colour)
                    self.vao.render(moderngl.TRIANGLES)
        finally:
            scope.release()

    def release(self) -> None:
        for obj in (self.vao, self.vbo, self.program):
            obj.release()
