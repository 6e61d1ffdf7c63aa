#version 410
// Accelerate the faces of each cell (fragment/faces.glsl): a pipe between two cells (common/model.glsl's
// interior_flow, from the flows the last substep left; with INERTIA inertial_flow over its stencil of
// every axis's flows, fragment/inertia.glsl), a boundary face as accelerate_edges.frag left it (WALLED,
// a grid walled all round: 0, and that pass does not run), or no face (0). Texel t stores the faces it
// holds in the flows' layout, one an axis, and cell t's outflow scale K (outgoing, outflow_scale) in one
// rgba32f texel; a face is worked out by each texel that needs it, with the same arithmetic, hence to
// the same bits. The target is a texel wider and taller than the grid, for the faces on its right and
// top edges.
#include "common/model.glsl"
#include "fragment/lattice.glsl"
// before the #if: a file is inlined once, where it is first included
#include "fragment/flows.glsl"
#if INERTIA
#include "fragment/inertia.glsl"
#else
uniform sampler2D u_terrain, u_water;
#endif

uniform sampler2D u_edges;          // boundary faces, accelerated (accelerate_edges.frag)

float face_value(int k, ivec2 f) {
    ivec2 a = face_from(k, f), b = face_to(k, f);
    bool a_in = inside(a), b_in = inside(b);
#if INERTIA
    if (a_in && b_in) return inertial_face(k, f);
    float interior = 0.0;
#else
    float interior = interior_flow(flow_at(k, f), cell_at(u_terrain, a), cell_at(u_water, a), cell_at(u_terrain, b),
                                   cell_at(u_water, b));
#endif
#if WALLED
    float edge = 0.0;               // every boundary face a wall (accelerate_edges.frag did not run)
#else
    float edge = texelFetch(u_edges, edge_texel(k, f), 0).r;
#endif
    return a_in && b_in ? interior : a_in || b_in ? edge : 0.0;
}
#include "fragment/faces.glsl"

layout(location = 0) out vec4 o_accelerated;     // faces of axes x, y (HEX z) at texel t, cell t's K

void main() {
    ivec2 t = texel();
    Faces f = faces_around(t);
#if HEX
    float z = face_value(2, t);
#else
    float z = 0.0;
#endif
    o_accelerated = vec4(f.left, f.bottom, z, outflow_scale(cell_at(u_water, t), outgoing(f)));
}
