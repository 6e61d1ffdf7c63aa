#version 430
// CellWise._velocities, with inertia before each substep's accelerate pass where every cell is computed:
// each face's velocity (common/stencil.glsl's velocity_of) from the flows and columns the substep starts
// from, stored in the flows' layout for cells_accelerate.comp (STORED_VELOCITIES), whose interior faces
// each read five of them rather than working each out from its columns. An invocation a texel of
// (nx + 1) x (ny + 1): its x and y faces (HEX also its z face), where the grid has them.
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/model.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
// the flows of the substep before
#include "common/flows_stored.glsl"
layout(std430, binding = B_VELOCITY_X) restrict writeonly buffer VelocityX { float u_velocity_x[]; };
layout(std430, binding = B_VELOCITY_Y) restrict writeonly buffer VelocityY { float u_velocity_y[]; };
#if HEX
layout(std430, binding = B_VELOCITY_Z) restrict writeonly buffer VelocityZ { float u_velocity_z[]; };
#endif

float depth_at(ivec2 c) { return imageLoad(u_water, c).r; }

#include "common/cells_stencil.glsl"

void main() {
    ivec2 f = ivec2(gl_GlobalInvocationID.xy);
    if (has_face(0, f)) u_velocity_x[index_x(f)] = velocity_of(0, f);
    if (has_face(1, f)) u_velocity_y[index_y(f)] = velocity_of(1, f);
#if HEX
    if (has_face(2, f)) u_velocity_z[index_z(f)] = velocity_of(2, f);
#endif
}
