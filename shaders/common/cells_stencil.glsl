// What the cell-wise kernel's passes read of a face's stencil with inertia (common/stencil.glsl): the
// flows of the substep before (common/flows_in.glsl's FLOW_*_IN, bound as the including pass says) and,
// with STORED_VELOCITIES, the faces' velocities cells_velocity.comp stored for the substep. Needs
// common/water.glsl and common/model.glsl (INERTIA), and depth_at(c).
#ifndef STORED_VELOCITIES
#define STORED_VELOCITIES 0
#endif

// Whether face f of axis k is one of the grid's (the flows' layout, common/water.glsl).
bool has_face(int k, ivec2 f) {
    ivec2 n = u_size;
    if (k == 0) return f.x >= 0 && f.x <= n.x && f.y >= 0 && f.y < n.y;
    if (k == 1) return f.x >= 0 && f.x < n.x && f.y >= 0 && f.y <= n.y;
#if HEX
    return f.x >= 0 && f.x <= n.x && f.y >= 0 && f.y <= n.y;
#else
    return false;
#endif
}

// The flow of face f of axis k, 0 where there is no such face.
float flow_of(int k, ivec2 f) {
    if (!has_face(k, f)) return 0.0;
#if HEX
    if (k == 2) return FLOW_Z_IN(index_z(f));
#endif
    return k == 0 ? FLOW_X_IN(index_x(f)) : FLOW_Y_IN(index_y(f));
}

#if STORED_VELOCITIES
#if BUFFER_VIEWS
layout(binding = B_VELOCITY_X_VIEW, r32f) uniform restrict readonly imageBuffer u_velocity_x;
layout(binding = B_VELOCITY_Y_VIEW, r32f) uniform restrict readonly imageBuffer u_velocity_y;
#define VELOCITY_X(i) imageLoad(u_velocity_x, i).r
#define VELOCITY_Y(i) imageLoad(u_velocity_y, i).r
#if HEX
layout(binding = B_VELOCITY_Z_VIEW, r32f) uniform restrict readonly imageBuffer u_velocity_z;
#define VELOCITY_Z(i) imageLoad(u_velocity_z, i).r
#endif
#else
layout(std430, binding = B_VELOCITY_X) restrict readonly buffer VelocityX { float u_velocity_x[]; };
layout(std430, binding = B_VELOCITY_Y) restrict readonly buffer VelocityY { float u_velocity_y[]; };
#define VELOCITY_X(i) u_velocity_x[i]
#define VELOCITY_Y(i) u_velocity_y[i]
#if HEX
layout(std430, binding = B_VELOCITY_Z) restrict readonly buffer VelocityZ { float u_velocity_z[]; };
#define VELOCITY_Z(i) u_velocity_z[i]
#endif
#endif

// The velocity of face f of axis k as cells_velocity.comp stored it, 0 where there is no such face.
float stored_velocity(int k, ivec2 f) {
    if (!has_face(k, f)) return 0.0;
#if HEX
    if (k == 2) return VELOCITY_Z(index_z(f));
#endif
    return k == 0 ? VELOCITY_X(index_x(f)) : VELOCITY_Y(index_y(f));
}
#define VELOCITY_OF(k, f) stored_velocity(k, f)
#endif

#include "common/stencil.glsl"
